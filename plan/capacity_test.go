package plan

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// rateLevel is a measured open-loop level at r req/s with the busiest GPU
// at util and queue per request, passing or not.
func rateLevel(r, util float64, queue time.Duration, pass bool, latency time.Duration) Level {
	st := record.Step{
		Load:   stats.Load{Mode: load.Rate, Rate: r},
		Client: stats.ClientStats{RequestsPerS: r},
		Server: record.ServerSummary{ServerStats: stats.ServerStats{Available: true, Queue: queue}},
		Metrics: record.MetricsSummary{GPUs: []record.GPUSummary{
			{UUID: "GPU-0", UtilizationAvg: util, HasUtilization: true},
			{UUID: "GPU-1", UtilizationAvg: util * 0.9, HasUtilization: true},
			{UUID: "GPU-idle", UtilizationAvg: 0, HasUtilization: true},
		}},
		Measurement: &record.Measurement{Stable: true, SLO: &record.SLOCheck{Latency: latency, Pass: pass}},
	}
	return Level{Target: load.Target{Mode: load.Rate, Rate: r}, Step: st, Pass: pass}
}

func TestMakePlan(t *testing.T) {
	slo := SLO{Percentile: 99, Threshold: 100 * time.Millisecond}
	opts := PlanOptions{TargetRate: 3000, SLO: slo, Deployment: "triton", Model: "resnet50", Burst: DefaultBurst}
	levels := []Level{
		rateLevel(100, 0.2, 100*time.Microsecond, true, 10*time.Millisecond),
		rateLevel(700, 0.7, time.Millisecond, true, 60*time.Millisecond),
		rateLevel(800, 0.8, 4*time.Millisecond, false, 140*time.Millisecond),
	}
	p, err := MakePlan(levels, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	// 3000/700 = 4.3 → 5 replicas hold 3500, 17% over the target: under
	// the 20% headroom; ceil(3000 × 1.2 / 700) = 6. The trough (750 req/s)
	// needs ceil(900/700) = 2, the burst (4500) ceil(5400/700) = 8.
	if p.Capacity != 700 || p.Replicas != 6 || !p.Spare || p.GPUsPerReplica != 2 || p.GPUs != 12 ||
		p.MinReplicas != 2 || p.MaxReplicas != 8 {
		t.Errorf("plan %+v", p)
	}
	// The rule is stated exactly, with the numbers it was applied to.
	if !slices.Contains(p.Assumptions, "replicas are the fewest whose capacity is at least 20% over the target: ceil(3000 × 1.2 / 700) = 6, 1 more than the 5 the target alone needs; headroom 40.0%") {
		t.Errorf("assumptions %q", p.Assumptions)
	}
	if p.Autoscaling != "gpu-utilization" || p.AutoscalingTarget != 0.7 {
		t.Errorf("autoscaling on %s %v, want GPU utilization at its 70%% at capacity", p.Autoscaling, p.AutoscalingTarget)
	}
	if !strings.Contains(p.Limit, "rate 800/s p99 latency reached 140.0 ms") {
		t.Errorf("limit %q", p.Limit)
	}
	if !strings.Contains(p.HPA, "minReplicas: 2") || !strings.Contains(p.HPA, "averageValue: 700m") {
		t.Errorf("HPA:\n%s", p.HPA)
	}

	// Utilization saturated at capacity: the queue time is the signal.
	levels[1] = rateLevel(700, 0.97, time.Millisecond, true, 60*time.Millisecond)
	if p, err = MakePlan(levels, 1, opts); err != nil {
		t.Fatal(err)
	}
	if p.Autoscaling != "queue-time" || p.AutoscalingTarget != 800 {
		t.Errorf("autoscaling on %s %v, want queue time 80%% of 1000 µs", p.Autoscaling, p.AutoscalingTarget)
	}
	// Plenty of headroom: 1500/700 → 3 replicas hold 2100, 40% over; no
	// spare.
	opts.TargetRate = 1500
	if p, err = MakePlan(levels, 1, opts); err != nil || p.Replicas != 3 || p.Spare {
		t.Errorf("1500 req/s at 700 each: %+v, %v; want 3 replicas, no spare", p, err)
	}
	if !slices.Contains(p.Assumptions, "replicas are the fewest whose capacity is at least 20% over the target: ceil(1500 × 1.2 / 700) = 3; headroom 40.0%") {
		t.Errorf("assumptions %q", p.Assumptions)
	}
	if _, err := MakePlan(levels, -1, opts); err == nil {
		t.Error("a plan without a passing level")
	}
}

// TestMakePlanOutputTokens gives an LLM's capacity in output tokens per
// second too, from the passing level's own count; other models have none.
func TestMakePlanOutputTokens(t *testing.T) {
	opts := PlanOptions{TargetRate: 30, SLO: SLO{Percentile: 99, Threshold: time.Second}, Deployment: "triton", Model: "llm"}
	levels := []Level{rateLevel(4, 0.3, time.Millisecond, true, 500*time.Millisecond), rateLevel(8, 0.6, time.Millisecond, true, 800*time.Millisecond)}
	levels[1].Step.Client.Streaming = &stats.StreamingStats{Requests: 80, OutputTokens: 5120, OutputTokensPerS: 512}
	p, err := MakePlan(levels, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	if p.CapacityTokensPerS != 512 {
		t.Errorf("capacity %v tokens/s, want the level's 512", p.CapacityTokensPerS)
	}
	if p, err = MakePlan(levels, 0, opts); err != nil || p.CapacityTokensPerS != 0 {
		t.Errorf("a level without token counts: %v tokens/s, %v", p.CapacityTokensPerS, err)
	}
}

// TestProbeThroughputByLittlesLaw: a probe of 128 in flight whose requests
// take 1.3 s on average serves 98.5 req/s, whatever the 85.3 req/s its
// count of batches of 64 finished in 3 s says; without a latency, or with a
// client whose own gaps leave the count far under it, the count stands.
func TestProbeThroughputByLittlesLaw(t *testing.T) {
	probe := func(perS float64, mean time.Duration) Level {
		return Level{Target: conc(128), Step: record.Step{Client: stats.ClientStats{RequestsPerS: perS, Requests: 256,
			Latency: stats.Latency{Count: 256, Mean: mean}}}}
	}
	if x := probeThroughput(probe(85.3, 1300*time.Millisecond)); math.Abs(x-98.46) > 0.01 {
		t.Errorf("throughput %v, want 128 / 1.3 s = 98.46", x)
	}
	if x := probeThroughput(probe(85.3, 0)); x != 85.3 {
		t.Errorf("without a latency: %v, want the count's 85.3", x)
	}
	if x := probeThroughput(probe(50, 1300*time.Millisecond)); x != 50 {
		t.Errorf("a count far under Little's law: %v, want the count's 50", x)
	}
	if x := saturation([]Level{probe(85.3, 1300*time.Millisecond), probe(106.7, 2600*time.Millisecond)}); math.Abs(x-98.46) > 0.01 {
		t.Errorf("saturation %v, want the better probe by Little's law, 98.46", x)
	}
}

// TestCapacityGridStartsAtAQuarter: the rates run from 5% to 110% of the
// saturated throughput in steps of 5%, and the search measures 25% first:
// when it passes, the highest next; when it misses, the lowest, then
// halving between the lowest and it.
func TestCapacityGridStartsAtAQuarter(t *testing.T) {
	g := (&Capacity{}).grid(1000)
	if n := len(g.Levels); n != 22 || g.Levels[0].Rate != 50 || g.Levels[n-1].Rate != 1100 || g.Levels[g.Start].Rate != 250 {
		t.Errorf("grid %v from %d, want 50/s to 1100/s in steps of 50, from 250/s", g.Levels, g.Start)
	}
	tried := func(capacity float64) []float64 {
		var done []Level
		var rates []float64
		for {
			next, ok := g.Next(done)
			if !ok {
				return rates
			}
			rates = append(rates, next.Rate)
			done = append(done, Level{Target: next, Pass: next.Rate <= capacity})
		}
	}
	if got := tried(730); !slices.Equal(got, []float64{250, 1100, 650, 850, 750, 700}) {
		t.Errorf("capacity 730: tried %v", got)
	}
	if got := tried(120); !slices.Equal(got, []float64{250, 50, 150, 100}) {
		t.Errorf("capacity 120: tried %v", got)
	}
	if got := tried(20); !slices.Equal(got, []float64{250, 50}) {
		t.Errorf("capacity 20: tried %v", got)
	}
	if n := (&Capacity{Concurrency: 4096, Repeat: 3}).Total(); n != 1+g.Total()+2+MaxStepDowns*3 {
		t.Errorf("Total %d, want a probe, the grid's %d steps and the repeats", n, g.Total())
	}
}

// TestCapacityStopsProbingAQueuedServer: a probe whose requests wait in
// Triton's queue about as long as they compute kept every instance busy:
// the search goes on to the rates without a second probe. Without queue
// statistics it probes twice as many.
func TestCapacityStopsProbingAQueuedServer(t *testing.T) {
	c := &Capacity{Concurrency: 128, Base: load.Target{Mode: load.Rate}}
	first, _ := c.Next(nil)
	probe := Level{Target: first, Step: record.Step{Client: stats.ClientStats{RequestsPerS: 96},
		Server: record.ServerSummary{ServerStats: stats.ServerStats{Available: true, SuccessCount: 288,
			Queue: 600 * time.Millisecond, ComputeInfer: 650 * time.Millisecond}}}}
	if next, ok := c.Next([]Level{probe}); !ok || !next.Open() {
		t.Errorf("after a queued probe: %v, want the first rate", next)
	}
	probe.Step.Server = record.ServerSummary{}
	if next, ok := c.Next([]Level{probe}); !ok || next != conc(256) {
		t.Errorf("after a probe without statistics: %v, want the probe at 256", next)
	}
}

// TestPlanLimitNamesThePipelineStep: a pipeline's failing level whose
// diagnosis names a step (where its requests queue) has the plan's limit
// quote that finding, whatever came before it.
func TestPlanLimitNamesThePipelineStep(t *testing.T) {
	slo := SLO{Percentile: 99, Threshold: 100 * time.Millisecond}
	levels := []Level{
		rateLevel(100, 0.2, 100*time.Microsecond, true, 10*time.Millisecond),
		rateLevel(200, 0.4, 30*time.Millisecond, false, 140*time.Millisecond),
	}
	levels[1].Step.Diagnosis = []stats.Finding{
		{Verdict: stats.OutsideTriton, Message: "time outside Triton: ..."},
		{Verdict: stats.Queueing, Step: "classifier", Message: "queueing in classifier: 31.2 ms of the 42.0 ms a request spends in Triton waits in its queue (its compute 10.1 ms); more load only adds latency"},
	}
	p, err := MakePlan(levels, 0, PlanOptions{TargetRate: 300, SLO: slo, Deployment: "triton", Model: "pipeline", Burst: DefaultBurst})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Limit, "rate 200/s p99 latency reached 140.0 ms (queueing in classifier: 31.2 ms") {
		t.Errorf("limit %q, want the step named", p.Limit)
	}
	// Without a finding that names a step, the first is quoted, as before.
	levels[1].Step.Diagnosis = levels[1].Step.Diagnosis[:1]
	if p, _ = MakePlan(levels, 0, PlanOptions{TargetRate: 300, SLO: slo, Deployment: "triton", Model: "m", Burst: DefaultBurst}); !strings.Contains(p.Limit, "(time outside Triton") {
		t.Errorf("limit %q", p.Limit)
	}
}
