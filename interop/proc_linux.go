package interop

import "syscall"

// dieWithParent makes a child process get SIGKILL when the test process
// dies, also when go test kills it.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
