package session_test

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/pb"
)

// allStats is every model's cumulative statistics on the simulator, by
// name (each model has one version here).
func allStats(t *testing.T, srv *sim.Server) map[string]*pb.ModelStatistics {
	t.Helper()
	resp, err := srv.Engine().ModelStatistics("", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pb.ModelStatistics{}
	for _, ms := range resp.GetModelStats() {
		out[ms.GetName()] = ms
	}
	return out
}

// paDelta is what perf_analyzer takes of a model between two readings:
// the deltas of its counters.
type paDelta struct {
	success, queue, cin, cinf, cout [2]uint64 // count, ns
	infer, exec                     uint64
}

func deltaOf(before, after *pb.ModelStatistics) paDelta {
	sub := func(a, b *pb.StatisticDuration) [2]uint64 {
		return [2]uint64{b.GetCount() - a.GetCount(), b.GetNs() - a.GetNs()}
	}
	a, b := before.GetInferenceStats(), after.GetInferenceStats()
	return paDelta{
		success: sub(a.GetSuccess(), b.GetSuccess()), queue: sub(a.GetQueue(), b.GetQueue()),
		cin: sub(a.GetComputeInput(), b.GetComputeInput()), cinf: sub(a.GetComputeInfer(), b.GetComputeInfer()),
		cout:  sub(a.GetComputeOutput(), b.GetComputeOutput()),
		infer: after.GetInferenceCount() - before.GetInferenceCount(),
		exec:  after.GetExecutionCount() - before.GetExecutionCount(),
	}
}

// paAvg is perf_analyzer's average: Δns / Δcount, integer division, 0
// without a count (here in ns, not yet in µs).
func paAvg(d [2]uint64) uint64 {
	if d[0] == 0 {
		return 0
	}
	return d[1] / d[0]
}

// paEnsemble is perf_analyzer's account of an ensemble from the deltas of
// its composing models (inference_profiler.cc GetTotalEnsembleDurations):
// queue = Σ each step's Δqueue.ns/Δqueue.count, compute = Σ each step's
// (Δcompute_input.ns + Δcompute_infer.ns + Δcompute_output.ns) /
// Δcompute_input.count, overhead = ensemble request − queue − compute,
// floored at 0. In ns here: perf_analyzer divides by count × 1000.
func paEnsemble(ensemble paDelta, steps []paDelta) (queue, compute, overhead uint64) {
	for _, s := range steps {
		queue += paAvg(s.queue)
		compute += paAvg([2]uint64{s.cin[0], s.cin[1] + s.cinf[1] + s.cout[1]})
	}
	req := paAvg(ensemble.success)
	if req > queue+compute {
		overhead = req - queue - compute
	}
	return queue, compute, overhead
}

// near reports whether got is want within tol ns.
func near(got time.Duration, want uint64, tol int64) bool {
	d := int64(got) - int64(want)
	return d >= -tol && d <= tol
}

// TestSessionPipelineSteps runs the demo's resnet50_pipeline (preprocess
// on the CPU, then resnet50) and reads every model's statistics on the
// simulator before and after: each step's counts summed over the run
// file's ticks are its own statistics' deltas, and the summary's queue,
// compute and overhead of the pipeline are perf_analyzer's, computed from
// those deltas (to the few ns the ticks' averages round by).
func TestSessionPipelineSteps(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	const pipeline = "resnet50_pipeline"
	steps := []string{"preprocess", "resnet50"}
	before := allStats(t, srv)
	c := quickConfig(srv, pipeline)
	c.Concurrency, c.Duration = 4, 800*time.Millisecond
	run, _ := recordRun(t, c)
	after := allStats(t, srv)

	sums := make([]paDelta, len(steps))
	for _, s := range run.Snapshots {
		for _, sv := range []*stats.ServerStats{&s.Server, s.ServerLate} {
			if sv == nil || !sv.Available || sv.Reset {
				continue
			}
			if len(sv.Steps) != len(steps) {
				t.Fatalf("tick %d: %d steps, want %v", s.Seq, len(sv.Steps), steps)
			}
			for i, st := range sv.Steps {
				if st.Model != steps[i] || st.Version != "1" {
					t.Fatalf("tick %d: step %d is %s version %q, want %s version 1", s.Seq, i, st.Model, st.Version, steps[i])
				}
				sums[i].success[0] += uint64(st.SuccessCount)
				sums[i].exec += uint64(st.ExecutionCount)
				sums[i].infer += uint64(st.InferenceCount)
			}
		}
	}
	deltas := make([]paDelta, len(steps))
	for i, name := range steps {
		deltas[i] = deltaOf(before[name], after[name])
		d, got := deltas[i], sums[i]
		if d.success[0] == 0 || got.success[0] != d.success[0] || got.exec != d.exec || got.infer != d.infer {
			t.Errorf("%s: ticks count %d successes, %d executions, %d inferences; its statistics %d, %d, %d",
				name, got.success[0], got.exec, got.infer, d.success[0], d.exec, d.infer)
		}
	}
	pd := deltaOf(before[pipeline], after[pipeline])
	q, comp, ovh := paEnsemble(pd, deltas)
	sv := run.Summary.Server
	t.Logf("perf_analyzer's: queue %d ns, compute %d ns, overhead %d ns; tritontop's: %v, %v, %v",
		q, comp, ovh, sv.Queue, sv.Compute(), sv.Overhead)
	// Each step's average over the run is the ticks' averages (whole ns)
	// weighted by their counts: under 2 ns off per average, 3 averages of
	// compute per step.
	tol := int64(2 * 4 * len(steps))
	if !near(sv.Queue, q, tol) || !near(sv.Compute(), comp, tol) || !near(sv.Overhead, ovh, 2*tol) {
		t.Errorf("summary: queue %d, compute %d, overhead %d ns; perf_analyzer's %d, %d, %d",
			sv.Queue, sv.Compute(), sv.Overhead, q, comp, ovh)
	}
	if sv.Own == nil || !near(sv.Own.Queue, paAvg(pd.queue), 2) {
		t.Errorf("summary's own times %+v, want the ensemble's own queue %d ns", sv.Own, paAvg(pd.queue))
	}
	if q == 0 || comp == 0 || uint64(sv.Compute()) <= uint64(sv.Own.Queue) {
		t.Errorf("the pipeline's steps took no time: queue %d, compute %d", q, comp)
	}
	checkStepsSummary(t, run.Summary, steps)
}

// checkStepsSummary checks that the summary and its steps name the
// composing models.
func checkStepsSummary(t *testing.T, sum *record.Summary, steps []string) {
	t.Helper()
	if len(sum.Server.Steps) != len(steps) {
		t.Fatalf("summary has %d steps, want %v", len(sum.Server.Steps), steps)
	}
	for i, st := range sum.Server.Steps {
		if st.Model != steps[i] || st.SuccessCount == 0 {
			t.Errorf("summary step %d: %s with %d successes", i, st.Model, st.SuccessCount)
		}
	}
	for _, step := range sum.Steps {
		if step.Server.Available && len(step.Server.Steps) != len(steps) {
			t.Errorf("load step %s: %d composing models", step.Load, len(step.Server.Steps))
		}
	}
}
