//go:build !linux

package interop

import "syscall"

// dieWithParent has no Pdeathsig to set off Linux, where Locate skips
// every test anyway.
func dieWithParent() *syscall.SysProcAttr { return nil }
