//go:build unix

package triton

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// shmDir is where POSIX shared-memory objects live: shm_open("/name")
// opens /dev/shm/name on Linux.
const shmDir = "/dev/shm"

// SystemRegion is a POSIX shared-memory object this process created and
// mapped, as shm_open, ftruncate and mmap make one.
type SystemRegion struct {
	// Key is the object's name as shm_open takes it ("/name").
	Key  string
	mem  []byte
	path string
}

// CreateSystemRegion creates the shared-memory object key ("/name", which
// must not exist yet) of size bytes and maps it.
func CreateSystemRegion(key string, size int) (*SystemRegion, error) {
	name := strings.TrimPrefix(key, "/")
	if name == "" || strings.Contains(name, "/") || size <= 0 {
		return nil, fmt.Errorf("shared-memory region %s of %d bytes: want a key /NAME and a size above 0", textsafe.Quote(key), size)
	}
	path := filepath.Join(shmDir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create shared-memory region %s: %w", key, err)
	}
	defer f.Close()
	fail := func(err error) (*SystemRegion, error) {
		os.Remove(path)
		return nil, fmt.Errorf("create shared-memory region %s: %w", key, err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		return fail(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fail(err)
	}
	return &SystemRegion{Key: key, mem: mem, path: path}, nil
}

// Bytes is the region's memory.
func (r *SystemRegion) Bytes() []byte { return r.mem }

// Unlink removes the object's name, so that nothing is left in /dev/shm
// whatever becomes of this process; the memory stays mapped here and in
// every process that mapped it (a server that registered it) until each
// unmaps it. Unlinking twice is no error.
func (r *SystemRegion) Unlink() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unlink shared-memory region %s: %w", r.Key, err)
	}
	return nil
}

// Close unlinks the object and unmaps it.
func (r *SystemRegion) Close() error {
	err := r.Unlink()
	if r.mem != nil {
		if uerr := syscall.Munmap(r.mem); uerr != nil && err == nil {
			err = fmt.Errorf("unmap shared-memory region %s: %w", r.Key, uerr)
		}
		r.mem = nil
	}
	return err
}
