package session_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
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

// slowStepRepo is a pipeline "pipe" of pre (four instances, 200 µs per
// execution, dynamic batching) then cls (one instance without dynamic
// batching, 10 ms per execution): requests queue at cls. simple is a
// plain model beside it.
func slowStepRepo() sim.Repository {
	model := func(name string, instances int, fixedUS float64, dynamic bool) sim.ModelSpec {
		m := sim.ModelSpec{Name: name, Backend: "identity", MaxBatchSize: 8,
			Inputs:         []sim.TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{16}}},
			Outputs:        []sim.TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{16}}},
			InstanceGroups: []sim.InstanceGroupSpec{{Count: instances, Kind: "KIND_CPU"}},
			Latency:        sim.LatencySpec{FixedUS: fixedUS},
			Behaviour:      sim.BehaviourIdentity,
		}
		if dynamic {
			m.DynamicBatching = &sim.DynamicBatchingSpec{}
		}
		return m
	}
	pipe := sim.ModelSpec{Name: "pipe", Platform: sim.EnsemblePlatform, MaxBatchSize: 8,
		Inputs:  []sim.TensorSpec{{Name: "IN", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs: []sim.TensorSpec{{Name: "OUT", DataType: "TYPE_FP32", Dims: []int64{16}}},
		EnsembleScheduling: &sim.EnsembleSpec{Steps: []sim.EnsembleStepSpec{
			{ModelName: "pre", ModelVersion: -1, InputMap: map[string]string{"INPUT0": "IN"}, OutputMap: map[string]string{"OUTPUT0": "mid"}},
			{ModelName: "cls", ModelVersion: -1, InputMap: map[string]string{"INPUT0": "mid"}, OutputMap: map[string]string{"OUTPUT0": "OUT"}},
		}}}
	return sim.Repository{Models: []sim.ModelSpec{
		model("pre", 4, 200, true), model("cls", 1, 10000, false), pipe, model("simple", 1, 100, true),
	}}
}

// TestSessionPipelineSlowStep: with one step made slow, the diagnosis
// names it, in the summary and in each step's, and the summary's text
// carries perf_analyzer's Composing models block.
func TestSessionPipelineSlowStep(t *testing.T) {
	t.Parallel()
	srv := startSimRepo(t, slowStepRepo())
	c := quickConfig(srv, "pipe")
	// Eight in flight: seven wait at cls while one computes, however slow
	// a busy host makes its 10 ms.
	c.Concurrency, c.Duration = 8, 900*time.Millisecond
	run, _ := recordRun(t, c)
	sum := *run.Summary
	var text bytes.Buffer
	if err := report.WriteText(&text, sum); err != nil {
		t.Fatal(err)
	}
	stdout := text.String()
	var f *stats.Finding
	for i := range sum.Diagnosis {
		if sum.Diagnosis[i].Verdict == stats.Queueing {
			f = &sum.Diagnosis[i]
		}
	}
	if f == nil || f.Step != "cls" || !strings.HasPrefix(f.Message, "queueing in cls: ") {
		t.Fatalf("diagnosis %+v, want queueing named at cls", sum.Diagnosis)
	}
	// The load step's diagnosis too: a plan's limit quotes it
	// (plan.TestPlanLimitNamesThePipelineStep).
	named := false
	for _, st := range sum.Steps {
		for _, f := range st.Diagnosis {
			named = named || f.Step == "cls"
		}
	}
	if !named {
		t.Errorf("no load step's diagnosis names cls: %+v", sum.Steps)
	}
	for _, want := range []string{"\n  Composing models: \n  cls, version: 1\n      Inference count: ", "\n  pre, version: 1\n", "⚠ queueing in cls: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// TestSessionPipelineAmongModels runs the pipeline beside a plain model
// (-m pipe -m simple): the pipeline's entry has its steps, the plain
// model's and the run's aggregate none, and the CSV writes a file per
// model and one per composing model of the pipeline.
func TestSessionPipelineAmongModels(t *testing.T) {
	t.Parallel()
	srv := startSimRepo(t, slowStepRepo())
	c := quickConfig(srv, "")
	c.ModelArgs, c.Concurrency, c.Duration = []string{"pipe", "simple"}, 2, 600*time.Millisecond
	dir := t.TempDir()
	c.CSV = dir + "/out.csv"
	run, _ := recordRun(t, c)
	seen := false
	for _, s := range run.Snapshots {
		if len(s.Models) != 2 {
			t.Fatalf("tick %d has %d models", s.Seq, len(s.Models))
		}
		p, simple := s.Models[0].Server, s.Models[1].Server
		if simple.Steps != nil || s.Server.Steps != nil {
			t.Fatalf("tick %d: steps outside the pipeline: simple %v, all %v", s.Seq, simple.Steps, s.Server.Steps)
		}
		if p.Available && !p.Reset && p.SuccessCount > 0 {
			seen = true
			if len(p.Steps) != 2 || p.Steps[0].Model != "cls" || p.Steps[0].SuccessCount == 0 {
				t.Fatalf("tick %d: pipeline's steps %+v", s.Seq, p.Steps)
			}
		}
	}
	if !seen {
		t.Fatal("no tick measured the pipeline")
	}
	for _, name := range []string{"out.pipe.csv", "out.simple.csv", "cls_v1.out.pipe.csv", "pre_v1.out.pipe.csv"} {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			t.Errorf("CSV %s: %v", name, err)
			continue
		}
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 {
			t.Errorf("%s: %d lines, want a header and a row:\n%s", name, len(lines), b)
		}
	}
	if _, err := os.Stat(dir + "/cls_v1.out.simple.csv"); err == nil {
		t.Error("a plain model got a composing model's CSV")
	}
}

// TestSessionPipelineOverReplicas runs the pipeline over two simulators:
// each replica's statistics have its steps, and the tick's aggregate has
// each step's counts added over them, equal to the two servers' deltas.
func TestSessionPipelineOverReplicas(t *testing.T) {
	t.Parallel()
	a, b := startSimRepo(t, slowStepRepo()), startSimRepo(t, slowStepRepo())
	c := quickConfig(a, "pipe")
	c.URLs = []string{a.GRPCAddr(), b.GRPCAddr()}
	c.MetricsURLs = []string{"http://" + a.MetricsAddr() + "/metrics", "http://" + b.MetricsAddr() + "/metrics"}
	c.Concurrency, c.Duration = 4, 700*time.Millisecond
	run, _ := recordRun(t, c)
	var cls [3]int64 // replica a, replica b, aggregate
	for _, s := range run.Snapshots {
		add := func(i int, sv *stats.ServerStats) {
			if sv != nil && sv.Available && !sv.Reset && len(sv.Steps) == 2 {
				cls[i] += sv.Steps[0].SuccessCount
			}
		}
		if len(s.Replicas) != 2 {
			t.Fatalf("tick %d has %d replicas", s.Seq, len(s.Replicas))
		}
		add(0, &s.Replicas[0].Server)
		add(0, s.Replicas[0].ServerLate)
		add(1, &s.Replicas[1].Server)
		add(1, s.Replicas[1].ServerLate)
		add(2, &s.Server)
		add(2, s.ServerLate)
	}
	want := [2]int64{simCount(t, a, "cls"), simCount(t, b, "cls")}
	if cls[0] != want[0] || cls[1] != want[1] || cls[2] != want[0]+want[1] || want[0] == 0 || want[1] == 0 {
		t.Errorf("cls's requests: replicas %d and %d, aggregate %d; the servers counted %v", cls[0], cls[1], cls[2], want)
	}
	if s := run.Summary.Server; len(s.Steps) != 2 || s.Steps[0].SuccessCount != want[0]+want[1] {
		t.Errorf("summary's steps %+v", s.Steps)
	}
}

// simCount is a model's successful requests on a simulator.
func simCount(t *testing.T, srv *sim.Server, name string) int64 {
	t.Helper()
	return int64(allStats(t, srv)[name].GetInferenceStats().GetSuccess().GetCount())
}

// TestSessionBLSComposingModels: --bls-composing-models names the
// models a BLS model calls, read with it (here nothing calls them, so
// their steps count nothing and the request time is all overhead); a
// version given is the one read; several models, or a name the server
// does not serve, are refused with one line.
func TestSessionBLSComposingModels(t *testing.T) {
	t.Parallel()
	srv := startSimRepo(t, slowStepRepo())
	c := quickConfig(srv, "simple")
	c.Duration, c.BLSComposingModels = 400*time.Millisecond, []string{"pre:1, cls"}
	run, _ := recordRun(t, c)
	sv := run.Summary.Server
	if len(sv.Steps) != 2 || sv.Steps[0].Model != "cls" || sv.Steps[1].Model != "pre" || sv.Steps[1].Version != "1" ||
		sv.Steps[0].SuccessCount != 0 || sv.Queue != 0 || sv.Overhead != sv.Request || sv.Own == nil {
		t.Errorf("summary: %+v", sv)
	}
	c.ModelArgs = []string{"simple", "pipe"}
	err, _, _ := runConfig(t, c)
	wantRefused(t, err, "--bls-composing-models", "2 models")
	c.ModelArgs, c.BLSComposingModels = nil, []string{"nope"}
	err, _, _ = runConfig(t, c)
	wantRefused(t, err, `"nope"`, "--bls-composing-models")
	c.BLSComposingModels = []string{"a:x"}
	err, _, _ = runConfig(t, c)
	wantRefused(t, err, `--bls-composing-models: "a:x": version "x" is not a whole number`)
}
