package interop_test

import (
	"testing"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
)

// TestSeveralModels runs two models of a real Triton in one run (ModelArgs,
// -m NAME@concurrency=N twice): identity_int32 at concurrency 3 and
// classifier (FP32 [16], dynamic batching) at concurrency 2, the run's
// --shape applying to the model whose input is variable. Each model's
// counts, server times and batches in the summary are that model's deltas
// on Triton (checkExact), and the run's are their sums; each model kept
// its own load.
func TestSeveralModels(t *testing.T) {
	t.Parallel()
	wallTime(t)
	models := []string{identity, "classifier"}
	srv := interop.Start(t, interop.Options{Models: models})
	c := configFor(srv, "grpc", "")
	c.ModelArgs, c.Shapes = []string{identity + "@concurrency=3", "classifier@concurrency=2"}, []string{"INPUT0:16"}
	var before []interop.ModelStats
	for _, m := range models {
		before = append(before, srv.Statistics(t, m))
	}
	run, _ := recordRun(t, c)
	sum := run.Summary
	if len(sum.Models) != len(models) {
		t.Fatalf("the summary has %d models, want %d", len(sum.Models), len(models))
	}
	var ds []interop.ModelStats
	for i, m := range models {
		ms := sum.Models[i]
		if ms.Name != m {
			t.Fatalf("model %d of the summary is %q, want %q", i, ms.Name, m)
		}
		d := settled(t, srv, m, before[i], ms.Client.Successes)
		t.Logf("Triton's deltas of %s: %v", m, d)
		checkExact(t, m, ms.Client, ms.Server, d)
		if want := 3 - i; ms.Load.Concurrency != want {
			t.Errorf("%s ran at concurrency %d, want %d", m, ms.Load.Concurrency, want)
		}
		ds = append(ds, d)
	}
	checkSummed(t, "the run", sum, ds)
}

// TestReplicas runs one model on two real Triton servers as replicas (URLs
// and MetricsURLs, -u and --metrics-url twice), at concurrency 4 over
// HTTP. Each replica's counts, server times and batches are its server's
// deltas (checkExact), both got requests, and the run's counts are their
// sums.
func TestReplicas(t *testing.T) {
	t.Parallel()
	wallTime(t)
	servers := []*interop.Server{
		interop.Start(t, interop.Options{Models: []string{identity}}),
		interop.Start(t, interop.Options{Models: []string{identity}}),
	}
	c := configFor(servers[0], "http", identity)
	c.Concurrency, c.Shapes = 4, []string{"INPUT0:16"}
	c.URLs, c.MetricsURLs, c.URL = nil, nil, ""
	for _, s := range servers {
		c.URLs, c.MetricsURLs = append(c.URLs, s.HTTP), append(c.MetricsURLs, s.MetricsURL())
	}
	var before []interop.ModelStats
	for _, s := range servers {
		before = append(before, s.Statistics(t, identity))
	}
	run, _ := recordRun(t, c)
	sum := run.Summary
	if len(sum.Replicas) != len(servers) {
		t.Fatalf("the summary has %d replicas, want %d", len(sum.Replicas), len(servers))
	}
	var ds []interop.ModelStats
	for i, s := range servers {
		r := sum.Replicas[i]
		d := settled(t, s, identity, before[i], r.Client.Successes)
		t.Logf("Triton's deltas on %s: %v", s.HTTP, d)
		if r.URL != s.HTTP {
			t.Errorf("replica %d is %q, want %q", i, r.URL, s.HTTP)
		}
		checkExact(t, "replica "+r.URL, r.Client, r.Server, d)
		ds = append(ds, d)
	}
	checkSummed(t, "the run", sum, ds)
}

// checkSummed holds a run's whole counts to the sums of Triton's deltas on
// its models or replicas, and its server times to perf_analyzer's formulas
// on them (with room for one more rounding: the run's averages are means
// of the parts').
func checkSummed(t *testing.T, what string, sum *record.Summary, ds []interop.ModelStats) {
	t.Helper()
	all := interop.Sum(ds...)
	checkCounts(t, what, sum.Client, sum.Server, all)
	checkAveragesWithin(t, what, sum.Server, all, 2)
	checkBatches(t, what, sum.Server, all)
}

// TestEnsemble runs tritontop against a real Triton's ensemble, pipeline
// (preprocess → classifier), at concurrency 2. Its counts and its own
// entry's times (Server.Own) are the ensemble's own deltas (checkExact),
// and Triton ran every request through both composing models. The
// pipeline's queue and compute as tritontop shows them are its steps'
// (perf_analyzer's account: TestPipelineStepsAgainstTriton).
func TestEnsemble(t *testing.T) {
	t.Parallel()
	wallTime(t)
	models := []string{"pipeline", "preprocess", "classifier"}
	srv := interop.Start(t, interop.Options{Models: models})
	c := configFor(srv, "grpc", "pipeline")
	c.Concurrency = 2
	var before []interop.ModelStats
	for _, m := range models {
		before = append(before, srv.Statistics(t, m))
	}
	run, _ := recordRun(t, c)
	var ds []interop.ModelStats
	for i, m := range models {
		ds = append(ds, settled(t, srv, m, before[i], run.Summary.Client.Successes))
		t.Logf("Triton's deltas of %s: %v", m, ds[i])
	}
	own := run.Summary.Server
	if own.Own == nil || len(own.Steps) != 2 {
		t.Fatalf("the summary has no own times (%v) or not two steps (%d)", own.Own != nil, len(own.Steps))
	}
	own.Queue, own.ComputeInput, own.ComputeInfer, own.ComputeOutput = own.Own.Queue, own.Own.ComputeInput, own.Own.ComputeInfer, own.Own.ComputeOutput
	checkExact(t, "the ensemble", run.Summary.Client, own, ds[0])
	for i, m := range models[1:] {
		if n := ds[i+1].Inference.Success.Count; n != ds[0].Inference.Success.Count {
			t.Errorf("%s served %d requests of the ensemble's %d", m, n, ds[0].Inference.Success.Count)
		}
	}
}
