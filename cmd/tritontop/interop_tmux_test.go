package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
)

// TestDashboardOnRealTritonInTmux runs tritontop's dashboard in a real
// terminal against a real Triton (package interop's server, identity_int32
// at concurrency 4, recording), as a user would watch it:
//
//   - the header names the model with the config Triton serves (max batch
//     64, dynamic batching) and nothing says the numbers are simulated;
//   - the panes show throughput, Triton's queue time per request (its
//     statistics), and that the server reports no GPU (this Triton runs on
//     CPU);
//   - ↑ raises the concurrency to 5, and q exits with status 0;
//   - the run file holds both levels, and its counts are Triton's deltas
//     over the run: requests, inferences, executions, and the queue time
//     per request as perf_analyzer's formula gives it (Δns / Δcount, to the
//     nanosecond the run file's rounding allows).
//
// It skips where the Triton folder or tmux is missing.
func TestDashboardOnRealTritonInTmux(t *testing.T) {
	t.Parallel()
	const model = "identity_int32"
	srv := interop.Start(t, interop.Options{Models: []string{model}})
	bin := buildBinary(t)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	before := srv.Statistics(t, model)
	tm := newTerminal(t, 120, 40, bin+" -m "+model+" -u "+srv.GRPC+" --shape INPUT0:16 --metrics-url "+srv.MetricsURL()+
		" --concurrency 4 --tick 200ms --record "+file)
	screen, ok := tm.waitFor(30*time.Second, func() {}, func(s string) bool {
		return firstNumber(inferRe, s) > 0 && firstNumber(queueRe, s) > 0
	})
	if !ok {
		t.Fatalf("the dashboard never showed throughput and Triton's queue time:\n%s", screen)
	}
	for _, want := range []string{model + " · max batch 64 · dynamic batching", "Triton statistics", "no GPU metrics (the server reports no GPU)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the dashboard does not show %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "SIMULATED") {
		t.Errorf("the dashboard calls a real server's numbers simulated:\n%s", screen)
	}
	tm.keys("Up")
	tm.waitHeader(regexp.MustCompile(`concurrency 5`), 10*time.Second)
	tm.quitOK()
	d := interop.Delta(before, srv.Statistics(t, model))
	run, err := record.ReadAll(file)
	if err != nil || run.Summary == nil {
		t.Fatalf("the run file: %v", err)
	}
	checkRunAgainstTriton(t, run, d)
	levels := map[int]bool{}
	for _, st := range run.Summary.Steps {
		levels[st.Load.Concurrency] = true
	}
	if !levels[4] || !levels[5] {
		t.Errorf("the run file's levels: %v; want concurrency 4 and 5", levels)
	}
}

// checkRunAgainstTriton holds a run file's counts and queue time to
// Triton's deltas over the run.
func checkRunAgainstTriton(t *testing.T, run *record.Run, d interop.ModelStats) {
	t.Helper()
	sum := run.Summary
	sv, in := sum.Server, d.Inference
	t.Logf("tritontop: %d requests, server %d/%d/%d, queue %v; Triton: %v", sum.Client.Successes, sv.SuccessCount, sv.InferenceCount, sv.ExecutionCount, sv.Queue, d)
	if in.Success.Count == 0 || uint64(sum.Client.Successes) != in.Success.Count || uint64(sv.SuccessCount) != in.Success.Count ||
		uint64(sv.InferenceCount) != d.InferenceCount || uint64(sv.ExecutionCount) != d.ExecutionCount || sum.Client.Errors != 0 {
		t.Errorf("tritontop: %d requests (%d errors), server %d requests, %d inferences, %d executions; Triton's deltas %d, %d, %d",
			sum.Client.Successes, sum.Client.Errors, sv.SuccessCount, sv.InferenceCount, sv.ExecutionCount,
			in.Success.Count, d.InferenceCount, d.ExecutionCount)
	}
	if q := d.Averages().Queue; uint64(sv.Queue) > q || uint64(sv.Queue)+1 < q {
		t.Errorf("queue per request: tritontop %d ns, Triton's deltas %d ns", sv.Queue, q)
	}
}
