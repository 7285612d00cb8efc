package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/record"
)

// startSimProcess runs `tritontop sim` on free ports, under prefix (e.g. taskset)
// when given, and returns its gRPC and metrics addresses. The simulator is
// stopped when the test ends.
func startSimProcess(t *testing.T, bin string, prefix []string, args ...string) (grpc, metrics string) {
	t.Helper()
	argv := append(append(prefix, bin, "sim", "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0",
		"--metrics-interval-ms", "1000"), args...)
	cmd := testproc.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatalf("start the simulator: %v", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "gRPC":
			grpc = f[1]
		case len(f) == 2 && f[0] == "metrics":
			metrics = f[1]
		case strings.Contains(sc.Text(), "ready"):
			go func() { // keep the pipe drained
				for sc.Scan() {
				}
			}()
			return grpc, metrics
		}
	}
	t.Fatalf("the simulator never said it was ready (gRPC %q, metrics %q)", grpc, metrics)
	return "", ""
}

// TestClientBoundInTmux drives the identity model, which costs the server
// next to nothing, at 64 in flight with client and simulator on one core:
// the client's own work is the limit. The dashboard must name the client as
// the bottleneck and say where the time goes.
func TestClientBoundInTmux(t *testing.T) {
	t.Parallel()
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not installed (util-linux)")
	}
	bin := buildBinary(t)
	core := []string{taskset, "-c", "0"}
	grpc, metrics := startSimProcess(t, bin, core)
	tm := newTerminal(t, 120, 40, strings.Join(core, " ")+" "+bin+" -m identity --shape INPUT0:16 -u "+grpc+
		" --metrics-url http://"+metrics+"/metrics --concurrency 64")
	screen := tm.waitHeader(regexp.MustCompile(`⚠ bottleneck: [^·]*client`), 40*time.Second)
	// The finding behind it: time outside Triton, or the client's CPU.
	if !strings.Contains(screen, "⚠ time outside Triton") && !strings.Contains(screen, "⚠ client") {
		t.Errorf("no warning line says why:\n%s", screen)
	}
	if !strings.Contains(screen, "outside") {
		t.Errorf("the latency pane does not show the time outside Triton:\n%s", screen)
	}
	tm.quitOK()
}

// TestServerBoundInTmux slows every execution of the simulator's simple
// model by 20 ms (its fault injection) under 64 requests in flight: eight
// a batch, they queue in Triton far longer than they compute, while the
// client idles. The dashboard must name the server's queue.
func TestServerBoundInTmux(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	grpc, metrics := startSimProcess(t, bin, nil, "--spike-rate", "1", "--spike-delay", "20ms")
	tm := newTerminal(t, 120, 40, bin+" -m simple -u "+grpc+" --metrics-url http://"+metrics+"/metrics --concurrency 64")
	// A host kept busy by other work may be named too ("bottleneck:
	// client CPU, server queue"): the server's queue must be among them.
	screen := tm.waitHeader(regexp.MustCompile(`⚠ bottleneck: [^·]*server queue`), 40*time.Second)
	if !strings.Contains(screen, "⚠ server queueing: requests wait") {
		t.Errorf("no warning line says why:\n%s", screen)
	}
	tm.quitOK()
}

// TestPlanInTheDashboard runs tritontop plan on a terminal: the dashboard
// shows the search in its sweep pane while it runs, the run ends by itself
// when the search is done, and the run file holds the plan.
func TestPlanInTheDashboard(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	runFile := filepath.Join(t.TempDir(), "plan.jsonl")
	// A demo GPU of a fixed speed and an SLO well above its batch time, so
	// that a host busy with other tests still finds a level that meets it
	// (with the host-sized GPU and p99:100ms, a calibration made on a busy
	// host left no level under the SLO). Windows of 500 ms and up to five
	// of them: a 200 ms window holds about ten requests at the lowest rate
	// tried, one more or less is the 10% that stability allows, and beside
	// two CPU hogs three such windows once left no level stable. The
	// capacity is measured once (--repeat 1): the repeats are the
	// session's tests' to check.
	tm := newTerminal(t, 120, 40, bin+" plan --demo --demo-gpu-rate 200 --slo p99:2s --target-rate 3000 -p 500 --tick 100ms --max-trials 5 --repeat 1 --allow-client-bound --record "+runFile)
	tm.waitHeader(regexp.MustCompile(`step \d+/\d+`), 40*time.Second)
	// The header names the step before the first tick; the sweep pane
	// draws with the first tick (a busy host once took longer than the
	// first look).
	screen, _ := tm.waitFor(20*time.Second, func() {}, func(s string) bool { return strings.Contains(s, "Sweep · step") })
	if !strings.Contains(screen, "Sweep · step") || !strings.Contains(screen, "SIMULATED") {
		t.Errorf("the dashboard shows no sweep pane, or does not say the numbers are simulated:\n%s", screen)
	}
	var run *record.Run
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if r, err := record.ReadAll(runFile); err == nil && r.Summary != nil {
			run = r
			break
		}
	}
	if run == nil {
		t.Fatalf("the plan did not end by itself within 3 minutes:\n%s", tm.capture())
	}
	if p := run.Summary.Plan; p == nil || p.Replicas < 1 || p.Capacity <= 0 || run.Summary.Search == nil ||
		run.Summary.Search.Mode != "capacity" {
		t.Fatalf("the run file holds no plan: search %+v plan %+v", run.Summary.Search, p)
	}
	if got, want := len(run.Steps), len(run.Summary.Steps); got != want || got < 2 {
		t.Errorf("%d steps in the run file, %d in its summary; want the same, at least the probe and one level", got, want)
	}
	tm.quitOK()
}
