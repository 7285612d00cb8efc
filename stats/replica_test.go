package stats

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

func TestAggregateServer(t *testing.T) {
	a := ServerStats{Available: true, Model: "m", Version: "1", SuccessCount: 100, FailCount: 1,
		InferenceCount: 400, ExecutionCount: 50, Request: 10 * time.Millisecond, Queue: 4 * time.Millisecond,
		ComputeInput: time.Millisecond, ComputeInfer: 3 * time.Millisecond, ComputeOutput: time.Millisecond,
		Batches: []BatchCount{{4, 30}, {8, 20}}}
	b := ServerStats{Available: true, Model: "m", Version: "1", SuccessCount: 300, InferenceCount: 300,
		ExecutionCount: 300, Request: 2 * time.Millisecond, Queue: 0, ComputeInfer: time.Millisecond,
		ComputeInput: 200 * time.Microsecond, ComputeOutput: 200 * time.Microsecond,
		Batches: []BatchCount{{1, 300}}}
	down := ServerStats{Model: "m", Err: "model statistics of \"m\": connection refused"}
	got := AggregateServer([]ServerStats{a, down, b})
	want := ServerStats{Available: true, Model: "m", Version: "1", SuccessCount: 400, FailCount: 1,
		InferenceCount: 700, ExecutionCount: 350,
		// (100×10 + 300×2) / 400 ms, (100×4 + 300×0) / 400 ms, ...
		Request: 4 * time.Millisecond, Queue: time.Millisecond,
		ComputeInput: 400 * time.Microsecond, ComputeInfer: 1500 * time.Microsecond, ComputeOutput: 400 * time.Microsecond,
		Overhead: 700 * time.Microsecond, AvgBatch: 2,
		Batches: []BatchCount{{1, 300}, {4, 30}, {8, 20}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("aggregate\n got %+v\nwant %+v", got, want)
	}
	if one := AggregateServer([]ServerStats{a}); !reflect.DeepEqual(one.Batches, a.Batches) || one.Queue != a.Queue || one.Overhead != a.Request-a.Queue-a.Compute() {
		t.Errorf("one server's aggregate is not itself: %+v", one)
	}

	reset := ServerStats{Available: true, Reset: true, Model: "m", Version: "1"}
	if got := AggregateServer([]ServerStats{reset, b}); got.Reset || got.SuccessCount != 300 || got.Request != b.Request {
		t.Errorf("a reset server must add nothing to the others: %+v", got)
	}
	if got := AggregateServer([]ServerStats{reset, down}); !got.Available || !got.Reset {
		t.Errorf("with only a reset server answering: %+v", got)
	}
	down2 := ServerStats{Model: "m", Err: "no answer in time"}
	if got := AggregateServer([]ServerStats{down, down2, down}); got.Available || got.Err != down.Err+"; "+down2.Err {
		t.Errorf("no server answering: %+v", got)
	}
}

func TestAggregateMetrics(t *testing.T) {
	a := ServerMetrics{Available: true, GPUs: []GPU{{UUID: "GPU-0", Utilization: 0.5, HasUtilization: true, Replica: "a:8001"}},
		HasCPU: true, CPUUtilization: 0.2, CPUMemoryUsed: 1e9, CPUMemoryTotal: 8e9, HasPending: true, Pending: 3}
	b := ServerMetrics{Available: true, GPUs: []GPU{{UUID: "GPU-0", Utilization: 0.9, HasUtilization: true, Replica: "b:8001"},
		{UUID: "GPU-1", HasMemory: true, MemoryUsed: 1e9, Replica: "b:8001"}},
		HasCPU: true, CPUUtilization: 0.6, CPUMemoryUsed: 2e9, CPUMemoryTotal: 8e9}
	got := AggregateMetrics([]ServerMetrics{a, {Err: "connection refused"}, b})
	if !got.Available || len(got.GPUs) != 3 || got.GPUs[0].Replica != "a:8001" || got.GPUs[2].UUID != "GPU-1" {
		t.Errorf("GPUs: %+v", got.GPUs)
	}
	if !got.HasCPU || got.CPUUtilization != 0.4 || got.CPUMemoryUsed != 3e9 || got.CPUMemoryTotal != 16e9 {
		t.Errorf("CPU: %+v", got)
	}
	if !got.HasPending || got.Pending != 3 {
		t.Errorf("pending: %+v", got)
	}
	if none := AggregateMetrics([]ServerMetrics{{Err: "x"}, {Err: "y"}}); none.Available || none.Err != "x; y" {
		t.Errorf("no server's metrics: %+v", none)
	}
}

// TestAggregatorEndpoints: each replica's results are counted apart, and
// the replicas' counts add up to the tick's.
func TestAggregatorEndpoints(t *testing.T) {
	a := NewAggregator(time.Second, 10*time.Second)
	a.SetEndpoints(2)
	unavailable := &triton.Error{Code: codes.Unavailable, Message: "connection refused"}
	var batch []driver.Result
	for i := range 30 {
		r := driver.Result{Sent: 0, Done: time.Duration(i+1) * time.Millisecond, Inferences: 1, Endpoint: uint16(i % 3 / 2)}
		if i%10 == 9 {
			r.Code, r.Err = codes.Unavailable, unavailable
		}
		batch = append(batch, r)
	}
	batch = append(batch, driver.Result{Done: time.Millisecond, Cancelled: true, Code: codes.Canceled, Err: errors.New("cancelled"), Endpoint: 1})
	a.Add(batch)
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Replicas) != 2 {
		t.Fatalf("%d replicas", len(s.Replicas))
	}
	r0, r1 := s.Replicas[0].Tick, s.Replicas[1].Tick
	// i%3 is 0 or 1 for replica 0 (20 results), 2 for replica 1 (10); the
	// errors are i = 9, 19, 29: replicas 0, 0, 1.
	if r0.Requests != 20 || r0.Errors != 2 || r1.Requests != 10 || r1.Errors != 1 || r1.Cancelled != 1 {
		t.Errorf("replica 0 %+v\nreplica 1 %+v", r0, r1)
	}
	if r0.Requests+r1.Requests != s.Tick.Requests || r0.Successes+r1.Successes != s.Tick.Successes ||
		r0.Errors+r1.Errors != s.Tick.Errors || r0.Cancelled+r1.Cancelled != s.Tick.Cancelled {
		t.Errorf("replicas %+v and %+v do not add up to %+v", r0, r1, s.Tick)
	}
	if r1.Latency.Count != 9 || r1.Latency.Max != 27*time.Millisecond || s.Replicas[1].Histogram == "" {
		t.Errorf("replica 1 latency %+v", r1.Latency)
	}
	if len(r1.ErrorsByCode) != 1 || r1.ErrorsByCode[0].Code != "UNAVAILABLE" || r1.ErrorsByCode[0].Message != "connection refused" {
		t.Errorf("replica 1 errors %+v", r1.ErrorsByCode)
	}
	// The next tick starts empty.
	var s2 Snapshot
	if err := a.Tick(time.Second, false, &s2); err != nil {
		t.Fatal(err)
	}
	if s2.Replicas[0].Tick.Requests != 0 || s2.Replicas[1].Histogram != "" {
		t.Errorf("second tick %+v", s2.Replicas)
	}

	// Without SetEndpoints, no replica entries.
	var s3 Snapshot
	plain := NewAggregator(time.Second, time.Second)
	plain.Add(batch)
	if err := plain.Tick(time.Second, false, &s3); err != nil || s3.Replicas != nil {
		t.Errorf("replicas without SetEndpoints: %v %v", s3.Replicas, err)
	}
}

// TestSnapshotWithoutReplicasReads: a Snapshot written before replicas
// existed reads as before, and one without replicas writes no new field.
func TestSnapshotWithoutReplicasReads(t *testing.T) {
	old := `{"seq":3,"tick":{"requests":5},"server":{"available":true,"success_count":5},` +
		`"metrics":{"available":true,"gpus":[{"uuid":"GPU-0","utilization":0.5,"has_utilization":true}]}}`
	var s Snapshot
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	if s.Replicas != nil || s.Metrics.GPUs[0].Replica != "" || s.Tick.Requests != 5 || s.Server.SuccessCount != 5 {
		t.Errorf("old snapshot read as %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "replica") {
		t.Errorf("a snapshot without replicas writes %s", b)
	}
}

// TestCollectorReplicasAgainstSimulators drives two simulators through a
// balancer: every tick's replica entries add up to its aggregate, client
// and server, and over the run each replica's client successes are its
// server's.
func TestCollectorReplicasAgainstSimulators(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const model = "resnet50"
	var (
		srvs    []*sim.Server
		clients []driver.ReplicaClient
		sources []ReplicaSource
	)
	for range 2 {
		srv, err := sim.Start(ctx, sim.Config{
			GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
			Repository: sim.DemoRepository(),
			Engine:     sim.EngineOptions{MetricsInterval: 200 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		c, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		srvs, clients = append(srvs, srv), append(clients, c)
		sources = append(sources, ReplicaSource{URL: srv.GRPCAddr(),
			Server:  NewServerPoller(c, model, ""),
			Metrics: NewMetricsScraper("http://"+srv.MetricsAddr()+"/metrics", &http.Client{}, model, "")})
	}
	bal, err := driver.NewBalancer(clients, driver.BalancerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bal.Close()
	for i := range sources {
		sources[i].Up = func() bool { return bal.Up(i) }
	}
	c0 := clients[0].(triton.Client)
	md, err := c0.ModelMetadata(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c0.ModelConfig(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{Data: triton.InputDataZero})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := driver.New(driver.Options{Client: bal, Requests: reqs, Load: load.Target{Mode: load.Concurrency, Concurrency: 8}})
	if err != nil {
		t.Fatal(err)
	}
	before := []int64{int64(simStats(t, srvs[0], model).Success.Count), int64(simStats(t, srvs[1], model).Success.Count)}
	col := NewCollector(CollectorOptions{
		Interval: 500 * time.Millisecond, ReadWait: 250 * time.Millisecond,
		Results: drv.Results(), Control: drv, Epoch: drv.Epoch(), Replicas: sources,
	})
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	time.AfterFunc(3*time.Second, func() { drv.Stop(5 * time.Second) })
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}

	var client [2]int64
	var cancelled int64
	gpus := map[string]bool{}
	for _, s := range snaps {
		if len(s.Replicas) != 2 {
			t.Fatalf("tick %d: %d replicas", s.Seq, len(s.Replicas))
		}
		var req, succ, serverSucc, serverExec int64
		ngpu := 0
		for i, r := range s.Replicas {
			if r.URL != sources[i].URL || !r.Up {
				t.Errorf("tick %d replica %d: %s up %v", s.Seq, i, r.URL, r.Up)
			}
			req += r.Tick.Requests
			succ += r.Tick.Successes
			client[i] += r.Tick.Successes
			if r.Server.Available && !r.Server.Reset {
				serverSucc += r.Server.SuccessCount
				serverExec += r.Server.ExecutionCount
			}
			for _, g := range r.Metrics.GPUs {
				if g.Replica != r.URL {
					t.Errorf("tick %d: replica %s lists a GPU of %q", s.Seq, r.URL, g.Replica)
				}
				gpus[g.Replica+" "+g.UUID] = true
			}
			ngpu += len(r.Metrics.GPUs)
		}
		cancelled += s.Tick.Cancelled
		if req != s.Tick.Requests || succ != s.Tick.Successes {
			t.Errorf("tick %d: replicas' requests %d and successes %d, aggregate %d and %d", s.Seq, req, succ, s.Tick.Requests, s.Tick.Successes)
		}
		if serverSucc != s.Server.SuccessCount || serverExec != s.Server.ExecutionCount {
			t.Errorf("tick %d: replicas' server successes %d and executions %d, aggregate %d and %d",
				s.Seq, serverSucc, serverExec, s.Server.SuccessCount, s.Server.ExecutionCount)
		}
		if ngpu != len(s.Metrics.GPUs) {
			t.Errorf("tick %d: %d GPUs in the replicas, %d in the aggregate", s.Seq, ngpu, len(s.Metrics.GPUs))
		}
	}
	if len(gpus) < 2 {
		t.Errorf("GPUs seen: %v, want each replica's", gpus)
	}
	for i, srv := range srvs {
		server := int64(simStats(t, srv, model).Success.Count) - before[i]
		if client[i] == 0 || client[i] > server || client[i]+cancelled < server {
			t.Errorf("replica %d: the client counted %d successes (%d cancelled in all), the server %d", i, client[i], cancelled, server)
		}
		t.Logf("replica %d: %d successes", i, server)
	}
}
