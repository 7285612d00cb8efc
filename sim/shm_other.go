//go:build !unix

package sim

// mapSharedMemory fails where there is no POSIX shared memory.
func mapSharedMemory(key string, _, _ uint64) ([]byte, func() error, uint64, error) {
	return nil, nil, 0, openShmError(key)
}
