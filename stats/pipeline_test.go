package stats

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// configs is a ConfigReader over a fixed set of configs, counting reads.
type configs struct {
	by    map[string]*pb.ModelConfig
	reads int
}

func (c *configs) ModelConfig(_ context.Context, model, version string) (*pb.ModelConfig, error) {
	c.reads++
	cfg, ok := c.by[model]
	if !ok {
		return nil, fmt.Errorf("no model %q", model)
	}
	return cfg, nil
}

func ensembleConfig(name string, steps ...*pb.ModelEnsembling_Step) *pb.ModelConfig {
	return &pb.ModelConfig{Name: name, Platform: EnsemblePlatform,
		SchedulingChoice: &pb.ModelConfig_EnsembleScheduling{EnsembleScheduling: &pb.ModelEnsembling{Step: steps}}}
}

func step(model string, version int64) *pb.ModelEnsembling_Step {
	return &pb.ModelEnsembling_Step{ModelName: model, ModelVersion: version}
}

func TestComposingModelsFromConfigs(t *testing.T) {
	r := &configs{by: map[string]*pb.ModelConfig{
		"top": ensembleConfig("top", step("b", -1), step("sub", -1), step("a", 2), step("b", -1)),
		"sub": ensembleConfig("sub", step("d", -1), step("c", 1)),
		"a":   {Name: "a", Backend: "identity"},
		"b":   {Name: "b", Backend: "identity"},
		"c":   {Name: "c", Backend: "identity"},
		"d":   {Name: "d", Backend: "identity"},
		"x":   {Name: "x", Backend: "identity"},
	}}
	got, err := ComposingModels(context.Background(), r, r.by["top"], []Composing{{Name: "x", Version: "3"}})
	if err != nil {
		t.Fatal(err)
	}
	// perf_analyzer's set: by name then version, each once; a composing
	// ensemble's own steps under it.
	want := []Composing{
		{Name: "a", Version: "2"},
		{Name: "b"},
		{Name: "sub", Steps: []Composing{{Name: "c", Version: "1"}, {Name: "d"}}},
		{Name: "x", Version: "3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("composing models\n got %+v\nwant %+v", got, want)
	}
	if none, err := ComposingModels(context.Background(), r, r.by["a"], nil); none != nil || err != nil {
		t.Errorf("a model that is no pipeline: %v, %v", none, err)
	}

	// A server whose ensemble names itself (Triton refuses one; a hostile
	// or broken server may still answer so) is bounded.
	loop := &configs{by: map[string]*pb.ModelConfig{"e": ensembleConfig("e", step("e", -1))}}
	if _, err := ComposingModels(context.Background(), loop, loop.by["e"], nil); err == nil || !strings.Contains(err.Error(), "nested more than 8 deep") {
		t.Errorf("self-nested ensemble: %v", err)
	}
	if _, err := ComposingModels(context.Background(), r, r.by["a"], []Composing{{Name: "nope"}}); err == nil ||
		!strings.Contains(err.Error(), `config of "nope", a composing model of "a"`) {
		t.Errorf("unknown BLS composing model: %v", err)
	}
}

func TestParseComposing(t *testing.T) {
	got, err := ParseComposing(" modelA:3, modelB ,c:")
	want := []Composing{{Name: "modelA", Version: "3"}, {Name: "modelB"}, {Name: "c"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	for in, words := range map[string]string{
		"a,,b": `"" names no model`,
		":3":   `":3" names no model`,
		"a:x":  `version "x" is not a whole number`,
		"a:-1": `version "-1" is not a whole number`,
	} {
		if _, err := ParseComposing(in); err == nil || !strings.Contains(err.Error(), words) {
			t.Errorf("%q: %v, want %q", in, err, words)
		}
	}
}

// allModels is a StatisticsClient over every model's cumulative entries,
// which a test moves on; it records the names asked for.
type allModels struct {
	entries []*pb.ModelStatistics
	asked   []string
}

func (a *allModels) ModelStatistics(_ context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
	a.asked = append(a.asked, model)
	resp := &pb.ModelStatisticsResponse{}
	for _, e := range a.entries {
		if model == "" || e.GetName() == model {
			resp.ModelStats = append(resp.ModelStats, cloneStats(e))
		}
	}
	return resp, nil
}

func cloneStats(e *pb.ModelStatistics) *pb.ModelStatistics {
	return proto.Clone(e).(*pb.ModelStatistics)
}

// entry is a model version's cumulative statistics: n requests, each
// queueing q ns and computing c ns (in, infer, out: c/4, c/2, c/4), in
// batches of one, with request time req ns each.
func entry(name, version string, n, req, q, c uint64) *pb.ModelStatistics {
	d := func(ns uint64) *pb.StatisticDuration { return &pb.StatisticDuration{Count: n, Ns: n * ns} }
	return &pb.ModelStatistics{Name: name, Version: version, InferenceCount: n, ExecutionCount: n,
		InferenceStats: &pb.InferStatistics{Success: d(req), Queue: d(q),
			ComputeInput: d(c / 4), ComputeInfer: d(c / 2), ComputeOutput: d(c / 4)},
		BatchStats: []*pb.InferBatchStatistics{{BatchSize: 1, ComputeInput: d(c / 4), ComputeInfer: d(c / 2), ComputeOutput: d(c / 4)}}}
}

func TestPollerDecomposesAPipeline(t *testing.T) {
	srv := &allModels{entries: []*pb.ModelStatistics{
		entry("pipe", "1", 0, 0, 0, 0), entry("pre", "1", 0, 0, 0, 0), entry("cls", "1", 0, 0, 0, 0),
		entry("other", "1", 5, 100, 10, 10),
	}}
	p := NewServerPoller(srv, "pipe", "")
	p.SetComposing([]Composing{{Name: "cls"}, {Name: "pre"}})
	if err := p.Prime(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 10 requests: the ensemble queues 2 µs of its own and reports 600 µs
	// of compute; pre queues 100 µs and computes 200, cls queues 5000 and
	// computes 400; each request takes 6000 µs in all.
	srv.entries[0] = entry("pipe", "1", 10, 6_000_000, 2_000, 600_000)
	srv.entries[1] = entry("pre", "1", 10, 300_000, 100_000, 200_000)
	srv.entries[2] = entry("cls", "1", 10, 5_400_000, 5_000_000, 400_000)
	s := p.Poll(context.Background())
	if srv.asked[len(srv.asked)-1] != "" {
		t.Errorf("a pipeline's statistics read asked for %q, want every model's at once", srv.asked[len(srv.asked)-1])
	}
	if !s.Available || s.Reset || len(s.Steps) != 2 || s.Steps[0].Model != "cls" || s.Steps[1].Model != "pre" {
		t.Fatalf("poll: %+v", s)
	}
	if s.SuccessCount != 10 || s.Steps[0].SuccessCount != 10 || s.Steps[0].Queue != 5*time.Millisecond || s.Steps[1].Compute() != 200*time.Microsecond {
		t.Errorf("steps: %+v", s.Steps)
	}
	// perf_analyzer: queue = 100 + 5000, compute = 200 + 400, overhead =
	// 6000 − 5700.
	if s.Queue != 5100*time.Microsecond || s.Compute() != 600*time.Microsecond || s.Overhead != 300*time.Microsecond {
		t.Errorf("pipeline: queue %v compute %v overhead %v", s.Queue, s.Compute(), s.Overhead)
	}
	if s.Own == nil || s.Own.Queue != 2*time.Microsecond || s.Own.Compute() != 600*time.Microsecond {
		t.Errorf("own times %+v", s.Own)
	}
	if s.AvgBatch != 1 || s.Steps[0].AvgBatch != 1 || len(s.Steps[0].Batches) != 1 {
		t.Errorf("batches: pipeline %v, cls %v %v", s.AvgBatch, s.Steps[0].AvgBatch, s.Steps[0].Batches)
	}

	// cls reloaded: its counters start again. The tick cannot be split
	// over the steps: a reset, which names the step.
	srv.entries[0] = entry("pipe", "1", 20, 6_000_000, 2_000, 600_000)
	srv.entries[2] = entry("cls", "1", 3, 5_400_000, 5_000_000, 400_000)
	s = p.Poll(context.Background())
	if !s.Reset || s.SuccessCount != 0 || len(s.Steps) != 2 || !s.Steps[0].Reset || s.Steps[1].Reset {
		t.Errorf("after cls's reload: %+v", s)
	}
	srv.entries[0] = entry("pipe", "1", 21, 6_000_000, 2_000, 600_000)
	srv.entries[1] = entry("pre", "1", 11, 300_000, 100_000, 200_000)
	srv.entries[2] = entry("cls", "1", 4, 5_400_000, 5_000_000, 400_000)
	if s = p.Poll(context.Background()); s.Reset || s.SuccessCount != 1 || s.Steps[0].SuccessCount != 1 {
		t.Errorf("the tick after the reload: %+v", s)
	}
}

func TestPollerResolvesAnUnversionedStep(t *testing.T) {
	srv := &allModels{entries: []*pb.ModelStatistics{
		entry("pipe", "1", 0, 0, 0, 0), entry("cls", "1", 7, 10, 1, 1), entry("cls", "2", 0, 0, 0, 0),
	}}
	p := NewServerPoller(srv, "pipe", "")
	p.SetComposing([]Composing{{Name: "cls"}})
	if err := p.Prime(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Version 2 served the requests: perf_analyzer reads the version whose
	// queue count grew.
	srv.entries[0] = entry("pipe", "1", 4, 1000, 10, 100)
	srv.entries[2] = entry("cls", "2", 4, 900, 800, 100)
	s := p.Poll(context.Background())
	if len(s.Steps) != 1 || s.Steps[0].Version != "2" || s.Steps[0].SuccessCount != 4 {
		t.Fatalf("step: %+v", s.Steps)
	}
	// No request in the next tick: the version stays the one chosen.
	if s = p.Poll(context.Background()); len(s.Steps) != 1 || s.Steps[0].Version != "2" || s.Steps[0].SuccessCount != 0 {
		t.Errorf("idle tick: %+v", s.Steps)
	}
	// A step that names its version is read at it.
	p2 := NewServerPoller(srv, "pipe", "")
	p2.SetComposing([]Composing{{Name: "cls", Version: "1"}})
	_ = p2.Prime(context.Background())
	srv.entries[1] = entry("cls", "1", 9, 10, 1, 1)
	if s = p2.Poll(context.Background()); s.Steps[0].Version != "1" || s.Steps[0].SuccessCount != 2 {
		t.Errorf("versioned step: %+v", s.Steps)
	}
	// A composing model the server no longer serves: the tick is a reset
	// that says which.
	srv.entries = srv.entries[:1]
	if s = p2.Poll(context.Background()); !s.Reset || s.Steps[0].Available || !strings.Contains(s.Steps[0].Err, `"cls"`) {
		t.Errorf("missing step: %+v", s)
	}
}

func TestNestedPipelineDecomposesRecursively(t *testing.T) {
	srv := &allModels{entries: []*pb.ModelStatistics{
		entry("top", "1", 0, 0, 0, 0), entry("sub", "1", 0, 0, 0, 0), entry("a", "1", 0, 0, 0, 0), entry("b", "1", 0, 0, 0, 0),
	}}
	p := NewServerPoller(srv, "top", "1")
	p.SetComposing([]Composing{{Name: "a"}, {Name: "sub", Steps: []Composing{{Name: "b"}}}})
	_ = p.Prime(context.Background())
	srv.entries[0] = entry("top", "1", 2, 9000, 1, 3000)
	srv.entries[1] = entry("sub", "1", 2, 5000, 1, 1000)
	srv.entries[2] = entry("a", "1", 2, 3000, 1000, 2000)
	srv.entries[3] = entry("b", "1", 2, 5000, 4000, 1000)
	s := p.Poll(context.Background())
	if len(s.Steps) != 2 || len(s.Steps[1].Steps) != 1 || s.Steps[1].Queue != 4000 || s.Steps[1].Own == nil {
		t.Fatalf("nested: %+v", s)
	}
	// perf_analyzer: a + (sub's steps: b).
	if s.Queue != 5000 || s.Compute() != 3000 || s.Overhead != 1000 {
		t.Errorf("top: queue %d compute %d overhead %d", s.Queue, s.Compute(), s.Overhead)
	}
}

// pipelineStats is a pipeline's tick with two steps, pre and cls, n
// requests each, with the given request time and steps' queue and compute.
func pipelineStats(n int64, req, preQ, preC, clsQ, clsC time.Duration) ServerStats {
	st := func(name string, q, c time.Duration) ServerStats {
		return ServerStats{Available: true, Model: name, Version: "1", SuccessCount: n, InferenceCount: n, ExecutionCount: n,
			Request: q + c, Queue: q, ComputeInfer: c, AvgBatch: 1, Batches: []BatchCount{{Size: 1, Count: n}}}
	}
	s := ServerStats{Available: true, Model: "pipe", Version: "1", SuccessCount: n, InferenceCount: n, ExecutionCount: n,
		Request: req, Queue: time.Microsecond, ComputeInfer: preC + clsC, AvgBatch: 1,
		Steps: []ServerStats{st("cls", clsQ, clsC), st("pre", preQ, preC)}}
	s.Own = &OwnTimes{Queue: s.Queue, ComputeInfer: s.ComputeInfer}
	s.Decompose()
	return s
}

func TestAggregatePipelineOverReplicas(t *testing.T) {
	a := pipelineStats(10, 10*time.Millisecond, time.Millisecond, time.Millisecond, 6*time.Millisecond, 2*time.Millisecond)
	b := pipelineStats(30, 6*time.Millisecond, time.Millisecond, time.Millisecond, 2*time.Millisecond, 2*time.Millisecond)
	got := AggregateServer([]ServerStats{a, b})
	if len(got.Steps) != 2 || got.Steps[0].Model != "cls" || got.Steps[0].SuccessCount != 40 {
		t.Fatalf("steps: %+v", got.Steps)
	}
	// cls's queue over both: (10×6 + 30×2)/40 = 3 ms; with pre's 1 ms and
	// the compute of 1 + 2 ms: request (10×10 + 30×6)/40 = 7 ms, overhead 0.
	if got.Steps[0].Queue != 3*time.Millisecond || got.Queue != 4*time.Millisecond || got.Compute() != 3*time.Millisecond ||
		got.Request != 7*time.Millisecond || got.Overhead != 0 || got.Own == nil || got.Own.Queue != time.Microsecond {
		t.Errorf("aggregate: queue %v compute %v request %v overhead %v own %+v", got.Queue, got.Compute(), got.Request, got.Overhead, got.Own)
	}
	// Across models the steps of one are no part of the whole.
	other := ServerStats{Available: true, Model: "simple", SuccessCount: 40, Request: time.Millisecond, Queue: time.Millisecond}
	if all := acrossModels([]ServerStats{got, other}); all.Steps != nil || all.Own != nil || all.Queue != 2500*time.Microsecond {
		t.Errorf("across models: steps %v own %v queue %v", all.Steps, all.Own, all.Queue)
	}
}

func TestDiagnoseNamesTheStepThatQueues(t *testing.T) {
	recent := ticks(DiagnoseTicks, func(i int, s *Snapshot) {
		s.Server = pipelineStats(800, 9*time.Millisecond, 100*time.Microsecond, 500*time.Microsecond, 5130*time.Microsecond, 2*time.Millisecond)
	})
	fs := Diagnose(recent, DiagnoseOptions{})
	var f *Finding
	for i := range fs {
		if fs[i].Verdict == Queueing {
			f = &fs[i]
		}
	}
	if f == nil || f.Step != "cls" || !strings.HasPrefix(f.Message, "queueing in cls: 5.13 ms of the 9.00 ms") {
		t.Fatalf("findings %+v, want queueing named at cls", fs)
	}
	// Under a millisecond the figures are in µs; a slow pre queues instead.
	recent = ticks(DiagnoseTicks, func(i int, s *Snapshot) {
		s.Server = pipelineStats(800, 2*time.Millisecond, 1200*time.Microsecond, 100*time.Microsecond, 513*time.Microsecond, 48*time.Microsecond)
	})
	found := false
	for _, f := range Diagnose(recent, DiagnoseOptions{}) {
		if f.Verdict == Queueing {
			found = f.Step == "pre" && strings.HasPrefix(f.Message, "queueing in pre: 1.20 ms of the 2.00 ms a request spends in Triton waits in its queue (its compute 100 µs)")
			if !found {
				t.Errorf("finding %+v, want pre named", f)
			}
		}
	}
	if !found {
		t.Error("no queueing finding")
	}
}
