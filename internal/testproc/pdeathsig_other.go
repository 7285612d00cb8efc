//go:build !linux

package testproc

import "syscall"

// setPdeathsig does nothing where the kernel has no parent-death signal:
// there the test's Cleanup alone ends its processes.
func setPdeathsig(*syscall.SysProcAttr) {}
