//go:build unix

package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// shmDir is where POSIX shared-memory objects live: shm_open("/name")
// opens /dev/shm/name on Linux.
const shmDir = "/dev/shm"

// mapSharedMemory maps byteSize bytes from offset of the POSIX
// shared-memory object key, read-write and shared, and returns the object's
// size. The errors are Triton's.
func mapSharedMemory(key string, offset, byteSize uint64) (mem []byte, unmap func() error, size uint64, err error) {
	name := strings.TrimLeft(key, "/")
	if strings.Contains(name, "/") {
		return nil, nil, 0, openShmError(key)
	}
	f, err := os.OpenFile(filepath.Join(shmDir, name), os.O_RDWR, 0)
	if err != nil {
		return nil, nil, 0, openShmError(key)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 0 {
		return nil, nil, 0, &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf("Invalid shared memory region: '%s'", textsafe.Bound(key))}
	}
	size = uint64(fi.Size())
	if offset+byteSize > size || offset+byteSize < offset {
		return nil, func() error { return nil }, size, nil
	}
	if byteSize == 0 {
		return []byte{}, func() error { return nil }, size, nil
	}
	// Triton maps from offset itself, and mmap refuses an offset that is
	// not a multiple of the page size (EINVAL, strerror's words).
	if offset%uint64(os.Getpagesize()) != 0 {
		return nil, nil, 0, fmt.Errorf("unable to process address space%s", "Invalid argument")
	}
	m, err := syscall.Mmap(int(f.Fd()), int64(offset), int(byteSize), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("unable to process address space%v", err)
	}
	return m, func() error { return syscall.Munmap(m) }, size, nil
}
