package stats

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// demoSim starts a simulator of the demo repository, dials it over gRPC
// and builds model's requests (zero data); both close when the test ends.
func demoSim(t *testing.T, ctx context.Context, model string, eng sim.EngineOptions) (*sim.Server, triton.Client, []*triton.InferRequest) {
	t.Helper()
	srv, err := sim.Start(ctx, sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(), Engine: eng,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	md, err := client.ModelMetadata(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := client.ModelConfig(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{Data: triton.InputDataZero})
	if err != nil {
		t.Fatal(err)
	}
	return srv, client, reqs
}

// simRun drives resnet50 on a fresh simulator with load for d through a
// Collector ticking every interval, and returns the snapshots and the
// simulator's own statistics before and after.
func simRun(t *testing.T, load load.Target, d, interval time.Duration) (snaps []Snapshot, before, after *pb.InferStatistics) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const model = "resnet50"
	srv, client, reqs := demoSim(t, ctx, model, sim.EngineOptions{MetricsInterval: 200 * time.Millisecond})
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	sys, err := NewSystemSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before = simStats(t, srv, model)
	col := NewCollector(CollectorOptions{
		Interval: interval,
		// Generous for a loaded test machine; a tick waits only as long as
		// the reads take.
		ReadWait: interval / 2,
		Results:  drv.Results(),
		Control:  drv,
		Server:   NewServerPoller(client, model, ""),
		Metrics:  NewMetricsScraper("http://"+srv.MetricsAddr()+"/metrics", &http.Client{}, model, ""),
		System:   sys,
	})
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	time.AfterFunc(d, func() { drv.Stop(time.Second) })
	snaps, err = collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	return snaps, before, simStats(t, srv, model)
}

// TestCollectorAgainstSimulator drives resnet50 on the simulator at
// concurrency 8 for 4 s and checks that the ticks agree with the simulator's
// own statistics over the same span.
func TestCollectorAgainstSimulator(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("4 s load run")
	}
	snaps, before, after := simRun(t, load.Target{Mode: load.Concurrency, Concurrency: 8}, 4*time.Second, time.Second)
	if len(snaps) < 4 {
		t.Fatalf("%d ticks in 4 s at 1 s, want at least 4", len(snaps))
	}

	var succ, queueNs, inferNs, inferences, executions int64
	var gpuBusy bool
	var serverMissing, idle, metricsMissing int
	// The first tick includes the driver's start and the last one is
	// partial; the ticks between are at full load.
	for _, s := range snaps[1 : len(snaps)-1] {
		if s.Tick.Errors != 0 {
			t.Errorf("tick %d: %d errors: %+v", s.Seq, s.Tick.Errors, s.Tick.ErrorsByCode)
		}
		if s.Tick.RequestsPerS <= 0 || s.Tick.Latency.P50 <= 0 {
			// A starved test machine can stall the whole loop for a tick.
			idle++
			continue
		}
		if s.Tick.Scheduled != nil || s.ScheduledHistogram != "" {
			t.Errorf("tick %d: closed loop with a scheduled latency", s.Seq)
		}
		if s.Load.Concurrency != 8 || s.Load.InFlight > 8 {
			t.Errorf("tick %d load = %+v", s.Seq, s.Load)
		}
		if !s.Metrics.Available {
			// Only when no scrape has answered yet: later ticks repeat
			// the last reading.
			t.Logf("tick %d metrics = %+v", s.Seq, s.Metrics)
			metricsMissing++
		}
		for _, g := range s.Metrics.GPUs {
			// The simulator exports every GPU gauge Triton does; an
			// idle 0% read before the load reached it is left out.
			if !g.HasUtilization && !gpuBusy && s.Seq <= 3 {
				continue
			}
			gpuBusy = gpuBusy || g.Utilization > 0
			if !g.HasUtilization || !g.HasMemory || !g.HasPower {
				t.Errorf("tick %d GPU %s lacks a gauge: %+v", s.Seq, g.UUID, g)
			}
		}
		if s.System.ProcessCPU <= 0 || s.System.CPUPerRequest <= 0 || s.System.HostCPU <= 0 {
			t.Errorf("tick %d client CPU = %+v", s.Seq, s.System)
		}
		if s.Server.Reset {
			t.Fatalf("tick %d server stats = %+v", s.Seq, s.Server)
		}
		if !s.Server.Available {
			// A read slower than ReadWait carries over to the next tick.
			serverMissing++
			continue
		}
	}
	if full := len(snaps) - 2; idle > full/2 {
		t.Errorf("%d of %d full ticks show no throughput", idle, full)
	}
	for _, s := range snaps {
		succ += s.Server.SuccessCount
		queueNs += int64(s.Server.Queue) * s.Server.SuccessCount
		inferNs += int64(s.Server.ComputeInfer) * s.Server.SuccessCount
		inferences += s.Server.InferenceCount
		executions += s.Server.ExecutionCount
		if s.Server.ExecutionCount > 0 && s.Server.AvgBatch != float64(s.Server.InferenceCount)/float64(s.Server.ExecutionCount) {
			t.Errorf("tick %d average batch %v of %d inferences in %d executions", s.Seq, s.Server.AvgBatch, s.Server.InferenceCount, s.Server.ExecutionCount)
		}
	}
	if avg := float64(inferences) / float64(executions); !(avg > 1) {
		t.Errorf("average batch %.2f at concurrency 8 with dynamic batching, want > 1", avg)
	}
	if serverMissing > 1 {
		t.Errorf("%d of %d full ticks without server statistics", serverMissing, len(snaps)-2)
	}
	if metricsMissing > 1 {
		t.Errorf("%d of %d full ticks without metrics", metricsMissing, len(snaps)-2)
	}
	if !gpuBusy {
		t.Error("no tick showed a busy simulated GPU")
	}
	simSucc := after.Success.Count - before.Success.Count
	simQueue := float64(after.Queue.Ns-before.Queue.Ns) / float64(after.Queue.Count-before.Queue.Count)
	simInfer := float64(after.ComputeInfer.Ns-before.ComputeInfer.Ns) / float64(after.ComputeInfer.Count-before.ComputeInfer.Count)
	ourQueue := float64(queueNs) / float64(succ)
	ourInfer := float64(inferNs) / float64(succ)
	t.Logf("%d ticks; server successes %d (sim %d); queue %.0f ns (sim %.0f); infer %.0f ns (sim %.0f); last run %.0f req/s",
		len(snaps), succ, simSucc, ourQueue, simQueue, ourInfer, simInfer, snaps[len(snaps)-1].Run.RequestsPerS)
	within := func(what string, got, want float64) {
		if math.Abs(got-want) > 0.1*want {
			t.Errorf("%s = %.0f, simulator says %.0f (more than 10%% apart)", what, got, want)
		}
	}
	within("successes", float64(succ), float64(simSucc))
	within("queue ns", ourQueue, simQueue)
	within("compute infer ns", ourInfer, simInfer)
	// Requests the drain cut off count as cancelled here but may still
	// have succeeded on the server.
	if run := snaps[len(snaps)-1].Run; run.Successes > int64(simSucc) || run.Successes+run.Cancelled < int64(simSucc) {
		t.Errorf("client counted %d successes and %d cancelled, simulator %d successes", run.Successes, run.Cancelled, simSucc)
	}
}

// simStats reads the simulator's statistics of model straight from its
// engine.
func simStats(t *testing.T, srv *sim.Server, model string) *pb.InferStatistics {
	t.Helper()
	resp, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	st := pickVersion(resp.GetModelStats(), model, "")
	if st == nil {
		t.Fatalf("simulator has no statistics for %s", model)
	}
	return st.GetInferenceStats()
}

// TestCollectorOpenLoopAgainstSimulator checks the open-loop path: rate mode
// reported from the driver's Control, and latency from the schedule.
func TestCollectorOpenLoopAgainstSimulator(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("2 s load run")
	}
	snaps, _, _ := simRun(t, load.Target{Mode: load.Rate, Rate: 100}, 2*time.Second, 500*time.Millisecond)
	var sent int64
	for _, s := range snaps {
		if s.Load.Mode != load.Rate || s.Load.Rate != 100 || s.Load.Distribution != load.Constant {
			t.Errorf("tick %d load = %+v", s.Seq, s.Load)
		}
		if s.Tick.Scheduled == nil || s.Run.Scheduled == nil {
			t.Fatalf("tick %d: open loop without scheduled latency", s.Seq)
		}
		if s.Tick.Successes > 0 && (s.ScheduledHistogram == "" || s.Tick.Scheduled.Max < s.Tick.Latency.Max) {
			t.Errorf("tick %d: scheduled latency %+v below latency from send %+v", s.Seq, *s.Tick.Scheduled, s.Tick.Latency)
		}
		sent += s.Tick.Requests + s.Tick.Cancelled
	}
	// About 200 requests issued in 2 s: open loop sends every scheduled
	// request however late, but on a starved machine many of them are
	// still in flight at the end and the drain cancels them.
	if sent < 100 || sent > 260 {
		t.Errorf("%d requests issued at 100/s for 2 s", sent)
	}
}

// TestCollectorPrimedCountsEveryRequest: a collector primed before the
// driver's first request counts in its ticks' server statistics every
// request the simulator served, even when it starts running well after
// the driver (as a run's collector does, a little); unprimed, the requests
// before its own first reading would be in no tick.
func TestCollectorPrimedCountsEveryRequest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("1 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const model = "simple"
	srv, client, reqs := demoSim(t, ctx, model, sim.EngineOptions{})
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs, Load: load.Target{Mode: load.Concurrency, Concurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	before := simStats(t, srv, model).GetSuccess().GetCount()
	col := NewCollector(CollectorOptions{
		Interval: 500 * time.Millisecond, ReadWait: 400 * time.Millisecond,
		Results: drv.Results(), Control: drv, Epoch: drv.Epoch(),
		Server: NewServerPoller(client, model, ""),
	})
	col.Prime(ctx)
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	time.Sleep(100 * time.Millisecond)
	time.AfterFunc(time.Second, func() { drv.Stop(5 * time.Second) })
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	served := simStats(t, srv, model).GetSuccess().GetCount() - before
	var counted int64
	for _, s := range snaps {
		if s.Server.Reset {
			t.Fatalf("tick %d: server statistics reset", s.Seq)
		}
		counted += s.Server.SuccessCount
	}
	if last := snaps[len(snaps)-1]; !last.Server.Available {
		t.Skipf("the last tick's statistics read did not answer within the wait (%s): nothing to compare", last.Server.Err)
	}
	run := snaps[len(snaps)-1].Run
	t.Logf("simulator served %d, ticks counted %d; the client %d successes", served, counted, run.Successes)
	if counted != int64(served) || run.Successes != int64(served) {
		t.Errorf("ticks counted %d server successes and the client %d, the simulator served %d", counted, run.Successes, served)
	}
}
