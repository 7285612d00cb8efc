package testproc

import "syscall"

// setPdeathsig makes the kernel send SIGKILL to the process when the
// thread that started it dies: the test process's threads live as long as
// the process.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
