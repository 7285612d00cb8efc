package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
)

// childrenHelperEnv makes TestHelperStartsChildren run: it is a part of
// TestKilledTestLeavesNoChild, run in a test process of its own.
const childrenHelperEnv = "TRITONTOP_TEST_START_CHILDREN"

// TestHelperStartsChildren starts what the suite's tests start (two CPU
// hogs, as the stress tests do, and a simulator process of the binary),
// prints their process ids and waits to be killed.
func TestHelperStartsChildren(t *testing.T) {
	if os.Getenv(childrenHelperEnv) == "" {
		t.Skip("a part of TestKilledTestLeavesNoChild")
	}
	pids := testproc.CPUHogs(t, 2)
	sim := testproc.Command(os.Getenv(childrenHelperEnv), "sim", "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0")
	if err := testproc.Start(t, sim); err != nil {
		t.Fatal(err)
	}
	pids = append(pids, sim.Process.Pid)
	fmt.Printf("children %s\n", strings.Trim(fmt.Sprint(pids), "[]"))
	time.Sleep(time.Hour)
}

// TestKilledTestLeavesNoChild kills a test process with SIGKILL (as a
// person does, and as go test's -timeout ends one that ran past it) while
// its test runs two CPU hogs and a simulator: none of them is left running.
func TestKilledTestLeavesNoChild(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	helper := testproc.Command(os.Args[0], "-test.run", "^TestHelperStartsChildren$", "-test.v")
	helper.Env = append(os.Environ(), childrenHelperEnv+"="+bin)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := testproc.Start(t, helper); err != nil {
		t.Fatal(err)
	}
	var children []int
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if rest, ok := strings.CutPrefix(sc.Text(), "children "); ok {
			for _, f := range strings.Fields(rest) {
				pid, _ := strconv.Atoi(f)
				children = append(children, pid)
			}
			break
		}
	}
	if len(children) != 3 {
		t.Fatalf("the helper test started %v, want two hogs and a simulator", children)
	}
	for _, pid := range children {
		if !running(pid) {
			t.Fatalf("child %d is not running before the kill", pid)
		}
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range children {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("child %d still runs 10 s after its test process was killed", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
