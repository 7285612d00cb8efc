package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// checkDemoPlan holds a plan of `plan --demo --target-rate target --json`
// (sum, its summary) to what it prints: a capacity search whose level
// passed the SLO in open loop, the capacity the lowest passing measurement,
// the replicas and GPUs that follow from it, headroom and a scale range, its
// assumptions, limit and simulated label, an autoscaling/v2 HPA that
// Kubernetes' own types read, and the text form saying the same.
func checkDemoPlan(t *testing.T, sum record.Summary, target float64, slo time.Duration) {
	t.Helper()
	p := sum.Plan
	if sum.Search == nil || sum.Search.Mode != "capacity" {
		t.Fatalf("no capacity search: %+v", sum.Search)
	}
	best := sum.Steps[sum.Search.Best]
	if best.Measurement == nil || best.Measurement.SLO == nil || !best.Measurement.SLO.Pass || !best.Load.Open() {
		t.Fatalf("the plan's level %+v did not pass the SLO in open loop", best.Load)
	}
	// The capacity is the lowest passing measurement the plan rests on:
	// the search's own and its repeats, all of one rate when they held.
	if len(p.Repeats) == 0 || !slices.Contains(p.Repeats, p.Capacity) || best.Measurement.SLO.Latency >= slo {
		t.Errorf("capacity %.1f, repeats %v, the search's level %.1f (p99 %v)", p.Capacity, p.Repeats, best.Client.RequestsPerS,
			best.Measurement.SLO.Latency)
	}
	if p.RepeatsAgree {
		if len(p.Repeats) != plan.DefaultRepeat {
			t.Errorf("%d repeats that agree, want %d", len(p.Repeats), plan.DefaultRepeat)
		}
		for _, st := range sum.Steps[len(sum.Steps)-plan.DefaultRepeat+1:] {
			if st.Load.Target() != best.Load.Target() {
				t.Errorf("a repeat at %s, not the capacity level %s", st.Load, best.Load)
			}
		}
	}
	if want := plan.ReplicasFor(target, p.Capacity); p.Replicas != want || p.GPUs != p.Replicas*p.GPUsPerReplica || p.GPUsPerReplica != 2 {
		t.Errorf("%d replicas and %d GPUs (%d per replica) for %.1f req/s each; want %d replicas of 2 GPUs", p.Replicas,
			p.GPUs, p.GPUsPerReplica, p.Capacity, want)
	}
	if p.Headroom < plan.SpareHeadroom || p.MinReplicas >= p.MaxReplicas {
		t.Errorf("headroom %.3f, replicas %d to %d", p.Headroom, p.MinReplicas, p.MaxReplicas)
	}
	if len(p.Assumptions) < 4 || p.Limit == "" || !p.Simulated || p.DemoGPU == "" {
		t.Errorf("plan without its assumptions, limit or simulated label: %+v", p)
	}
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := sigsyaml.UnmarshalStrict([]byte(p.HPA), &hpa); err != nil {
		t.Fatalf("the plan's YAML is not an autoscaling/v2 HorizontalPodAutoscaler: %v\n%s", err, p.HPA)
	}
	if hpa.APIVersion != "autoscaling/v2" || hpa.Kind != "HorizontalPodAutoscaler" || hpa.Spec.MinReplicas == nil ||
		int(*hpa.Spec.MinReplicas) != p.MinReplicas || int(hpa.Spec.MaxReplicas) != p.MaxReplicas ||
		hpa.Spec.ScaleTargetRef.Name != "triton" || len(hpa.Spec.Metrics) != 1 {
		t.Errorf("HPA %+v does not carry the plan's replicas %d to %d", hpa.Spec, p.MinReplicas, p.MaxReplicas)
	}

	// The text form, as printed without --json, says the same.
	var text strings.Builder
	if err := report.WritePlan(&text, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Capacity plan", "SIMULATED server: tritontop's simulator", fmt.Sprintf("%d replicas", p.Replicas),
		"What limits it: " + p.Limit, "Assumptions:", "kind: HorizontalPodAutoscaler"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, text.String())
		}
	}

}

// checkSteady drives the planned capacity level of sum as a steady open
// loop for 15 s on the same demo GPU (the cache the plan calibrated into),
// and 1.3 times it: the first holds the SLO, the second does not. Only a
// plan the server limited claims that: one the client limited is a lower
// bound.
func checkSteady(t *testing.T, bin, cache string, sum record.Summary, slo time.Duration) {
	t.Helper()
	p := sum.Plan
	if p.ClientBound {
		t.Errorf("the client limited the plan (%s): the steady runs would measure the client", p.Limit)
		return
	}
	steady := func(rate float64) record.Summary {
		code, stdout, stderr := planRun(t, bin, cache, "demo", "--headless",
			"--request-rate", strconv.FormatFloat(rate, 'f', 1, 64), "--duration", "15s", "--json")
		if code != 0 {
			t.Fatalf("steady %.1f req/s: exit %d: %s", rate, code, lastLines(stderr, 5))
		}
		var s record.Summary
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			t.Fatalf("steady %.1f req/s: %v", rate, err)
		}
		return s
	}
	p99 := func(s record.Summary) time.Duration {
		if s.Client.Scheduled != nil {
			return s.Client.Scheduled.P99
		}
		return s.Client.Latency.P99
	}
	rate := p.CapacityLevel.Rate
	begin := time.Now()
	at, over := steady(rate), steady(1.3*rate)
	t.Logf("steady at %.1f req/s: p99 %v; at %.1f: p99 %v (both in %v)", rate, p99(at), 1.3*rate, p99(over), time.Since(begin).Round(time.Second))
	if p99(at) >= slo || at.Client.Errors > 0 {
		t.Errorf("the planned capacity %.1f req/s missed the SLO as a steady run: p99 %v, %d errors", rate, p99(at), at.Client.Errors)
	}
	if p99(over) < slo {
		t.Errorf("1.3 × the capacity (%.1f req/s) still met the SLO: p99 %v; the plan left capacity unused", 1.3*rate, p99(over))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestQueueBoundRunSaysSo: a server with one instance, no batching and
// 10 ms per request, at 8 requests in flight, keeps 7 of them waiting: the
// headless lines and the summary name server queueing as the limit.
func TestQueueBoundRunSaysSo(t *testing.T) {
	m := batchingModel("single", 1, 0, 10, 0)
	m.MaxBatchSize, m.DynamicBatching = 0, nil
	srv := startSimWith(t, m)
	code, stdout, stderr := runCLI("-m", "single", "-u", srv.GRPCAddr(), "--metrics-url", "http://"+srv.MetricsAddr()+"/metrics",
		"--concurrency", "8", "--duration", "4s", "--tick", "500ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	queued := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "⚠ server queueing") {
			queued++
		}
	}
	if queued < 3 {
		t.Errorf("%d progress lines name server queueing, want most of the 8:\n%s", queued, stderr)
	}
	if !strings.Contains(stdout, "What limits the load:\n") || !strings.Contains(stdout, "  ⚠ server queueing: requests wait") {
		t.Errorf("summary does not name server queueing:\n%s", stdout)
	}
}
