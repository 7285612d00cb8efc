package stats

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton/pb"
)

// fixedControl is a LoadState that reports a fixed state.
type fixedControl struct{ state load.State }

func (c *fixedControl) State() load.State { return c.state }

// countingStats answers ModelStatistics, after a delay chosen by call
// number, with one successful request of 1 µs per elapsed millisecond.
func countingStats(delay func(call int64) time.Duration) statsClient {
	var calls atomic.Int64
	start := time.Now()
	return statsClient{stats: func(ctx context.Context, model, _ string) (*pb.ModelStatisticsResponse, error) {
		n := calls.Add(1)
		select {
		case <-time.After(delay(n)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		ms := uint64(time.Since(start).Milliseconds())
		r := reading{success: counter{ms, ms * 1000}, queue: counter{ms, ms * 100}}
		st := r.proto()
		st.Name = model
		return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{st}}, nil
	}}
}

// collect runs c until it returns and gives its snapshots.
func collect(t *testing.T, ctx context.Context, c *Collector) ([]Snapshot, error) {
	t.Helper()
	var mu sync.Mutex
	var snaps []Snapshot
	err := c.Run(ctx, func(s Snapshot) {
		mu.Lock()
		snaps = append(snaps, s)
		mu.Unlock()
	})
	return snaps, err
}

func TestCollectorTicksAndFinalPartialTick(t *testing.T) {
	results := make(chan []driver.Result)
	ctrl := &fixedControl{state: load.State{
		Target: load.Target{Mode: load.Concurrency, Concurrency: 8}, InFlight: 7}}
	c := NewCollector(CollectorOptions{
		Interval: 100 * time.Millisecond, Window: time.Second,
		// Long enough for an in-process read on a loaded machine.
		ReadWait: 80 * time.Millisecond,
		Results:  results, Control: ctrl,
		Server: NewServerPoller(countingStats(func(int64) time.Duration { return 0 }), "m", ""),
	})
	var sent int64
	go func() {
		defer close(results)
		deadline := time.Now().Add(550 * time.Millisecond)
		for time.Now().Before(deadline) {
			results <- []driver.Result{ok(0, time.Millisecond), ok(0, 2*time.Millisecond)}
			sent += 2
			time.Sleep(5 * time.Millisecond)
		}
		// The last results arrive just before the channel closes: only the
		// final, partial tick can hold them.
		results <- []driver.Result{ok(0, time.Millisecond)}
		sent++
	}()
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) < 3 {
		t.Fatalf("%d snapshots in 550 ms at 100 ms ticks, want at least 3", len(snaps))
	}
	var total int64
	var withServer int
	for i, s := range snaps {
		if s.Seq != i+1 {
			t.Errorf("snapshot %d has Seq %d", i, s.Seq)
		}
		total += s.Tick.Requests
		if s.Load.Mode != load.Concurrency || s.Load.Concurrency != 8 || s.Load.InFlight != 7 {
			t.Errorf("tick %d load = %+v", s.Seq, s.Load)
		}
		if s.WindowLength != time.Second {
			t.Errorf("tick %d window length %v", s.Seq, s.WindowLength)
		}
		if s.Server.Reset || s.Server.Available && s.Server.Request != time.Microsecond {
			t.Errorf("tick %d server = %+v", s.Seq, s.Server)
		}
		if s.Server.Available {
			withServer++
		}
	}
	last := snaps[len(snaps)-1]
	if total != sent || last.Run.Requests != sent {
		t.Fatalf("ticks sum to %d requests, run says %d, %d were sent", total, last.Run.Requests, sent)
	}
	if last.Tick.Requests == 0 {
		t.Error("the final tick is empty; it should hold the results sent last")
	}
	// The first server reading is the baseline taken at start, so even the
	// first tick can have a delta.
	if withServer < len(snaps)/2 {
		t.Errorf("only %d of %d ticks have server statistics", withServer, len(snaps))
	}
	if got, ok := c.Latest(); !ok || got.Seq != last.Seq {
		t.Errorf("Latest = %d, %v; want %d", got.Seq, ok, last.Seq)
	}
}

// TestCollectorLastTickWaitsForTheServerCount: Triton counts a request in
// its statistics only after its backend has sent the response (a real
// Triton's read right after a response missed it 105 times in 1000), so
// the last tick's reading waits, within ReadWait, until the server has
// counted the requests the client saw succeed: here each is counted 40 ms
// after its answer, and the ticks' server counts still add up to all of
// them.
func TestCollectorLastTickWaitsForTheServerCount(t *testing.T) {
	results := make(chan []driver.Result)
	var counted atomic.Uint64
	server := statsClient{stats: func(_ context.Context, model, _ string) (*pb.ModelStatisticsResponse, error) {
		n := counted.Load()
		st := reading{success: counter{n, n * 1000}, queue: counter{n, n * 100}}.proto()
		st.Name = model
		return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{st}}, nil
	}}
	c := NewCollector(CollectorOptions{
		Interval: 100 * time.Millisecond, ReadWait: 5 * time.Second, ReadTimeout: 5 * time.Second,
		Results: results, Server: NewServerPoller(server, "m", ""),
	})
	const sent = 20
	go func() {
		defer close(results)
		for range sent {
			results <- []driver.Result{ok(0, time.Millisecond)}
			time.AfterFunc(40*time.Millisecond, func() { counted.Add(1) })
			time.Sleep(5 * time.Millisecond)
		}
	}()
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var served int64
	for _, s := range snaps {
		served += s.Server.SuccessCount
		if s.ServerLate != nil {
			served += s.ServerLate.SuccessCount
		}
	}
	if served != sent {
		t.Errorf("the ticks' server counts add up to %d of the %d requests the server counted", served, sent)
	}
}

func TestCollectorDoesNotWaitForSlowServer(t *testing.T) {
	t.Parallel()
	results := make(chan []driver.Result)
	// The second statistics call hangs for a second; others answer at once.
	slow := countingStats(func(n int64) time.Duration {
		if n == 2 {
			return time.Second
		}
		return 0
	})
	hang := make(chan struct{})
	metricsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer metricsSrv.Close()
	defer close(hang)
	c := NewCollector(CollectorOptions{
		Interval: 100 * time.Millisecond, ReadWait: 30 * time.Millisecond,
		ReadTimeout: 5 * time.Second, Results: results,
		Server:  NewServerPoller(slow, "m", "1"),
		Metrics: NewMetricsScraper(metricsSrv.URL, nil, "m", "1"),
	})
	stop := make(chan struct{})
	go func() {
		defer close(results)
		for {
			select {
			case results <- []driver.Result{ok(0, time.Millisecond)}:
			case <-stop:
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.AfterFunc(1500*time.Millisecond, func() { close(stop) })
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) < 6 {
		t.Fatalf("%d ticks in 1.5 s at 100 ms with a hung server, want at least 6", len(snaps))
	}
	var missing, late int
	for _, s := range snaps {
		if s.Metrics.Available || s.Metrics.Err == "" {
			t.Errorf("tick %d metrics = %+v, want unavailable", s.Seq, s.Metrics)
		}
		if l := s.ServerLate; l != nil && l.SuccessCount > 500 && s.ServerLateSeq < s.Seq-1 {
			late++
		}
		if !s.Server.Available {
			missing++
			continue
		}
		if s.Server.SuccessCount > 500 {
			t.Errorf("tick %d holds %d successes: the late read's ticks are in its own", s.Seq, s.Server.SuccessCount)
		}
		if s.Interval > 400*time.Millisecond {
			t.Errorf("tick %d lasted %v", s.Seq, s.Interval)
		}
	}
	// While the hung read runs, ticks go out without server statistics; its
	// answer then covers every tick since the previous reading, and the
	// next tick carries it apart (ServerLate), naming the first of them.
	if missing < 5 || late != 1 {
		t.Fatalf("ticks without statistics: %d (want ≥ 5), ticks covering several readings: %d (want 1)", missing, late)
	}
}

func TestCollectorStopsOnCancel(t *testing.T) {
	results := make(chan []driver.Result)
	c := NewCollector(CollectorOptions{Interval: 20 * time.Millisecond, Results: results})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	snaps, err := collect(t, ctx, c)
	if err != context.DeadlineExceeded {
		t.Fatalf("Run = %v, want the context's error", err)
	}
	if len(snaps) == 0 {
		t.Fatal("no ticks before cancel")
	}
	if s := snaps[0]; s.Load.Mode != load.Concurrency || s.Tick.Requests != 0 {
		t.Fatalf("idle tick = %+v", s)
	}
	if err := NewCollector(CollectorOptions{}).Run(ctx, func(Snapshot) {}); err == nil {
		t.Fatal("Run without a results channel did not fail")
	}
}

func TestMetricsScraper(t *testing.T) {
	const text = `# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-a"} 0.75
nv_gpu_utilization{gpu_uuid="GPU-b"} 0
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a"} 1073741824
nv_gpu_memory_used_bytes{gpu_uuid="GPU-c"} 0
# TYPE nv_gpu_memory_total_bytes gauge
nv_gpu_memory_total_bytes{gpu_uuid="GPU-a"} 85899345920
nv_gpu_memory_total_bytes{gpu_uuid="GPU-c"} 42949672960
# TYPE nv_energy_consumption counter
nv_energy_consumption{gpu_uuid="GPU-d"} 1234
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="GPU-a"} 312.5
# TYPE nv_gpu_power_limit gauge
nv_gpu_power_limit{gpu_uuid="GPU-a"} 700
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="m",version="1"} 3
nv_inference_pending_request_count{model="m",version="2"} 4
nv_inference_pending_request_count{model="other",version="1"} 100
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, text)
	}))
	defer srv.Close()
	ctx := context.Background()

	s := NewMetricsScraper(srv.URL, nil, "m", "2").Scrape(ctx)
	// GPU-d has only an energy counter, no gauge: it is left out.
	if !s.Available || s.Err != "" || len(s.GPUs) != 3 {
		t.Fatalf("scrape = %+v", s)
	}
	a, b, c := s.GPUs[0], s.GPUs[1], s.GPUs[2]
	if a.UUID != "GPU-a" || a.Utilization != 0.75 || a.MemoryUsed != 1<<30 || a.MemoryTotal != 80<<30 ||
		a.PowerW != 312.5 || a.PowerLimitW != 700 || !a.HasUtilization || !a.HasMemory || !a.HasPower {
		t.Errorf("GPU-a = %+v", a)
	}
	// An idle GPU reports 0 %, which is not the same as not reporting.
	if b.UUID != "GPU-b" || b.Utilization != 0 || !b.HasUtilization || b.HasMemory || b.HasPower {
		t.Errorf("GPU-b = %+v, want utilization 0 reported, memory and power missing", b)
	}
	if c.UUID != "GPU-c" || c.MemoryUsed != 0 || c.MemoryTotal != 40<<30 || c.HasUtilization || !c.HasMemory || c.HasPower {
		t.Errorf("GPU-c = %+v, want memory only", c)
	}
	if s.HasCPU {
		t.Error("HasCPU set without nv_cpu_utilization")
	}
	if !s.HasPending || s.Pending != 4 {
		t.Errorf("pending of m v2 = %v %v, want 4", s.HasPending, s.Pending)
	}
	if all := NewMetricsScraper(srv.URL, nil, "m", "").Scrape(ctx); all.Pending != 7 {
		t.Errorf("pending of m, all versions = %v, want 7", all.Pending)
	}
	if none := NewMetricsScraper(srv.URL, nil, "absent", "").Scrape(ctx); none.HasPending {
		t.Errorf("pending reported for a model without the gauge: %+v", none)
	}
	// A run over several models: the pending requests of all of them.
	several := NewMetricsScraper(srv.URL, nil, "absent", "")
	several.AlsoPending("m", "1")
	several.AlsoPending("other", "")
	if got := several.Scrape(ctx); !got.HasPending || got.Pending != 103 {
		t.Errorf("pending of absent, m v1 and other = %v %v, want 103", got.HasPending, got.Pending)
	}

	// A closed port is unavailable, with the reason on one line.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down := NewMetricsScraper("http://"+addr+"/metrics", nil, "m", "").Scrape(ctx)
	if down.Available || down.Err == "" || len(down.GPUs) != 0 {
		t.Fatalf("closed port = %+v", down)
	}
}

// lockedControl is a load whose state a test changes while the collector
// reads it.
type lockedControl struct {
	mu    sync.Mutex
	state load.State
}

func (c *lockedControl) State() load.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

func (c *lockedControl) set(st load.State) {
	c.mu.Lock()
	c.state = st
	c.mu.Unlock()
}

// TestCollectorWindowRestartsAtNewLevel: after a change of load the sliding
// window holds only the new level's ticks, never a blend of two levels'
// latencies, while the whole run's totals keep both.
func TestCollectorWindowRestartsAtNewLevel(t *testing.T) {
	results := make(chan []driver.Result)
	low := load.State{Target: load.Target{Mode: load.Concurrency, Concurrency: 2}, InFlight: 2}
	high := load.State{Target: load.Target{Mode: load.Concurrency, Concurrency: 16}, InFlight: 16, Step: 1}
	ctrl := &lockedControl{state: low}
	c := NewCollector(CollectorOptions{Interval: 100 * time.Millisecond, Window: 10 * time.Second,
		Results: results, Control: ctrl})
	go func() {
		defer close(results)
		feed := func(lat time.Duration, d time.Duration) {
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				results <- []driver.Result{ok(0, lat)}
			}
		}
		feed(time.Millisecond, 350*time.Millisecond)
		ctrl.set(high)
		c.LoadChanged(load.Change{State: high})
		feed(50*time.Millisecond, 350*time.Millisecond)
	}()
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var before, after int
	for _, s := range snaps {
		switch {
		case s.Load.Concurrency == 2 && s.Window.Requests > 0:
			before++
			if s.Window.Latency.Max != time.Millisecond {
				t.Errorf("tick %d at the first level: window latency up to %v", s.Seq, s.Window.Latency.Max)
			}
		case s.Load.Concurrency == 16 && s.Window.Requests > 0:
			after++
			if s.Window.Latency.Min != 50*time.Millisecond {
				t.Errorf("tick %d at the second level: window latency from %v, a blend of both levels", s.Seq, s.Window.Latency.Min)
			}
			if s.Window.Duration > s.Elapsed-300*time.Millisecond {
				t.Errorf("tick %d: window spans %v of a %v run", s.Seq, s.Window.Duration, s.Elapsed)
			}
		}
	}
	if before < 2 || after < 2 {
		t.Fatalf("%d ticks with results at the first level, %d at the second", before, after)
	}
	if run := snaps[len(snaps)-1].Run; run.Latency.Min != time.Millisecond || run.Latency.Max != 50*time.Millisecond {
		t.Errorf("whole run latency %v..%v, want both levels' 1ms..50ms", run.Latency.Min, run.Latency.Max)
	}
}
