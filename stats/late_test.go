package stats

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// multiRun is a run of two models on one simulator, or of one model on two
// simulators, as a test reads it: the ticks, and each cell's (model on
// server) success count by the simulator's own statistics over the run.
type multiRun struct {
	snaps []Snapshot
	// sim[e] is the simulators' count of entry e: model e, or replica e.
	sim []int64
	// models is set for a run over two models, else the entries are
	// replicas.
	models bool
}

// multiOptions shape a multiRun.
type multiOptions struct {
	models   bool // two models on one simulator, else one on two
	duration time.Duration
	interval time.Duration
	readWait time.Duration
	// wrap, if set, wraps entry e's statistics client (to slow it).
	wrap func(e int, c StatisticsClient) StatisticsClient
}

// startDemoSim starts a simulator of the demo repository on loopback and
// dials it.
func startDemoSim(t *testing.T, ctx context.Context) (*sim.Server, triton.Client) {
	t.Helper()
	srv, err := sim.Start(ctx, sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 200 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

// requestsFor builds zero-filled requests for one of the demo's models.
func requestsFor(t *testing.T, ctx context.Context, c triton.Client, model string) []*triton.InferRequest {
	t.Helper()
	md, err := c.ModelMetadata(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.ModelConfig(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	in := triton.InputOptions{Data: triton.InputDataZero}
	if model == "bert" {
		in.Shapes = map[string][]int64{"input_ids": {16}, "attention_mask": {16}}
	}
	reqs, err := triton.BuildRequests(md, cfg, in)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// runMulti drives the run o describes with the collector primed before the
// first request, and returns its ticks and the simulators' own counts.
func runMulti(t *testing.T, ctx context.Context, o multiOptions) multiRun {
	t.Helper()
	wrap := func(e int, c StatisticsClient) StatisticsClient {
		if o.wrap != nil {
			return o.wrap(e, c)
		}
		return c
	}
	run := multiRun{models: o.models}
	opts := CollectorOptions{Interval: o.interval, ReadWait: o.readWait}
	var drivers []*driver.Driver
	var count func() []int64
	if o.models {
		srv, c := startDemoSim(t, ctx)
		names := []string{"resnet50", "bert"}
		epoch := time.Now()
		for e, name := range names {
			drv, err := driver.New(driver.Options{Client: c, Requests: requestsFor(t, ctx, c, name), Epoch: epoch,
				Load: load.Target{Mode: load.Concurrency, Concurrency: 4}})
			if err != nil {
				t.Fatal(err)
			}
			drivers = append(drivers, drv)
			opts.Models = append(opts.Models, ModelSource{Name: name, Results: drv.Results(), Control: drv,
				Servers: []*ServerPoller{NewServerPoller(wrap(e, c), name, "")}})
		}
		scraper := NewMetricsScraper("http://"+srv.MetricsAddr()+"/metrics", &http.Client{}, names[0], "")
		scraper.AlsoPending(names[1], "")
		opts.Metrics, opts.Epoch = scraper, epoch
		count = func() []int64 {
			return []int64{int64(simStats(t, srv, names[0]).Success.Count), int64(simStats(t, srv, names[1]).Success.Count)}
		}
	} else {
		const model = "resnet50"
		var srvs []*sim.Server
		var clients []driver.ReplicaClient
		for e := range 2 {
			srv, c := startDemoSim(t, ctx)
			srvs, clients = append(srvs, srv), append(clients, c)
			opts.Replicas = append(opts.Replicas, ReplicaSource{URL: srv.GRPCAddr(),
				Server:  NewServerPoller(wrap(e, c), model, ""),
				Metrics: NewMetricsScraper("http://"+srv.MetricsAddr()+"/metrics", &http.Client{}, model, "")})
		}
		bal, err := driver.NewBalancer(clients, driver.BalancerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bal.Close() })
		drv, err := driver.New(driver.Options{Client: bal, Requests: requestsFor(t, ctx, clients[0].(triton.Client), model),
			Load: load.Target{Mode: load.Concurrency, Concurrency: 8}})
		if err != nil {
			t.Fatal(err)
		}
		drivers = append(drivers, drv)
		opts.Results, opts.Control, opts.Epoch = drv.Results(), drv, drv.Epoch()
		count = func() []int64 {
			return []int64{int64(simStats(t, srvs[0], model).Success.Count), int64(simStats(t, srvs[1], model).Success.Count)}
		}
	}
	col := NewCollector(opts)
	for i, drv := range drivers {
		if o.models {
			drv.OnLoadChange(col.ModelLoadChanged(i))
		} else {
			drv.OnLoadChange(col.LoadChanged)
		}
	}
	col.Prime(ctx)
	before := count()
	driverDone := make(chan error, len(drivers))
	for _, drv := range drivers {
		go func() { driverDone <- drv.Run(ctx) }()
	}
	time.AfterFunc(o.duration, func() {
		for _, drv := range drivers {
			drv.Stop(5 * time.Second)
		}
	})
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	for range drivers {
		if err := <-driverDone; err != nil {
			t.Fatal(err)
		}
	}
	after := count()
	run.snaps = snaps
	for e := range after {
		run.sim = append(run.sim, after[e]-before[e])
	}
	return run
}

// entry is entry e of tick s: model e's, or replica e's, server numbers.
func (m *multiRun) entry(s *Snapshot, e int) (ServerStats, *ServerStats, int) {
	if m.models {
		x := &s.Models[e]
		return x.Server, x.ServerLate, x.ServerLateSeq
	}
	x := &s.Replicas[e]
	return x.Server, x.ServerLate, x.ServerLateSeq
}

// lateCheck is what checkMulti found: ticks without server numbers (any
// entry's) and late reads carried, by entry.
type lateCheck struct {
	missing int
	late    []int
}

// checkMulti checks a multiRun's server numbers: every entry has its
// numbers or none (never another tick's: a late read is carried apart, by
// a later tick, naming ticks that had none of that entry's), each entry's
// ticks with its late reads add up to the simulators' own count, and the
// tick's aggregate, with its late reads, is the entries' sum.
func checkMulti(t *testing.T, m multiRun) lateCheck {
	t.Helper()
	n := len(m.sim)
	out := lateCheck{late: make([]int, n)}
	counted := make([]int64, n)
	without := make([]map[int]bool, n)
	for e := range without {
		without[e] = map[int]bool{}
	}
	for _, s := range m.snaps {
		if (m.models && len(s.Models) != n) || (!m.models && len(s.Replicas) != n) {
			t.Fatalf("tick %d: %d models, %d replicas", s.Seq, len(s.Models), len(s.Replicas))
		}
		for e := range n {
			if sv, _, _ := m.entry(&s, e); !sv.Available {
				without[e][s.Seq] = true
			}
		}
	}
	for _, s := range m.snaps {
		var sum, sumLate int64
		missing := false
		for e := range n {
			sv, late, lateSeq := m.entry(&s, e)
			if !sv.Available {
				missing = true
				t.Logf("tick %d entry %d: %s", s.Seq, e, sv.Err)
			} else if !sv.Reset {
				counted[e] += sv.SuccessCount
				sum += sv.SuccessCount
			}
			if late == nil {
				continue
			}
			out.late[e]++
			if !late.Available || lateSeq <= 0 || lateSeq >= s.Seq {
				t.Errorf("tick %d entry %d carries a late read of tick %d: %+v", s.Seq, e, lateSeq, late)
				continue
			}
			for q := lateSeq; q < s.Seq; q++ {
				if !without[e][q] {
					t.Errorf("tick %d entry %d: its late read covers tick %d, which had statistics of its own", s.Seq, e, q)
				}
			}
			counted[e] += late.SuccessCount
			sumLate += late.SuccessCount
		}
		if missing {
			out.missing++
		}
		if s.Server.Available && !s.Server.Reset && s.Server.SuccessCount != sum {
			t.Errorf("tick %d: the entries' server successes add up to %d, the tick's to %d", s.Seq, sum, s.Server.SuccessCount)
		}
		var top int64
		if s.ServerLate != nil {
			top = s.ServerLate.SuccessCount
		}
		if top != sumLate {
			t.Errorf("tick %d: the entries' late reads count %d successes, the tick's %d", s.Seq, sumLate, top)
		}
	}
	for e := range n {
		if counted[e] != m.sim[e] {
			t.Errorf("entry %d: the ticks' server counts add up to %d, the simulator counted %d", e, counted[e], m.sim[e])
		}
	}
	t.Logf("%d ticks, %d without server statistics; late reads by entry %v; server counted %v, simulators %v",
		len(m.snaps), out.missing, out.late, counted, m.sim)
	return out
}

// slowOnce wraps entry e's statistics client so that its reads numbered in
// calls (from 1, the priming read first) answer delay late.
func slowOnce(e int, calls map[int32]bool, delay time.Duration) func(int, StatisticsClient) StatisticsClient {
	return func(i int, c StatisticsClient) StatisticsClient {
		if i != e {
			return c
		}
		return &slowStatistics{StatisticsClient: c, slow: calls, delay: delay}
	}
}

// TestLateStatisticsReadKeepsItsSpanModels: in a run of two models on one
// server, one model's statistics read that answers after its tick was
// emitted is carried apart by that model's entry (and the tick's), never in
// the next tick's counts, while the other model's ticks keep their own.
func TestLateStatisticsReadKeepsItsSpanModels(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := runMulti(t, ctx, multiOptions{models: true, duration: 3 * time.Second,
		interval: 500 * time.Millisecond, readWait: 250 * time.Millisecond,
		wrap: slowOnce(1, map[int32]bool{3: true}, 400*time.Millisecond)})
	c := checkMulti(t, m)
	if c.late[1] == 0 {
		t.Errorf("bert's late read was not carried apart")
	}
	if c.late[0] != 0 {
		t.Logf("resnet50 had %d late reads of its own (a busy host)", c.late[0])
	}
}

// TestLateStatisticsReadKeepsItsSpanReplicas: the same for one model on two
// servers, one of which answers a read late.
func TestLateStatisticsReadKeepsItsSpanReplicas(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := runMulti(t, ctx, multiOptions{duration: 3 * time.Second,
		interval: 500 * time.Millisecond, readWait: 250 * time.Millisecond,
		wrap: slowOnce(1, map[int32]bool{3: true}, 400*time.Millisecond)})
	c := checkMulti(t, m)
	if c.late[1] == 0 {
		t.Errorf("the second replica's late read was not carried apart")
	}
}

// TestLateOfModelsOnReplicas: in a run of two models on two servers, the
// late answers of the cells (model by model) go to each model's entry (over
// its servers), each replica's (over its models) and the tick (over all),
// each naming the first tick it describes; a cell without one adds nothing.
func TestLateOfModelsOnReplicas(t *testing.T) {
	cell := func(model string, n int64, seq int) lateCell {
		return lateCell{v: &ServerStats{Available: true, Model: model, SuccessCount: n, ExecutionCount: n, InferenceCount: n}, seq: seq}
	}
	// resnet50 on server 0 and bert on both were late; resnet50 on server 1 was not.
	lates := []lateCell{cell("resnet50", 10, 4), {}, cell("bert", 20, 3), cell("bert", 5, 4)}
	s := &Snapshot{Seq: 6, Models: make([]Model, 2), Replicas: make([]Replica, 2)}
	lateOfModels(s, lates, 2, true)
	check := func(what string, got *ServerStats, seq int, want int64, wantSeq int) {
		t.Helper()
		switch {
		case want == 0 && got != nil:
			t.Errorf("%s: late %+v, want none", what, got)
		case want != 0 && (got == nil || got.SuccessCount != want || seq != wantSeq):
			t.Errorf("%s: late %+v from tick %d, want %d successes from tick %d", what, got, seq, want, wantSeq)
		}
	}
	check("resnet50", s.Models[0].ServerLate, s.Models[0].ServerLateSeq, 10, 4)
	check("bert", s.Models[1].ServerLate, s.Models[1].ServerLateSeq, 25, 3)
	check("server 0", s.Replicas[0].ServerLate, s.Replicas[0].ServerLateSeq, 30, 3)
	check("server 1", s.Replicas[1].ServerLate, s.Replicas[1].ServerLateSeq, 5, 4)
	check("tick", s.ServerLate, s.ServerLateSeq, 35, 3)
	if s.Replicas[0].ServerLate.Model != "" || s.ServerLate.Model != "" {
		t.Errorf("a sum over models names model %q", s.ServerLate.Model)
	}
	none := &Snapshot{Models: make([]Model, 2)}
	lateOfModels(none, nil, 1, false)
	if none.ServerLate != nil || none.Models[0].ServerLate != nil {
		t.Errorf("late reads without any cell late")
	}
}
