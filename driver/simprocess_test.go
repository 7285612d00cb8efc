package driver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/sim"
)

// simProcessEnv, set in the environment of this test binary run again,
// makes TestSimProcess serve the demo repository until its stdin closes.
const simProcessEnv = "TRITONTOP_DRIVER_TEST_SIM"

// startSimProcess runs the simulator in a process of its own (this test
// binary again, running TestSimProcess), as a server is: the driver then
// shares no Go runtime (scheduler, collector) with it, only the host's
// cores. It returns the simulator's gRPC address; the process ends with
// the test.
func startSimProcess(t testing.TB) string {
	t.Helper()
	cmd := testproc.Command(os.Args[0], "-test.run=^TestSimProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), simProcessEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the simulator process: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "grpc "); ok {
				addr <- a
				break
			}
		}
		close(addr)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("the simulator process ended without saying its address")
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("the simulator process did not start within 30 s")
	}
	return ""
}

// TestSimProcess is the simulator process of startSimProcess; run by the
// suite itself, it skips.
func TestSimProcess(t *testing.T) {
	if os.Getenv(simProcessEnv) == "" {
		t.Skip("the simulator process of startSimProcess, run only by it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("grpc %s\n", s.GRPCAddr())
	io.Copy(io.Discard, os.Stdin) // until the test that started it ends
}
