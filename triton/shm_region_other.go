//go:build !unix

package triton

import "errors"

// SystemRegion is a POSIX shared-memory object; there are none here.
type SystemRegion struct{ Key string }

// CreateSystemRegion fails: this system has no POSIX shared memory.
func CreateSystemRegion(key string, size int) (*SystemRegion, error) {
	return nil, errors.New("system shared memory needs a Unix system")
}

// Bytes is the region's memory.
func (r *SystemRegion) Bytes() []byte { return nil }

// Unlink removes the object's name.
func (r *SystemRegion) Unlink() error { return nil }

// Close unlinks and unmaps the object.
func (r *SystemRegion) Close() error { return nil }
