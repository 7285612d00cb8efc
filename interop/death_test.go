package interop_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
)

// deathChild makes the test binary a process that starts a server, says
// its PID and waits to be killed.
const deathChild = "TRITONTOP_INTEROP_DEATH_CHILD"

// TestServerDiesWithTestProcess kills (SIGKILL, as go test's timeout
// does) a test process whose server is running: the server dies with it,
// with no t.Cleanup run.
func TestServerDiesWithTestProcess(t *testing.T) {
	if os.Getenv(deathChild) != "" {
		srv := interop.Start(t, interop.Options{Models: []string{identity}})
		fmt.Printf("server pid %d\n", srv.PID())
		select {} // until killed
	}
	t.Parallel()
	interop.Locate(t)
	begin := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTestProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), deathChild+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "server pid "); ok {
			pid, _ = strconv.Atoi(v)
			break
		}
	}
	if pid == 0 {
		t.Fatal("the child test said no server pid")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server (pid %d) outlived its test process by 30 s", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the server died with its test process; wall time %v", time.Since(begin).Round(time.Millisecond))
}

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
