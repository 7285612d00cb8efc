package report

import (
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestWritePlanReadsAsPrinted: each autoscaling signal reads in its own
// unit, a queue time of tens of milliseconds in whole microseconds.
func TestWritePlanReadsAsPrinted(t *testing.T) {
	p := &record.Plan{
		TargetRate: 50, Capacity: 6.3, CapacityLevel: stats.Load{Mode: load.Rate, Rate: 6.43},
		Limit: "at rate 7.07/s TTFT p99 reached 900 ms", Replicas: 9, Spare: true, Headroom: 0.134,
		GPUs: 9, GPUsPerReplica: 1, MinReplicas: 9, MaxReplicas: 18,
		Autoscaling: "queue-time", AutoscalingTarget: 14330, Assumptions: []string{"replicas scale linearly"},
		HPA: "kind: HorizontalPodAutoscaler",
	}
	for _, c := range []struct {
		metric string
		target float64
		want   string
	}{
		{"queue-time", 14330, "9 to 18 replicas on 14330 µs of queue time per request."},
		{"gpu-utilization", 0.85, "9 to 18 replicas on 85% average GPU utilization."},
		{"pending-requests", 12, "9 to 18 replicas on 12 pending requests per pod."},
	} {
		p.Autoscaling, p.AutoscalingTarget = c.metric, c.target
		var b strings.Builder
		if err := WritePlan(&b, p); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{c.want, "One replica holds 6.3 req/s (rate 6.43/s) under the SLO.",
			"For 50 req/s: 9 replicas, one of them spare (headroom 13%), 9 GPUs in all (1 per replica).",
			"    - replicas scale linearly\n", "HorizontalPodAutoscaler (autoscaling/v2):\nkind: HorizontalPodAutoscaler\n"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: plan lacks %q:\n%s", c.metric, want, b.String())
			}
		}
	}
}

// TestWritePlanOutputTokens: an LLM's capacity reads in output tokens per
// second as well; a plan without them has no such line.
func TestWritePlanOutputTokens(t *testing.T) {
	p := &record.Plan{TargetRate: 10, Capacity: 2.5, CapacityLevel: stats.Load{Mode: load.Rate, Rate: 2.5}, CapacityTokensPerS: 160.04}
	var b strings.Builder
	if err := WritePlan(&b, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "One replica holds 2.5 req/s (rate 2.5/s) under the SLO.\n  That is 160.0 output tokens/s.\n") {
		t.Errorf("plan:\n%s", b.String())
	}
	p.CapacityTokensPerS = 0
	b.Reset()
	_ = WritePlan(&b, p)
	if strings.Contains(b.String(), "tokens") {
		t.Errorf("a plan without token counts:\n%s", b.String())
	}
}
