package promexport

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritontop/tritontop/stats"
)

// pipelineServer is a tick's statistics of a pipeline of pre and cls
// (cls itself an ensemble of one step, net), n requests each.
func pipelineServer(n int64, clsQueue time.Duration) stats.ServerStats {
	step := func(name string, q, c time.Duration) stats.ServerStats {
		return stats.ServerStats{Available: true, Model: name, SuccessCount: n, ExecutionCount: n / 2, InferenceCount: n,
			Queue: q, ComputeInfer: c}
	}
	cls := step("cls", clsQueue, 3*time.Millisecond)
	cls.Steps = []stats.ServerStats{step("net", clsQueue, 3*time.Millisecond)}
	return stats.ServerStats{Available: true, Model: "pipe", SuccessCount: n,
		Steps: []stats.ServerStats{cls, step("pre", time.Millisecond, 2*time.Millisecond)}}
}

// TestPipelineSteps exports each composing model's counters, a composing
// ensemble's steps as parent/step, with the model label in a run over
// several models and the late reads added in; a pedantic registry finds
// them well formed.
func TestPipelineSteps(t *testing.T) {
	e, err := New(Options{Models: []string{"pipe", "simple"}})
	if err != nil {
		t.Fatal(err)
	}
	late := pipelineServer(10, 8*time.Millisecond)
	e.Add(stats.Snapshot{Seq: 1, Models: []stats.Model{
		{Name: "pipe", Server: pipelineServer(40, 2*time.Millisecond)},
		{Name: "simple", Server: stats.ServerStats{Available: true, SuccessCount: 5}},
	}})
	e.Add(stats.Snapshot{Seq: 2, Models: []stats.Model{
		{Name: "pipe", Server: stats.ServerStats{Available: true, Reset: true}, ServerLate: &late},
		{Name: "simple"},
	}})
	// A step whose statistics were not read, or were reset, adds nothing.
	gone := pipelineServer(1000, time.Second)
	gone.Steps[0].Available, gone.Steps[1].Reset = false, true
	e.Add(stats.Snapshot{Seq: 3, Models: []stats.Model{{Name: "pipe", Server: gone}, {Name: "simple"}}})
	fams := mustScrape(t, serve(t, e))
	at := func(name, step string) float64 {
		return counter(t, fams, name, map[string]string{"model": "pipe", "step": step})
	}
	if got := at(MetricStepRequests, "cls"); got != 50 {
		t.Errorf("cls requests %v, want 50", got)
	}
	// 40 × 2 ms + 10 × 8 ms of queue in cls.
	if got := at(MetricStepQueue, "cls"); math.Abs(got-0.16) > 1e-9 {
		t.Errorf("cls queue seconds %v, want 0.16", got)
	}
	if got := at(MetricStepCompute, "cls/net"); math.Abs(got-0.15) > 1e-9 {
		t.Errorf("cls/net compute seconds %v, want 0.15", got)
	}
	if ex, inf := at(MetricStepExecutions, "pre"), at(MetricStepInferences, "pre"); ex != 25 || inf != 50 {
		t.Errorf("pre executions %v inferences %v, want 25 and 50", ex, inf)
	}
	if f := fams[MetricStepRequests]; len(f.GetMetric()) != 3 {
		t.Errorf("%d series of %s, want cls, cls/net and pre of pipe alone", len(f.GetMetric()), MetricStepRequests)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}
