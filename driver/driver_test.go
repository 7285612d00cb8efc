package driver

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

func TestClosedLoopHoldsConcurrency(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 2)
	// Stalled executions keep every request in the server's queue, so the
	// server's pending count is exactly what the driver has in flight.
	s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(20 * time.Second)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := start(t, ctx, Options{Client: c, Requests: identityRequests(t, c), Load: load.Target{Mode: load.Concurrency, Concurrency: 5}})

	pending := func() uint64 { return modelMetrics(t, s, "identity").Pending }
	eventually(t, 5*time.Second, "5 requests pending on the server", func() bool { return pending() == 5 })
	for range 20 {
		time.Sleep(5 * time.Millisecond)
		if p := pending(); p != 5 {
			t.Fatalf("server has %d pending at concurrency 5", p)
		}
	}
	if got := run.d.State().InFlight; got != 5 {
		t.Errorf("driver reports %d in flight, want 5", got)
	}

	// A live change takes effect at once: the pacer starts the new workers
	// on the state change, not on some later tick.
	run.d.SetConcurrency(8)
	took := eventually(t, 5*time.Second, "8 pending after SetConcurrency(8)", func() bool { return pending() == 8 })
	t.Logf("concurrency 5→8 visible on the server after %v", took)
	time.Sleep(50 * time.Millisecond)
	if p := pending(); p != 8 {
		t.Fatalf("server has %d pending at concurrency 8", p)
	}

	// Lowering it lets the extra workers finish and idle.
	run.d.SetConcurrency(2)
	s.Engine().SetFaults(sim.Faults{})
	// The extra workers' requests finish once the stall is lifted; the
	// stall returns only when the driver has no more than 2 in flight.
	eventually(t, 10*time.Second, "at most 2 in flight after SetConcurrency(2)", func() bool { return run.d.State().InFlight <= 2 })
	s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(20 * time.Second)})
	eventually(t, 5*time.Second, "2 pending after SetConcurrency(2)", func() bool { return pending() == 2 })
	time.Sleep(50 * time.Millisecond)
	if p := pending(); p != 2 {
		t.Fatalf("server has %d pending at concurrency 2", p)
	}
	s.Engine().SetFaults(sim.Faults{})
	run.d.Stop(5 * time.Second)
	res := run.wait(t)
	ok := 0
	for _, r := range res {
		if r.OK() {
			ok++
		}
		if r.Late || r.Scheduled != r.Sent {
			t.Fatalf("closed-loop result %+v is late or scheduled apart from its send", r)
		}
	}
	success, _ := serverCounts(t, c, "identity")
	if uint64(ok) != success {
		t.Errorf("%d successful results, server counted %d", ok, success)
	}
}

func TestPauseResumeAndSteps(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	d, err := New(Options{Client: c, Requests: identityRequests(t, c),
		Load: load.Target{Mode: load.Concurrency, Concurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var changes []load.Change
	d.OnLoadChange(func(ch load.Change) { changes = append(changes, ch) })
	run := startDriver(t, context.Background(), d)
	time.Sleep(100 * time.Millisecond)
	stepAt := time.Since(d.Epoch())
	d.SetStep(1, load.Target{Mode: load.Rate, Rate: 100})
	if st := d.State(); st.Target.Mode != load.Rate || st.Target.Rate != 100 || st.Step != 1 {
		t.Errorf("state in step 1: %+v", st)
	}
	run.d.Pause()
	eventually(t, 10*time.Second, "the request in flight finished", func() bool { return run.d.State().InFlight == 0 })
	before, _ := serverCounts(t, c, "identity")
	time.Sleep(150 * time.Millisecond)
	if after, _ := serverCounts(t, c, "identity"); after != before {
		t.Errorf("%d requests sent while paused", after-before)
	}
	if !run.d.State().Paused {
		t.Error("State does not report the pause")
	}
	run.d.Resume()
	time.AfterFunc(100*time.Millisecond, func() { d.Stop(time.Second) })
	res := run.wait(t)
	success, _ := serverCounts(t, c, "identity")
	if uint64(len(res)) != success {
		t.Errorf("%d results, server counted %d", len(res), success)
	}
	// The step and the drain were changes of load; the pause was not.
	if len(changes) != 2 || changes[0].State.Step != 1 || changes[0].At < stepAt || !changes[1].State.Draining {
		t.Errorf("load changes %+v, want step 1 after %v, then the drain", changes, stepAt)
	}
}

func TestStopCancelsAfterDrain(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(10 * time.Second)})
	run := start(t, context.Background(), Options{Client: c, Requests: identityRequests(t, c), Load: load.Target{Mode: load.Concurrency, Concurrency: 3}})
	eventually(t, 5*time.Second, "3 in flight", func() bool { return run.d.State().InFlight == 3 })
	begin := time.Now()
	run.d.Stop(200 * time.Millisecond)
	res := run.wait(t)
	if took := time.Since(begin); took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("Stop(200ms) took %v", took)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want the 3 in flight", len(res))
	}
	for _, r := range res {
		if !r.Cancelled || r.Code != codes.Canceled {
			t.Errorf("result %+v, want Cancelled", r)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	c := &nopClient{}
	reqs := []*triton.InferRequest{{Model: "m"}}
	for _, o := range []Options{
		{Requests: reqs},
		{Client: c},
		{Client: c, Requests: reqs, Load: load.Target{Concurrency: -1}},
		{Client: c, Requests: reqs, Load: load.Target{Mode: load.Rate, Rate: -2}},
		{Client: c, Requests: reqs, Retries: 300},
		{Client: c, Requests: reqs, Load: load.Target{MaxInFlight: -1}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted bad options", o)
		}
	}
}

func TestResultsArriveWhileRunning(t *testing.T) {
	// At 20 requests/s a batch of 64 would take 3s to fill; results must
	// still reach the consumer within about ResultMaxAge.
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	d, err := New(Options{Client: c, Requests: identityRequests(t, c), Load: load.Target{Mode: load.Rate, Rate: 20}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	begin := time.Now()
	go func() { done <- d.Run(ctx) }()
	first := <-d.Results()
	if took := time.Since(begin); took > time.Second {
		t.Errorf("first results after %v", took)
	}
	if len(first) == 0 || len(first) > 5 {
		t.Errorf("first batch has %d results, want a few", len(first))
	}
	if age := time.Since(begin) - first[0].Done; age > 500*time.Millisecond {
		t.Errorf("first result delivered %v after it finished", age)
	}
	cancel()
	for range d.Results() {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTinyResultMaxAge(t *testing.T) {
	// Any positive ResultMaxAge is valid, even one too short to halve.
	run := start(t, context.Background(), Options{Client: &nopClient{}, Requests: []*triton.InferRequest{{Model: "m"}},
		Load: load.Target{Mode: load.Concurrency, Concurrency: 1}, ResultMaxAge: 1})
	time.Sleep(20 * time.Millisecond)
	run.d.Stop(time.Second)
	if res := run.wait(t); len(res) == 0 {
		t.Error("no results")
	}
}

// TestClosedLoopPausesWhileUnavailable: once the server is gone every
// request fails at once; the closed loop must not spin on it (the client
// would become the bottleneck it measures), but every failure still counts.
func TestClosedLoopPausesWhileUnavailable(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	reqs := identityRequests(t, c)
	s.Close()
	run := startFor(t, context.Background(), time.Second, Options{
		Client:   c,
		Requests: reqs,
		Load:     load.Target{Mode: load.Concurrency, Concurrency: 2},
	})
	res := run.wait(t)
	unavailable := 0
	for _, r := range res {
		if r.Code == codes.Unavailable {
			unavailable++
		}
	}
	if unavailable == 0 {
		t.Fatalf("no UNAVAILABLE results against a closed server (%d results)", len(res))
	}
	// Two workers pausing 1, 2, 4 … 100 ms make about 2 × 17 tries in a
	// second; spinning makes tens of thousands.
	if len(res) > 200 {
		t.Errorf("%d requests in 1 s against a dead server: the closed loop spins", len(res))
	}
}

// TestNoSendAfterStop: Stop marks the run draining and wakes the pacer
// before it closes the stop channel; a pacer woken in between started a new
// segment, whose first hit is due at once, and sent it after the stop (CI
// saw a send 0.2 ms past a stop, off the 5 ms schedule). The draining
// callback holds that window open while it watches for a send.
func TestNoSendAfterStop(t *testing.T) {
	t.Parallel()
	c := &nopClient{}
	d, err := New(Options{Client: c, Requests: []*triton.InferRequest{{Model: "m"}},
		Load: load.Target{Mode: load.Rate, Rate: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	late := make(chan int64, 1)
	d.OnLoadChange(func(ch load.Change) {
		if !ch.State.Draining {
			return
		}
		for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline) && c.sends.Load() < 2; {
			time.Sleep(time.Millisecond)
		}
		late <- c.sends.Load()
	})
	run := startDriver(t, context.Background(), d)
	for c.sends.Load() < 1 { // the first hit is due at once
		time.Sleep(time.Millisecond)
	}
	d.Stop(time.Second)
	run.wait(t)
	if n := <-late; n != 1 {
		t.Errorf("%d sends by the end of the stop, want the 1 before it", n)
	}
}

// heldClient holds every Send until release is closed.
type heldClient struct {
	nopClient
	release chan struct{}
}

func (c *heldClient) Send(ctx context.Context, p triton.Prepared) (int, error) {
	c.sends.Add(1)
	select {
	case <-c.release:
		return 64, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// TestPauseIdleAfterItsRequests: a pause counts as paused (left out of the
// rates) from when the requests in flight at it have finished; until then
// the load still runs, and the state says so (PauseBusy). A pause with
// nothing in flight is idle at once.
func TestPauseIdleAfterItsRequests(t *testing.T) {
	t.Parallel()
	c := &heldClient{release: make(chan struct{})}
	run := start(t, context.Background(), Options{Client: c, Requests: []*triton.InferRequest{{Model: "m"}},
		Load: load.Target{Mode: load.Concurrency, Concurrency: 2}})
	d := run.d
	eventually(t, 5*time.Second, "2 in flight", func() bool { return d.State().InFlight == 2 })
	d.Pause()
	st := d.State()
	if !st.Paused || !st.PauseBusy || st.PausedBy(time.Since(d.Epoch())) != 0 {
		t.Fatalf("paused with 2 in flight: %+v, paused by now %v", st, st.PausedBy(time.Since(d.Epoch())))
	}
	released := time.Since(d.Epoch())
	close(c.release)
	eventually(t, 5*time.Second, "the pause idle", func() bool { return !d.State().PauseBusy })
	st = d.State()
	if !st.Paused || st.InFlight != 0 || st.PausedSince < released {
		t.Errorf("after the requests finished: %+v, released at %v", st, released)
	}
	d.Resume()
	resumed := time.Since(d.Epoch())
	if st := d.State(); st.Paused || st.PausedTotal <= 0 || st.PausedTotal > resumed-released {
		t.Errorf("resumed: paused %v in all, want at most the %v from the release", st.PausedTotal, resumed-released)
	}
	// Nothing in flight: idle at once.
	d.Stop(time.Second)
	run.wait(t)
	idle := &heldClient{release: make(chan struct{})}
	d2, err := New(Options{Client: idle, Requests: []*triton.InferRequest{{Model: "m"}}, Load: load.Target{Mode: load.Rate}})
	if err != nil {
		t.Fatal(err)
	}
	d2.Pause()
	if st := d2.State(); !st.Paused || st.PauseBusy {
		t.Errorf("a pause with nothing in flight: %+v", st)
	}
}
