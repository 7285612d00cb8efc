package stats

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

func TestAggregateLoad(t *testing.T) {
	conc := func(n, inFlight int) Load {
		return Load{Mode: load.Concurrency, Concurrency: n, InFlight: inFlight}
	}
	rate := func(r float64, d load.Distribution) Load { return Load{Mode: load.Rate, Rate: r, Distribution: d} }
	for _, c := range []struct {
		name  string
		loads []Load
		want  Load
	}{
		{"one model is itself", []Load{conc(8, 7)}, conc(8, 7)},
		{"closed loops add", []Load{conc(8, 7), conc(4, 4)}, conc(12, 11)},
		{"open loops add, rounding left out", []Load{rate(0.1, load.Constant), rate(0.2, load.Constant)},
			rate(0.3, load.Constant)},
		{"open loops of two distributions name none", []Load{rate(10, load.Constant), rate(20, load.Poisson)},
			Load{Mode: load.Rate, Rate: 30}},
		{"closed and open: mixed", []Load{conc(8, 8), rate(200, load.Poisson)},
			Load{Mode: load.Mixed, Concurrency: 8, Rate: 200, Distribution: load.Poisson, InFlight: 8}},
		{"paused when every model is", []Load{{Mode: load.Concurrency, Concurrency: 1, Paused: true}, conc(1, 0)}, conc(2, 0)},
		{"drain when every model is", []Load{{Mode: load.Concurrency, Concurrency: 1, Drain: true},
			{Mode: load.Concurrency, Concurrency: 1, Drain: true}},
			Load{Mode: load.Concurrency, Concurrency: 2, Drain: true}},
	} {
		if got := AggregateLoad(c.loads); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := AggregateLoad([]Load{conc(8, 0), rate(200, load.Constant)}).String(); got != "concurrency 8 + rate 200/s" {
		t.Errorf("mixed load reads %q", got)
	}
}

func TestSameLevelsAndModelView(t *testing.T) {
	a := Snapshot{Seq: 1, Load: Load{Mode: load.Concurrency, Concurrency: 12},
		Tick: ClientStats{Requests: 30}, Server: ServerStats{Available: true, SuccessCount: 30},
		Metrics: ServerMetrics{Available: true, GPUs: []GPU{{UUID: "GPU-0"}}},
		Models: []Model{
			{Name: "a", Load: Load{Mode: load.Concurrency, Concurrency: 8}, Tick: ClientStats{Requests: 20},
				Server: ServerStats{Available: true, Model: "a", SuccessCount: 20}, Histogram: "ha"},
			{Name: "b", Load: Load{Mode: load.Concurrency, Concurrency: 4}, Tick: ClientStats{Requests: 10}},
		}}
	b := a
	b.Models = []Model{a.Models[0], a.Models[1]}
	if !SameLevels(&a, &b) {
		t.Error("equal loads are not the same levels")
	}
	// One model up and the other down: the sum is the same, the levels are not.
	b.Models[0].Load.Concurrency, b.Models[1].Load.Concurrency = 9, 3
	if SameLevels(&a, &b) {
		t.Error("a model's change of level went unseen")
	}
	if got := a.ModelLoads(); got != "a concurrency 8, b concurrency 4" {
		t.Errorf("ModelLoads = %q", got)
	}

	v := a.ModelView(0)
	if v.Load != a.Models[0].Load || v.Tick.Requests != 20 || v.Server.Model != "a" || v.Histogram != "ha" {
		t.Errorf("view of model a: %+v", v)
	}
	// The shared parts stay: the GPUs are every model's.
	if len(v.Metrics.GPUs) != 1 || v.Seq != 1 || len(v.Models) != 2 {
		t.Errorf("view of model a lost the tick's shared parts: %+v", v)
	}
	if w := a.ModelView(-1); w.Tick.Requests != 30 {
		t.Errorf("view of no model = %+v, want the aggregate", w.Tick)
	}
	if a.ModelIndex("b") != 1 || a.ModelIndex("c") != -1 {
		t.Error("ModelIndex")
	}
	// A run of one model writes no models.
	one, err := json.Marshal(Snapshot{Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(one), "models") {
		t.Errorf("a snapshot of one model writes %s", one)
	}
}

// TestCollectorModelsAgainstSimulators drives two models on two simulators
// (a driver per model, both through one balancer): every tick's models add
// up to its aggregate, client and server, and so do its replicas; a change
// of one model's load ends the tick of both; and over the run each model's
// server counts are the simulators' statistics of that model.
func TestCollectorModelsAgainstSimulators(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	models := []string{"resnet50", "bert"}
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
		scraper := NewMetricsScraper("http://"+srv.MetricsAddr()+"/metrics", &http.Client{}, models[0], "")
		scraper.AlsoPending(models[1], "")
		srvs, clients = append(srvs, srv), append(clients, c)
		sources = append(sources, ReplicaSource{URL: srv.GRPCAddr(), Metrics: scraper})
	}
	bal, err := driver.NewBalancer(clients, driver.BalancerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bal.Close()
	epoch := time.Now()
	var (
		drivers []*driver.Driver
		srcs    []ModelSource
		before  [2][2]int64 // model, server
	)
	for m, name := range models {
		c0 := clients[0].(triton.Client)
		md, err := c0.ModelMetadata(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := c0.ModelConfig(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		in := triton.InputOptions{Data: triton.InputDataZero}
		if name == "bert" {
			in.Shapes = map[string][]int64{"input_ids": {16}, "attention_mask": {16}}
		}
		reqs, err := triton.BuildRequests(md, cfg, in)
		if err != nil {
			t.Fatal(err)
		}
		drv, err := driver.New(driver.Options{Client: bal, Requests: reqs, Epoch: epoch,
			Load: load.Target{Mode: load.Concurrency, Concurrency: 4 + 2*m}})
		if err != nil {
			t.Fatal(err)
		}
		src := ModelSource{Name: name, Results: drv.Results(), Control: drv}
		for i, c := range clients {
			src.Servers = append(src.Servers, NewServerPoller(c.(triton.Client), name, ""))
			before[m][i] = int64(simStats(t, srvs[i], name).Success.Count)
		}
		drivers, srcs = append(drivers, drv), append(srcs, src)
	}
	col := NewCollector(CollectorOptions{
		Interval: 500 * time.Millisecond, ReadWait: 250 * time.Millisecond,
		Epoch: epoch, Replicas: sources, Models: srcs,
	})
	for i, drv := range drivers {
		drv.OnLoadChange(col.ModelLoadChanged(i))
	}
	// The collector takes its baselines before any request is sent, so
	// that over the run the statistics it reports are all of the
	// simulators'.
	type collected struct {
		snaps []Snapshot
		err   error
	}
	colDone := make(chan collected, 1)
	go func() {
		snaps, err := collect(t, ctx, col)
		colDone <- collected{snaps, err}
	}()
	time.Sleep(200 * time.Millisecond)
	driverDone := make(chan error, len(drivers))
	for _, drv := range drivers {
		go func() { driverDone <- drv.Run(ctx) }()
	}
	// bert's load changes off a tick's boundary; then both stop.
	time.AfterFunc(1700*time.Millisecond, func() { drivers[1].SetRate(50) })
	time.AfterFunc(3*time.Second, func() {
		for _, drv := range drivers {
			drv.Stop(5 * time.Second)
		}
	})
	got := <-colDone
	snaps, err := got.snaps, got.err
	if err != nil {
		t.Fatal(err)
	}
	for range drivers {
		if err := <-driverDone; err != nil {
			t.Fatal(err)
		}
	}

	var client, server [2]int64
	var cancelled int64
	changed, short := false, false
	var last Snapshot // the last tick before the change
	for _, s := range snaps {
		if len(s.Models) != 2 || len(s.Replicas) != 2 {
			t.Fatalf("tick %d: %d models, %d replicas", s.Seq, len(s.Models), len(s.Replicas))
		}
		var req, succ, infer, errs, serverSucc, serverExec int64
		var inFlight, conc int
		for m, mm := range s.Models {
			if mm.Name != models[m] {
				t.Errorf("tick %d: model %d is %q", s.Seq, m, mm.Name)
			}
			req += mm.Tick.Requests
			succ += mm.Tick.Successes
			infer += mm.Tick.Inferences
			errs += mm.Tick.Errors
			client[m] += mm.Tick.Successes
			inFlight += mm.Load.InFlight
			conc += mm.Load.Concurrency
			if mm.Server.Available && !mm.Server.Reset {
				if mm.Server.Model != mm.Name {
					t.Errorf("tick %d: model %s's statistics are of %q", s.Seq, mm.Name, mm.Server.Model)
				}
				serverSucc += mm.Server.SuccessCount
				serverExec += mm.Server.ExecutionCount
				server[m] += mm.Server.SuccessCount
			}
			if l := mm.ServerLate; l != nil {
				// A read that answered late, carried apart.
				server[m] += l.SuccessCount
			}
			if mm.Tick.Successes > 0 && mm.Histogram == "" {
				t.Errorf("tick %d: model %s has no histogram", s.Seq, mm.Name)
			}
		}
		if req != s.Tick.Requests || succ != s.Tick.Successes || infer != s.Tick.Inferences || errs != s.Tick.Errors {
			t.Errorf("tick %d: models' requests %d, successes %d, inferences %d, errors %d; aggregate %+v",
				s.Seq, req, succ, infer, errs, s.Tick)
		}
		if serverSucc != s.Server.SuccessCount || serverExec != s.Server.ExecutionCount {
			t.Errorf("tick %d: models' server successes %d and executions %d, aggregate %d and %d",
				s.Seq, serverSucc, serverExec, s.Server.SuccessCount, s.Server.ExecutionCount)
		}
		if inFlight != s.Load.InFlight || (s.Load.Mode == load.Concurrency && conc != s.Load.Concurrency) {
			t.Errorf("tick %d: models' loads %s do not add up to %+v", s.Seq, s.ModelLoads(), s.Load)
		}
		// The replicas add up to the same aggregate.
		var rreq, rsucc int64
		for _, r := range s.Replicas {
			rreq += r.Tick.Requests
			if r.Server.Available && !r.Server.Reset {
				rsucc += r.Server.SuccessCount
			}
		}
		if rreq != s.Tick.Requests || rsucc != s.Server.SuccessCount {
			t.Errorf("tick %d: replicas' requests %d and server successes %d, aggregate %d and %d",
				s.Seq, rreq, rsucc, s.Tick.Requests, s.Server.SuccessCount)
		}
		cancelled += s.Tick.Cancelled
		// The change of bert's load cut the tick of both models: the
		// tick it ends is short, and the ticks after run bert at 50/s.
		if s.Models[1].Load.Mode == load.Rate {
			if s.Load.Mode != load.Mixed || s.Models[1].Load.Rate != 50 || s.Models[0].Load.Concurrency != 4 {
				t.Errorf("tick %d after the change: %+v, models %s", s.Seq, s.Load, s.ModelLoads())
			}
			if !changed {
				// The tick before ended at the change, off the ticker's
				// boundaries.
				short = (last.Interval - 500*time.Millisecond).Abs() > 50*time.Millisecond
				if !short {
					t.Errorf("tick %d, just before the change, lasted %v", last.Seq, last.Interval)
				}
			}
			changed = true
		}
		last = s
	}
	if !changed || !short {
		t.Errorf("the change of one model's load: ticks after it %v, a tick cut short before it %v", changed, short)
	}
	for m, name := range models {
		var sims int64
		for i, srv := range srvs {
			sims += int64(simStats(t, srv, name).Success.Count) - before[m][i]
		}
		if server[m] != sims {
			t.Errorf("%s: the ticks' server statistics count %d successes, the simulators %d", name, server[m], sims)
		}
		if client[m] == 0 || client[m] > sims || client[m]+cancelled < sims {
			t.Errorf("%s: the client counted %d successes (%d cancelled in all), the simulators %d", name, client[m], cancelled, sims)
		}
		t.Logf("%s: %d successes", name, sims)
	}
}
