package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// TestPlanOnTheDemo runs tritontop plan against the demo's resnet50, as the
// README shows, with the binary as users build it (not under the race
// detector, which would measure its own slowness): it must print a plan
// whose numbers follow from its measured capacity, and a
// HorizontalPodAutoscaler that Kubernetes' own types read.
func TestPlanOnTheDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a plan of about a minute")
	}
	bin := buildBinary(t)
	begin := time.Now()
	cmd := exec.Command(bin, "plan", "--demo", "--slo", "p99:100ms", "--target-rate", "3000", "--json")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	took := time.Since(begin)
	stdout, stderr := out.String(), errb.String()
	if err != nil {
		t.Fatalf("%v: %s", err, lastLines(stderr, 5))
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	p := sum.Plan
	if p == nil || sum.Search == nil || sum.Search.Mode != "capacity" {
		t.Fatalf("no plan: search %+v", sum.Search)
	}
	t.Logf("plan in %v: %.1f req/s per replica at %s; %d replicas, %d GPUs; %s %v; limit: %s",
		took.Round(time.Second), p.Capacity, p.CapacityLevel, p.Replicas, p.GPUs, p.Autoscaling, p.AutoscalingTarget, p.Limit)
	best := sum.Steps[sum.Search.Best]
	if best.Measurement == nil || best.Measurement.SLO == nil || !best.Measurement.SLO.Pass || !best.Load.Open() {
		t.Fatalf("the plan's level %+v did not pass the SLO in open loop", best.Load)
	}
	if best.Client.RequestsPerS != p.Capacity || best.Measurement.SLO.Latency >= 100*time.Millisecond {
		t.Errorf("capacity %.1f is not the passing level's throughput %.1f (p99 %v)", p.Capacity, best.Client.RequestsPerS,
			best.Measurement.SLO.Latency)
	}
	// Replicas: ceil(target/capacity), plus one when the headroom is
	// under 20%.
	want := int(math.Ceil(3000 / p.Capacity))
	if float64(want)*p.Capacity/3000-1 < plan.SpareHeadroom {
		want++
	}
	if p.Replicas != want || p.GPUs != p.Replicas*p.GPUsPerReplica || p.GPUsPerReplica != 2 {
		t.Errorf("%d replicas and %d GPUs (%d per replica) for %.1f req/s each; want %d replicas of 2 GPUs", p.Replicas,
			p.GPUs, p.GPUsPerReplica, p.Capacity, want)
	}
	if len(p.Assumptions) < 4 || p.Limit == "" {
		t.Errorf("plan without its assumptions or limit: %+v", p)
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
	for _, want := range []string{"Capacity plan", fmt.Sprintf("%d replicas", p.Replicas), "What limits it: " + p.Limit,
		"Assumptions:", "kind: HorizontalPodAutoscaler"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, text.String())
		}
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
