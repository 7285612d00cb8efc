package session_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// planClientBoundEnv, set to a directory, makes
// TestStressPlanRefusesClientBoundMeasurement the plan itself, in a process of
// its own that the parent test started on one core: it writes the plan's
// standard output, standard error and exit status there.
const planClientBoundEnv = "TRITONTOP_TEST_PLAN_CLIENT_BOUND_OUT"

// planClientBoundChild plans the demo's simple model (small tensors, 50 µs
// batches) at its simulator's full speed, as `tritontop plan --demo
// --demo-gpu-rate full -m simple --slo p99:100ms --target-rate 5000
// --repeat 1 --json` does, in 500 ms windows of 100 ms ticks, at most 3 a
// level, and writes what it printed into dir. (A window must hold 50
// requests within ten windows' time, so 500 ms windows measure rates down
// to 10/s: under the race detector, on half a core, the probe reaches 50.) (The demo's resnet50 sends
// 600 KB a request: under the race detector, on half a core, not one of
// the probe's finished within its windows.)
func planClientBoundChild(t *testing.T, dir string) {
	c := session.Defaults()
	pc := session.DefaultPlan()
	pc.TargetRate, pc.Budget.Repeat = 5000, 1
	c.Plan, c.SLO.Specs, c.Model = &pc, []string{"p99:100ms"}, "simple"
	c.Demo = &session.DemoConfig{GPURate: -1, CacheDir: dir}
	c.Headless, c.JSON = true, true
	c.Tick, c.MeasurementIntervalMS, c.MaxTrials = quickTick, 500, 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := session.Run(ctx, c, &stdout, &stderr)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for name, data := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "error": msg,
		"code": strconv.Itoa(exitCode(err))} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// planFirstCPU is the first CPU this process may run on.
func planFirstCPU(t *testing.T) int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skipf("no CPU affinity: %v", err)
	}
	for cpu := range 1024 {
		if set.IsSet(cpu) {
			return cpu
		}
	}
	t.Skip("no CPU in this process's affinity")
	return 0
}

// planStartOnCPU starts args pinned to cpu by taskset; the process dies
// with the test process (Pdeathsig) and is killed when the test ends.
func planStartOnCPU(t *testing.T, cpu int, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("taskset", append([]string{"-c", strconv.Itoa(cpu)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestStressPlanRefusesClientBoundMeasurement plans a demo model at its
// simulator's full speed with the plan pinned to one core that a CPU hog keeps busy:
// the client is the limit, and the plan must say so, plan no replicas and
// no autoscaler, and end with a verdict (exit status 99). The plan runs in
// a process of its own, this test's binary started again: a CPU affinity
// and a hog sharing its one core are a process's, and would starve the
// package's other tests in this one. It is not parallel, so that the
// package's timing tests wait while its hog runs.
func TestStressPlanRefusesClientBoundMeasurement(t *testing.T) {
	if dir := os.Getenv(planClientBoundEnv); dir != "" {
		planClientBoundChild(t, dir)
		return
	}
	testenv.Stress(t) // it loads a core with a hog on purpose
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset (util-linux) to pin the plan to a core")
	}
	cpu, dir := planFirstCPU(t), t.TempDir()
	planStartOnCPU(t, cpu, nil, "sh", "-c", "while :; do :; done")
	child := planStartOnCPU(t, cpu, []string{planClientBoundEnv + "=" + dir},
		os.Args[0], "-test.run=^TestStressPlanRefusesClientBoundMeasurement$", "-test.count=1")
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the plan's process: %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the plan's process did not end within 3 minutes")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stdout, stderr, msg := read("stdout"), read("stderr"), read("error")
	if code := read("code"); code != "99" {
		t.Fatalf("exit status %s (%s), want 99 (a refused plan):\n%s", code, msg, stderr)
	}
	sum := planSummaryOf(t, stdout, stderr)
	p := sum.Plan
	t.Logf("refused: %s", p.Refused)
	if !p.ClientBound || p.Refused == "" || p.Replicas != 0 || p.MaxReplicas != 0 || p.HPA != "" || p.KEDA != "" {
		t.Errorf("a client-bound plan still planned: %+v", p)
	}
	// With a level that passed, its throughput is the lower bound; with
	// none, the failure is not blamed on the server.
	if !strings.Contains(p.Refused, "the client limited the measurement") || !strings.Contains(p.Refused, "--workers") ||
		(p.Capacity > 0) != strings.Contains(p.Refused, "lower bound") {
		t.Errorf("the refusal does not say why and what to do: %q", p.Refused)
	}
	// The error, the line the command line prints, says why too.
	if !strings.Contains(msg, "no replicas planned") || !strings.Contains(msg, "the client limited the measurement") || strings.Contains(msg, "\n") {
		t.Errorf("the error does not say why in one line: %q", msg)
	}
	var text strings.Builder
	if err := report.WritePlan(&text, p); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); !strings.Contains(s, "NO REPLICAS PLANNED") || strings.Contains(s, "HorizontalPodAutoscaler") || strings.Contains(s, "replicas on") {
		t.Errorf("the printed plan:\n%s", s)
	}
}
