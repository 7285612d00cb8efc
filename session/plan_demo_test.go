package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
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
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/stats"
)

// planHostBusy is the share of the host's CPU time busy over d, from
// /proc/stat: what others run on the machine before a test starts.
func planHostBusy(t *testing.T, d time.Duration) float64 {
	t.Helper()
	read := func() (busy, total float64) {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			t.Skipf("no /proc/stat: %v", err)
		}
		f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
		for i, v := range f[1:] {
			x, _ := strconv.ParseFloat(v, 64)
			total += x
			if i != 3 && i != 4 { // idle, iowait
				busy += x
			}
		}
		return busy, total
	}
	b0, t0 := read()
	time.Sleep(d)
	b1, t1 := read()
	if t1 == t0 {
		return 0
	}
	return (b1 - b0) / (t1 - t0)
}

// planNeedQuietHost skips a test that measures where the time goes when
// the host is already busy with other work: the client would be bound by
// others' load, which is what the test must not see.
//
// Such tests are named TestQuiet…: .ci/run runs them alone, with
// TRITONTOP_QUIET_PASS=1, after the suite and before its stress pass; in a
// plain `go test ./...` other packages' tests run beside them, so there
// they skip. They are not parallel, so that the package's parallel tests
// wait while they run.
func planNeedQuietHost(t *testing.T) {
	t.Helper()
	if os.Getenv("TRITONTOP_QUIET_PASS") == "" {
		t.Skip("needs the host to itself: run alone by .ci/run's quiet pass (TRITONTOP_QUIET_PASS=1 go test -run '^TestQuiet' ./session)")
	}
	if b := planHostBusy(t, time.Second); b > 0.5 {
		t.Skipf("the host is %.0f%% busy before the test: a measurement of where tritontop's time goes needs a host not loaded by others", 100*b)
	}
}

// planDemo is tritontop demo's run in this process (the simulator with
// its demo models, the GPU sized to this host), its calibration cached in
// cache rather than the user's cache directory; headless, JSON summary.
func planDemo(cache string) session.Config {
	c := session.Defaults()
	c.Demo = &session.DemoConfig{CacheDir: cache}
	c.Headless, c.JSON = true, true
	return c
}

// planRunSummary runs c, within 5 minutes (a plan of the demo takes about
// one), and returns its JSON summary and what it printed on standard
// error; the run must succeed.
func planRunSummary(t *testing.T, c session.Config) (record.Summary, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := session.Run(ctx, c, &stdout, &stderr); err != nil {
		t.Fatalf("run failed: %v\nstderr:\n%s", err, stderr.String())
	}
	var sum record.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary JSON: %v\n%s", err, stdout.String())
	}
	return sum, stderr.String()
}

// planServerLimited reports whether the diagnosis of the plan's capacity
// level and of the failing level above it name the server (queue or GPU)
// and never the client.
func planServerLimited(sum record.Summary) (bool, string) {
	p := sum.Plan
	var why []string
	server := false
	for _, st := range sum.Steps {
		if !st.Load.Open() || st.Load.Rate < p.CapacityLevel.Rate {
			continue
		}
		for _, f := range st.Diagnosis {
			why = append(why, fmt.Sprintf("%s: %s", st.Load, f.Verdict))
			switch f.Verdict {
			case stats.ClientBound, stats.FallingBehind:
				return false, strings.Join(why, "; ")
			case stats.Queueing, stats.ComputeBound:
				server = true
			}
		}
	}
	return server, strings.Join(why, "; ")
}

// planCheckDemo holds a plan of the demo for target req/s under a p99 SLO
// of slo (sum, its summary) to what it prints: a capacity search whose
// level passed the SLO in open loop, the capacity the lowest passing
// measurement, the replicas and GPUs that follow from it, headroom and a
// scale range, its assumptions, limit and simulated label, an
// autoscaling/v2 HPA that Kubernetes' own types read, and the text form
// saying the same.
func planCheckDemo(t *testing.T, sum record.Summary, target float64, slo time.Duration) {
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

	// The text form, as printed without JSON, says the same.
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

// planCheckSteady drives the planned capacity level of sum as a steady
// open loop on the same demo GPU (the cache the plan calibrated into),
// for planSteadyRun, and 1.3 times it: the first holds the SLO, the second
// does not. Only a plan the server limited claims that: one the client
// limited is a lower bound.
func planCheckSteady(t *testing.T, cache string, sum record.Summary, slo time.Duration) {
	t.Helper()
	p := sum.Plan
	if p.ClientBound {
		t.Errorf("the client limited the plan (%s): the steady runs would measure the client", p.Limit)
		return
	}
	steady := func(rate float64) record.Summary {
		c := planDemo(cache)
		c.RequestRate, c.Duration = rate, planSteadyRun
		s, _ := planRunSummary(t, c)
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

// planSteadyRun is the length of planCheckSteady's runs: at 1.3 times the
// capacity the backlog grows by 0.3 s of the server's work every second,
// so that by the end of 5 s the last requests wait over a second, twice
// the SLO.
const planSteadyRun = 5 * time.Second

// TestQuietPlanRepeatable is issue 20's must-show: plan the demo three
// times on this machine, as a user runs `tritontop plan --demo` (the first
// run calibrates the demo GPU to the host, the others reuse it):
// capacities within ±10% of their median, replica counts within 1, the
// limit the server's, and every output says the server was simulated.
// Each plan is held to what it prints (planCheckDemo), and the first one's
// capacity, driven as a steady open loop on the same GPU, holds the SLO
// where 1.3 times it does not (planCheckSteady). On a host loaded by
// others the client's lateness bends every latency, so CI's quiet pass
// runs it alone. The plans measure as the old command line did (-p 1000,
// the plan's own 500 ms tick and 6 trials): what is checked is what a user
// gets.
func TestQuietPlanRepeatable(t *testing.T) {
	if testing.Short() {
		t.Skip("three plans of about a minute each")
	}
	planNeedQuietHost(t)
	cache := t.TempDir()
	var caps []float64
	var reps []int
	for i := range 3 {
		begin := time.Now()
		c := planDemo(cache)
		pc := session.DefaultPlan()
		pc.TargetRate = 1000
		c.Plan, c.SLO.Specs, c.MeasurementIntervalMS = &pc, []string{"p99:500ms"}, 500
		sum, stderr := planRunSummary(t, c)
		took := time.Since(begin).Round(time.Second)
		p := sum.Plan
		if p == nil {
			t.Fatalf("run %d: no plan in the summary:\n%s", i+1, stderr)
		}
		t.Logf("run %d in %v: %.1f req/s (%s), %d replicas; %s; limit %s", i+1, took, p.Capacity, p.CapacityBasis, p.Replicas, p.DemoGPU, p.Limit)
		if ok, why := planServerLimited(sum); !ok {
			t.Errorf("run %d: the limit is not the server's: %s", i+1, why)
		}
		var text strings.Builder
		if err := report.WritePlan(&text, p); err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]string{"text": text.String(), "HPA": p.HPA, "stderr": stderr} {
			if !strings.Contains(s, "simulator") && !strings.Contains(s, "demo GPU sized") {
				t.Errorf("run %d: the %s does not say the server was simulated", i+1, what)
			}
		}
		if !p.Simulated || p.DemoGPU == "" {
			t.Errorf("run %d: the plan's JSON does not say simulated", i+1)
		}
		if strings.Contains(stderr, "client host near full") {
			t.Errorf("run %d: the client host was near full:\n%s", i+1, stderr)
		}
		planCheckDemo(t, sum, 1000, 500*time.Millisecond)
		if i == 0 {
			planCheckSteady(t, cache, sum, 500*time.Millisecond)
		}
		caps, reps = append(caps, p.Capacity), append(reps, p.Replicas)
	}
	sorted := slices.Clone(caps)
	slices.Sort(sorted)
	med := sorted[1]
	for _, c := range caps {
		if math.Abs(c/med-1) > 0.10 {
			t.Errorf("capacities %v: %v is more than 10%% from their median %v", caps, c, med)
		}
	}
	if slices.Max(reps)-slices.Min(reps) > 1 {
		t.Errorf("replica counts %v differ by more than 1", reps)
	}
}

// TestQuietDemoDefaultIsServerBound: tritontop demo at its default load,
// on a host not loaded by others, is limited by the server (queue or GPU)
// and never by the client: its GPU is sized to what the host drives. The
// run lasts the diagnosis's span at the demo's own 1 s tick
// (stats.DiagnoseTicks) and a tick of warm-up.
func TestQuietDemoDefaultIsServerBound(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates the demo GPU and runs the demo for 6 s")
	}
	planNeedQuietHost(t)
	c := planDemo(t.TempDir())
	c.Duration = time.Duration(stats.DiagnoseTicks+1) * c.Tick
	sum, stderr := planRunSummary(t, c)
	if !strings.Contains(stderr, "demo GPU sized to this host") {
		t.Errorf("the demo does not say how its GPU was sized:\n%s", stderr)
	}
	server := false
	for _, f := range sum.Diagnosis {
		switch f.Verdict {
		case stats.ClientBound, stats.FallingBehind:
			t.Errorf("the demo's default load is client-bound: %s", f.Message)
		case stats.Queueing, stats.ComputeBound:
			server = true
		}
	}
	if !server {
		t.Errorf("the diagnosis names neither the queue nor the GPU: %+v", sum.Diagnosis)
	}
}
