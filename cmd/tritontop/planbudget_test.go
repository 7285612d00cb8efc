package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// hostBusy is the share of the host's CPU time busy over d, from
// /proc/stat: what others run on the machine before a test starts.
func hostBusy(t *testing.T, d time.Duration) float64 {
	t.Helper()
	read := func() (busy, total float64) {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			t.Skipf("no /proc/stat: %v", err)
		}
		f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
		for i, v := range f[1:] {
			x, _ := strconv.ParseFloat(v, 64)
			total += x
			if i != 3 && i != 4 { // idle, iowait
				busy += x
			}
		}
		return busy, total
	}
	b0, t0 := read()
	time.Sleep(d)
	b1, t1 := read()
	if t1 == t0 {
		return 0
	}
	return (b1 - b0) / (t1 - t0)
}

// needQuietHost skips a test that measures where the time goes when the
// host is already busy with other work: the client would be bound by
// others' load, which is what the test must not see.
//
// Such tests are named TestQuiet…: .ci/run runs them alone, with
// TRITONTOP_QUIET_PASS=1, after the suite and before its stress pass; in a
// plain `go test ./...` other packages' tests run beside them, so there they
// skip.
func needQuietHost(t *testing.T) {
	t.Helper()
	if os.Getenv("TRITONTOP_QUIET_PASS") == "" {
		t.Skip("needs the host to itself: run alone by .ci/run's quiet pass (TRITONTOP_QUIET_PASS=1 go test -run '^TestQuiet' ./cmd/tritontop)")
	}
	if b := hostBusy(t, time.Second); b > 0.5 {
		t.Skipf("the host is %.0f%% busy before the test: a measurement of where tritontop's time goes needs a host not loaded by others", 100*b)
	}
}

// planRun runs the binary with args, XDG_CACHE_HOME at cache (the demo's
// calibration), and returns the exit code, stdout and stderr.
func planRun(t *testing.T, bin, cache string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// planSummary parses a --json summary with its plan.
func planSummary(t *testing.T, stdout, stderr string) record.Summary {
	t.Helper()
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Plan == nil {
		t.Fatalf("no plan in the summary (%v): %s", err, lastLines(stderr, 8))
	}
	return sum
}

// serverLimited reports whether the diagnosis of the plan's capacity level
// and of the failing level above it name the server (queue or GPU) and
// never the client.
func serverLimited(sum record.Summary) (bool, string) {
	p := sum.Plan
	var why []string
	server := false
	for _, st := range sum.Steps {
		if !st.Load.Open() || st.Load.Rate < p.CapacityLevel.Rate {
			continue
		}
		for _, f := range st.Diagnosis {
			why = append(why, fmt.Sprintf("%s: %s", st.Load, f.Verdict))
			switch f.Verdict {
			case stats.ClientBound, stats.FallingBehind:
				return false, strings.Join(why, "; ")
			case stats.Queueing, stats.ComputeBound:
				server = true
			}
		}
	}
	return server, strings.Join(why, "; ")
}

// TestQuietPlanRepeatable is issue 20's must-show: plan --demo three times
// on this machine, as a user runs it (the first run calibrates the demo GPU
// to the host, the others reuse it): capacities within ±10% of their
// median, replica counts within 1, the limit the server's, and every
// output says the server was simulated. Each plan is held to what it
// prints (checkDemoPlan), and the first one's capacity, driven as a steady
// open loop on the same GPU, holds the SLO where 1.3 times it does not
// (checkSteady). On a host loaded by others the client's lateness bends
// every latency, so CI's quiet pass runs it alone.
func TestQuietPlanRepeatable(t *testing.T) {
	if testing.Short() {
		t.Skip("three plans of about a minute each")
	}
	needQuietHost(t)
	bin, cache := buildBinary(t), t.TempDir()
	var caps []float64
	var reps []int
	for i := range 3 {
		begin := time.Now()
		code, stdout, stderr := planRun(t, bin, cache, "plan", "--demo", "--slo", "p99:500ms", "--target-rate", "1000",
			"-p", "1000", "--json")
		took := time.Since(begin).Round(time.Second)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", i+1, code, lastLines(stderr, 8))
		}
		sum := planSummary(t, stdout, stderr)
		p := sum.Plan
		t.Logf("run %d in %v: %.1f req/s (%s), %d replicas; %s; limit %s", i+1, took, p.Capacity, p.CapacityBasis, p.Replicas, p.DemoGPU, p.Limit)
		if ok, why := serverLimited(sum); !ok {
			t.Errorf("run %d: the limit is not the server's: %s", i+1, why)
		}
		var text strings.Builder
		if err := report.WritePlan(&text, p); err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]string{"text": text.String(), "HPA": p.HPA, "stderr": stderr} {
			if !strings.Contains(s, "simulator") && !strings.Contains(s, "demo GPU sized") {
				t.Errorf("run %d: the %s does not say the server was simulated", i+1, what)
			}
		}
		if !p.Simulated || p.DemoGPU == "" {
			t.Errorf("run %d: the plan's JSON does not say simulated", i+1)
		}
		if strings.Contains(stderr, "client host near full") {
			t.Errorf("run %d: the client host was near full:\n%s", i+1, lastLines(stderr, 20))
		}
		checkDemoPlan(t, sum, 1000, 500*time.Millisecond)
		if i == 0 {
			checkSteady(t, bin, cache, sum, 500*time.Millisecond)
		}
		caps, reps = append(caps, p.Capacity), append(reps, p.Replicas)
	}
	sorted := slices.Clone(caps)
	slices.Sort(sorted)
	med := sorted[1]
	for _, c := range caps {
		if math.Abs(c/med-1) > 0.10 {
			t.Errorf("capacities %v: %v is more than 10%% from their median %v", caps, c, med)
		}
	}
	if slices.Max(reps)-slices.Min(reps) > 1 {
		t.Errorf("replica counts %v differ by more than 1", reps)
	}
}

// TestPlanRefusesClientBoundMeasurement pins tritontop to one core that a
// CPU hog keeps busy, against the simulator's full-speed GPU: the client is
// the limit, and the plan must say so, print no replicas and no
// autoscaler, and exit 99.
func TestPlanRefusesClientBoundMeasurement(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a plan of about half a minute")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset (util-linux) to pin the client to a core")
	}
	bin, cache := buildBinary(t), t.TempDir()
	hog := exec.Command("taskset", "-c", "0", "sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	code, stdout, stderr := planRun(t, "taskset", cache, "-c", "0", bin, "plan", "--demo", "--demo-gpu-rate", "full",
		"--slo", "p99:100ms", "--target-rate", "5000", "-p", "1000", "--repeat", "1", "--json")
	if code != exitSLO {
		t.Fatalf("exit %d, want %d (a refused plan): %s", code, exitSLO, lastLines(stderr, 8))
	}
	sum := planSummary(t, stdout, stderr)
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
	if !strings.Contains(stderr, "no replicas planned") || !strings.Contains(stderr, "the client limited the measurement") {
		t.Errorf("stderr does not say why:\n%s", lastLines(stderr, 4))
	}
	var text strings.Builder
	if err := report.WritePlan(&text, p); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); !strings.Contains(s, "NO REPLICAS PLANNED") || strings.Contains(s, "HorizontalPodAutoscaler") || strings.Contains(s, "replicas on") {
		t.Errorf("the printed plan:\n%s", s)
	}
}

// TestQuietDemoDefaultIsServerBound: tritontop demo at its default load, on a
// host not loaded by others, is limited by the server (queue or GPU) and
// never by the client: its GPU is sized to what the host drives.
func TestQuietDemoDefaultIsServerBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the demo for 10 s")
	}
	needQuietHost(t)
	bin, cache := buildBinary(t), t.TempDir()
	code, stdout, stderr := planRun(t, bin, cache, "demo", "--headless", "--duration", "10s", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, lastLines(stderr, 5))
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "demo GPU sized to this host") {
		t.Errorf("the demo does not say how its GPU was sized:\n%s", lastLines(stderr, 3))
	}
	server := false
	for _, f := range sum.Diagnosis {
		switch f.Verdict {
		case stats.ClientBound, stats.FallingBehind:
			t.Errorf("the demo's default load is client-bound: %s", f.Message)
		case stats.Queueing, stats.ComputeBound:
			server = true
		}
	}
	if !server {
		t.Errorf("the diagnosis names neither the queue nor the GPU: %+v", sum.Diagnosis)
	}
}
