// Package testproc starts the processes a test needs (a simulator of its
// own, the tritontop binary, a real Triton, CPU hogs) so that none of them
// outlives the test: each is ended when the test ends (t.Cleanup), and on
// Linux the kernel kills it too when the test process dies first, as when
// go test kills a test binary that ran past its -timeout, or a person kills
// it with SIGKILL (Pdeathsig).
package testproc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Command is exec.Command(name, args...) set up to die with the test
// process; Start it with Start, or run it with its own methods (then it
// still dies with the test process, and Cleanup ends it with the test).
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	dieWithParent(cmd)
	return cmd
}

// Start starts cmd and ends it when the test ends: SIGKILL, then a wait
// for it, unless it was waited for already. A test that waits for cmd
// itself does so within the test, not in a goroutine that may outlive it.
func Start(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
			}
		}
	})
	return nil
}

// CPUHogs starts n processes that each keep a core busy (a shell's empty
// loop, as on a shared CI runner) until the test ends, and returns their
// process ids.
func CPUHogs(t testing.TB, n int) []int {
	t.Helper()
	var pids []int
	for range n {
		cmd := Command("sh", "-c", "while :; do :; done")
		if err := Start(t, cmd); err != nil {
			t.Fatalf("start a CPU hog: %v", err)
		}
		pids = append(pids, cmd.Process.Pid)
	}
	return pids
}

// dieWithParent asks the kernel to kill cmd's process when its parent
// dies.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setPdeathsig(cmd.SysProcAttr)
}
