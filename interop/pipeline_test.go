package interop_test

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/stats"
)

// The real server's pipeline: an ensemble of preprocess then classifier
// (identity models, dynamic batching, one CPU instance each).
const pipeline = "pipeline"

var pipelineSteps = []string{"classifier", "preprocess"} // perf_analyzer's order: by name

// ensembleAccount is perf_analyzer's account of an ensemble over a window
// (TRITON.md, section h, and "How perf_analyzer turns two snapshots into
// averages"), from the deltas of the ensemble's and its composing models'
// statistics: the ensemble's own queue and compute are ignored; queue is
// the sum over the steps of Δqueue.ns / Δqueue.count, compute the sum of
// (Δcompute_input.ns + Δcompute_infer.ns + Δcompute_output.ns) /
// Δcompute_input.count, each an integer division (here in ns: perf_analyzer
// divides by count × 1000 for µs), and overhead the ensemble's
// Δsuccess.ns / Δsuccess.count less both, floored at 0.
func ensembleAccount(ensemble interop.ModelStats, steps []interop.ModelStats) (queue, compute, overhead uint64) {
	avg := func(ns, n uint64) uint64 {
		if n == 0 {
			return 0
		}
		return ns / n
	}
	for _, s := range steps {
		in := s.Inference
		queue += avg(in.Queue.NS, in.Queue.Count)
		compute += avg(in.ComputeInput.NS+in.ComputeInfer.NS+in.ComputeOutput.NS, in.ComputeInput.Count)
	}
	e := ensemble.Inference
	if req := avg(e.Success.NS, e.Success.Count); req > queue+compute {
		overhead = req - queue - compute
	}
	return queue, compute, overhead
}

// statsOf reads the pipeline's and each step's statistics.
func statsOf(t *testing.T, srv *interop.Server) (interop.ModelStats, []interop.ModelStats) {
	t.Helper()
	steps := make([]interop.ModelStats, len(pipelineSteps))
	for i, name := range pipelineSteps {
		steps[i] = srv.Statistics(t, name)
	}
	return srv.Statistics(t, pipeline), steps
}

// runPipeline runs tritontop in-process on the real server's pipeline at
// concurrency c for d, recorded to a file, and returns the run and what it
// printed.
func runPipeline(t *testing.T, srv *interop.Server, c int, d time.Duration) (*record.Run, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := session.Defaults()
	cfg.Record, cfg.Headless = file, true
	cfg.Tick, cfg.Duration, cfg.Drain = 200*time.Millisecond, d, 10*time.Second
	cfg.URL, cfg.Model, cfg.Concurrency = srv.GRPC, pipeline, c
	cfg.MetricsURLs, cfg.Shapes = []string{srv.MetricsURL()}, []string{"IN:16"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := session.Run(ctx, cfg, &stdout, &stderr); err != nil {
		t.Fatalf("tritontop: %v\n%s", err, stderr.String())
	}
	run, err := record.ReadAll(file)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v (summary %v)", err, run != nil && run.Summary != nil)
	}
	return run, stdout.String()
}

// warmUp sends the pipeline requests until a run of them finished a few:
// the server's first requests to an ensemble take far longer than the
// rest (seconds on a busy 2-core host), which a short measured run would
// read as a stall.
func warmUp(t *testing.T, srv *interop.Server) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		run, _ := runPipeline(t, srv, 1, 300*time.Millisecond)
		if run.Summary.Client.Successes >= 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipeline answered %d requests in its last warm-up run after a minute", run.Summary.Client.Successes)
		}
	}
}

// TestPipelineStepsAgainstTriton runs tritontop on the real server's
// pipeline and reads Triton's statistics of the ensemble and of each
// composing model before and after, apart from tritontop's client:
//
//   - each step's counts summed over the run file's ticks (their late
//     reads too) are its statistics' deltas exactly;
//   - the summary's queue, compute and overhead of the pipeline are
//     perf_analyzer's account of an ensemble (ensembleAccount) on those
//     deltas, to the few ns the ticks' averages round by, and its own
//     queue is the ensemble's own;
//   - the printed summary has perf_analyzer's "Composing models:" block,
//     line for line in the shapes perf_analyzer itself prints on the same
//     server.
func TestPipelineStepsAgainstTriton(t *testing.T) {
	t.Parallel()
	srv := interop.Start(t, interop.Options{Models: []string{pipeline, "preprocess", "classifier"}})
	warmUp(t, srv)
	pb, sb := statsOf(t, srv)
	run, out := runPipeline(t, srv, 4, 1500*time.Millisecond)
	pa, sa := statsOf(t, srv)
	pd := interop.Delta(pb, pa)
	sd := make([]interop.ModelStats, len(sb))
	for i := range sb {
		sd[i] = interop.Delta(sb[i], sa[i])
	}
	checkStepCounts(t, run, sd)
	q, c, o := ensembleAccount(pd, sd)
	sv := run.Summary.Server
	t.Logf("perf_analyzer's account: queue %d ns, compute %d ns, overhead %d ns; tritontop: %d, %d, %d; ensemble's own queue %d ns",
		q, c, o, sv.Queue, sv.Compute(), sv.Overhead, pd.Averages().Queue)
	tol := int64(2 * 4 * len(sd))
	if !near(sv.Queue, q, tol) || !near(sv.Compute(), c, tol) || !near(sv.Overhead, o, 2*tol) {
		t.Errorf("pipeline: tritontop queue %d, compute %d, overhead %d ns; perf_analyzer's %d, %d, %d",
			sv.Queue, sv.Compute(), sv.Overhead, q, c, o)
	}
	if sv.Own == nil || !near(sv.Own.Queue, pd.Averages().Queue, 2) || uint64(sv.Queue) <= pd.Averages().Queue {
		t.Errorf("own times %+v: want the ensemble's own queue %d ns, under its steps' %d", sv.Own, pd.Averages().Queue, q)
	}
	pa2 := srv.PerfAnalyzer(t, "grpc", "-m", pipeline, "--shape", "IN:16", "--concurrency-range", "4", "-p", "300", "-s", "1000")
	checkComposingLayout(t, out, pa2.Output)
}

// near reports whether got is want within tol ns.
func near(got time.Duration, want uint64, tol int64) bool {
	d := int64(got) - int64(want)
	return d >= -tol && d <= tol
}

// checkStepCounts holds each step's counts over the run's ticks against
// its statistics' deltas.
func checkStepCounts(t *testing.T, run *record.Run, deltas []interop.ModelStats) {
	t.Helper()
	type sums struct{ success, exec, infer uint64 }
	got := make([]sums, len(pipelineSteps))
	for _, s := range run.Snapshots {
		for _, sv := range []*stats.ServerStats{&s.Server, s.ServerLate} {
			if sv == nil || !sv.Available || sv.Reset {
				continue
			}
			if len(sv.Steps) != len(pipelineSteps) {
				t.Fatalf("tick %d has %d steps, want %v", s.Seq, len(sv.Steps), pipelineSteps)
			}
			for i, st := range sv.Steps {
				if st.Model != pipelineSteps[i] || st.Version != "1" {
					t.Fatalf("tick %d: step %d is %s v%s", s.Seq, i, st.Model, st.Version)
				}
				got[i].success += uint64(st.SuccessCount)
				got[i].exec += uint64(st.ExecutionCount)
				got[i].infer += uint64(st.InferenceCount)
			}
		}
	}
	for i, d := range deltas {
		want := sums{d.Inference.Success.Count, d.ExecutionCount, d.InferenceCount}
		if want.success == 0 || got[i] != want {
			t.Errorf("%s: ticks count %+v, Triton's deltas %+v", pipelineSteps[i], got[i], want)
		}
	}
}

// composingLine matches the lines of perf_analyzer's Composing models
// block: its heading, a model's name and version, and the counts and
// latency lines indented under it.
var composingLines = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^    Avg request latency: \d+ usec \(overhead \d+ usec \+ queue \d+ usec \+ compute \d+ usec\)\n\n  Composing models: \n  classifier, version: 1\n      Inference count: \d+\n      Execution count: \d+\n      Successful request count: \d+\n      Avg request latency: \d+ usec \(overhead \d+ usec \+ queue \d+ usec \+ compute input \d+ usec \+ compute infer \d+ usec \+ compute output \d+ usec\)\n`),
	regexp.MustCompile(`(?m)^  preprocess, version: 1\n      Inference count: \d+\n      Execution count: \d+\n      Successful request count: \d+\n      Avg request latency: \d+ usec \(overhead \d+ usec \+ queue \d+ usec \+ compute input \d+ usec \+ compute infer \d+ usec \+ compute output \d+ usec\)\n`),
}

// checkComposingLayout checks that tritontop's summary and perf_analyzer's
// report both have the block (tritontop adds an Avg batch size line after
// each model's latency, which the patterns end before).
func checkComposingLayout(t *testing.T, ours, theirs string) {
	t.Helper()
	for _, re := range composingLines {
		if !re.MatchString(theirs) {
			t.Errorf("perf_analyzer's report lacks %s:\n%s", re, theirs)
		}
		if !re.MatchString(ours) {
			t.Errorf("tritontop's summary lacks %s:\n%s", re, ours)
		}
	}
}

// TestPipelineSlowStepAgainstTriton makes classifier the slow step of a
// copy of the real server's repository (one instance without dynamic
// batching and a 10 ms execute_delay_ms, the identity backend's
// parameter; preprocess keeps its dynamic batching, on two instances):
// requests queue there, and the diagnosis names it.
func TestPipelineSlowStepAgainstTriton(t *testing.T) {
	t.Parallel()
	srv := interop.Start(t, interop.Options{Models: []string{pipeline, "preprocess", "classifier"}, Edit: func(t testing.TB, repo string) {
		interop.WriteConfig(t, repo, "classifier", `name: "classifier"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
parameters { key: "execute_delay_ms" value: { string_value: "10" } }
`)
		interop.WriteConfig(t, repo, "preprocess", `name: "preprocess"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
dynamic_batching { }
`)
	}})
	warmUp(t, srv)
	run, out := runPipeline(t, srv, 4, 1500*time.Millisecond)
	var found *stats.Finding
	for i, f := range run.Summary.Diagnosis {
		if f.Verdict == stats.Queueing {
			found = &run.Summary.Diagnosis[i]
		}
	}
	if found == nil || found.Step != "classifier" || !strings.HasPrefix(found.Message, "queueing in classifier: ") {
		t.Fatalf("diagnosis %+v, want queueing named at classifier\n%s", run.Summary.Diagnosis, out)
	}
	sv := run.Summary.Server
	if len(sv.Steps) != 2 || sv.Steps[0].Queue < 10*sv.Steps[1].Queue || sv.Steps[0].Compute() < 9*time.Millisecond {
		t.Errorf("steps %+v: want classifier's queue ten times preprocess's, its compute the 10 ms delay", sv.Steps)
	}
	t.Logf("finding: %s", found.Message)
}
