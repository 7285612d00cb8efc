package driver

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

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
	run := start(t, ctx, Options{Client: c, Requests: identityRequests(t, c), Load: Load{Mode: Concurrency, Concurrency: 5}})

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
	time.Sleep(100 * time.Millisecond)
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

func TestOpenLoopHoldsRate(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	const rate, seconds = 200, 5
	probe := probeTimers(DefaultLateThreshold, seconds*time.Second)
	run := start(t, context.Background(), Options{
		Client:   c,
		Requests: identityRequests(t, c),
		Schedule: []Step{{Load: Load{Mode: RequestRate, Rate: rate}, Duration: seconds * time.Second}},
	})
	res := run.wait(t)
	late, ok := 0, 0
	var last time.Duration
	for _, r := range res {
		if r.Late {
			late++
		}
		if r.OK() {
			ok++
		}
		last = max(last, r.Scheduled)
	}
	want := float64(rate * seconds)
	if got := float64(len(res)); got < want*0.98 || got > want*1.02 {
		t.Errorf("%v requests in %ds at %d/s, want %v ±2%%", got, seconds, rate, want)
	}
	if ok != len(res) {
		t.Errorf("%d of %d requests failed", len(res)-ok, len(res))
	}
	machineLate := <-probe
	if frac := float64(late) / float64(len(res)); frac >= 0.01 {
		if machineLate >= 0.01 {
			// A bare timer on this machine woke late as often: the CPU is
			// too busy to tell the driver's lateness from the machine's.
			t.Logf("%.1f%% of sends late, but %.1f%% of bare timer wake-ups too: machine overloaded", 100*frac, 100*machineLate)
		} else {
			t.Errorf("%.1f%% of sends were late (bare timers: %.1f%%), want under 1%%", 100*frac, 100*machineLate)
		}
	}
	// The schedule spaces sends 5ms apart: the last is due at 4.995s.
	if last < 4990*time.Millisecond || last >= seconds*time.Second {
		t.Errorf("last send scheduled at %v, want just under %ds", last, seconds)
	}
	success, _ := serverCounts(t, c, "identity")
	if success != uint64(ok) {
		t.Errorf("server counted %d successes, driver %d", success, ok)
	}
	var lateness []time.Duration
	for _, r := range res {
		lateness = append(lateness, r.Sent-r.Scheduled)
	}
	t.Logf("%d requests, %d late; send lateness p50 %v p99 %v max %v", len(res), late,
		percentile(lateness, 50), percentile(lateness, 99), percentile(lateness, 100))
}

func TestStallShowsInScheduledLatency(t *testing.T) {
	// With MaxInFlight 1 the driver has one request in flight, so while
	// the server stalls, the sends due meanwhile cannot go out: they leave
	// late, after the stall, and the server then answers them quickly.
	// Latency from the send misses the stall for all of them (only the one
	// request caught inside the stall saw it); latency from the schedule
	// counts the time they waited to be sent, which is what a client
	// sending at this rate would have seen. That is coordinated omission,
	// and why open-loop latency is measured from the schedule.
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	const rate, seconds = 200, 2
	ctx := context.Background()
	run := start(t, ctx, Options{
		Client:   c,
		Requests: identityRequests(t, c),
		Schedule: []Step{{Load: Load{Mode: RequestRate, Rate: rate, MaxInFlight: 1}, Duration: seconds * time.Second}},
	})
	time.Sleep(500 * time.Millisecond)
	s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(500 * time.Millisecond)})
	res := run.wait(t)

	var fromSchedule, fromSend []time.Duration
	late := 0
	for _, r := range res {
		if !r.OK() {
			t.Fatalf("request failed: %v", r.Err)
		}
		fromSchedule = append(fromSchedule, r.ScheduledLatency())
		fromSend = append(fromSend, r.Latency())
		if r.Late {
			late++
		}
	}
	if len(res) != rate*seconds {
		// Every hit due within the step is sent, however late.
		t.Errorf("%d requests, want %d", len(res), rate*seconds)
	}
	p99s, p99 := percentile(fromSchedule, 99), percentile(fromSend, 99)
	t.Logf("%d requests, %d late; p99 from schedule %v, from send %v", len(res), late, p99s, p99)
	if p99s < 400*time.Millisecond {
		t.Errorf("p99 from the schedule is %v, want ≥ 400ms: the stall is hidden", p99s)
	}
	if p99 >= 100*time.Millisecond {
		t.Errorf("p99 from the send is %v, want well under the stall", p99)
	}
	if late < rate/4 {
		t.Errorf("%d late sends, want about %d (the stall's share)", late, rate/2)
	}
}

func TestStreamingAndHTTP(t *testing.T) {
	s := startSim(t)
	for _, tc := range []struct {
		name      string
		protocol  string
		streaming bool
	}{
		{"grpc-stream", "grpc", true},
		{"http", "http", false},
		{"grpc", "grpc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s, tc.protocol, 2)
			reqs := requests(t, c, "simple", triton.InputOptions{BatchSize: 2, Seed: 9})
			// The request the driver sends gets the right answer.
			resp, err := c.Infer(context.Background(), reqs[0])
			if err != nil {
				t.Fatal(err)
			}
			in0, in1 := triton.Int32s(reqs[0].Inputs[0].Data), triton.Int32s(reqs[0].Inputs[1].Data)
			out0, ok0 := resp.Output("OUTPUT0")
			out1, ok1 := resp.Output("OUTPUT1")
			if !ok0 || !ok1 {
				t.Fatalf("outputs missing: %+v", resp.Outputs)
			}
			sum, diff := triton.Int32s(out0.Data), triton.Int32s(out1.Data)
			if len(sum) != 32 || len(diff) != 32 {
				t.Fatalf("got %d and %d output elements, want 32", len(sum), len(diff))
			}
			for i := range sum {
				if sum[i] != in0[i]+in1[i] || diff[i] != in0[i]-in1[i] {
					t.Fatalf("element %d: %d+%d gave %d, %d", i, in0[i], in1[i], sum[i], diff[i])
				}
			}
			before, _ := serverCounts(t, c, "simple")
			run := start(t, context.Background(), Options{
				Client:    c,
				Requests:  reqs,
				BatchSize: 2,
				Streaming: tc.streaming,
				Streams:   2,
				Timeout:   5 * time.Second,
				Schedule:  []Step{{Load: Load{Mode: Concurrency, Concurrency: 4}, Duration: 300 * time.Millisecond}},
			})
			res := run.wait(t)
			if len(res) < 10 {
				t.Fatalf("only %d requests in 300ms", len(res))
			}
			for _, r := range res {
				if !r.OK() {
					t.Fatalf("request failed: %v", r.Err)
				}
				if r.Inferences != 2 || r.BytesSent <= 0 || r.BytesReceived <= 0 {
					t.Fatalf("result %+v: want 2 inferences and byte counts", r)
				}
			}
			after, _ := serverCounts(t, c, "simple")
			if after-before != uint64(len(res)) {
				t.Errorf("server counted %d requests, driver %d", after-before, len(res))
			}
		})
	}
}

func TestRetriesCounted(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	s.Engine().SetFaults(sim.Faults{ErrorRate: 0.5})
	run := start(t, context.Background(), Options{
		Client:       c,
		Requests:     identityRequests(t, c),
		Retries:      3,
		RetryBackoff: time.Millisecond,
		Schedule:     []Step{{Load: Load{Mode: Concurrency, Concurrency: 4}, Duration: 500 * time.Millisecond}},
	})
	res := run.wait(t)
	tries, failed, retried := 0, 0, 0
	for _, r := range res {
		tries += 1 + int(r.Retries)
		if r.Retries > 0 {
			retried++
		}
		if !r.OK() {
			failed++
			if r.Code != codes.Internal || r.Retries != 3 {
				t.Fatalf("failed result %+v: want INTERNAL after 3 retries", r)
			}
		}
	}
	success, fail := serverCounts(t, c, "identity")
	// Only the final outcome is a Result, but every try reached the server.
	if uint64(tries) != success+fail {
		t.Errorf("results account for %d tries, server saw %d", tries, success+fail)
	}
	if uint64(len(res)-failed) != success {
		t.Errorf("%d successful results, server counted %d successes", len(res)-failed, success)
	}
	if retried == 0 || failed == 0 {
		t.Errorf("at error rate 0.5: %d retried, %d failed of %d; want some of each", retried, failed, len(res))
	}
	t.Logf("%d results, %d tries, %d retried, %d failed", len(res), tries, retried, failed)
}

func TestTimeouts(t *testing.T) {
	s := startSim(t)
	for _, streaming := range []bool{false, true} {
		c := dial(t, s, "grpc", 1)
		s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(10 * time.Second)})
		run := start(t, context.Background(), Options{
			Client:    c,
			Requests:  identityRequests(t, c),
			Streaming: streaming,
			Streams:   1,
			Timeout:   100 * time.Millisecond,
			Retries:   1,
			Schedule:  []Step{{Load: Load{Mode: Concurrency, Concurrency: 2}, Duration: 450 * time.Millisecond}},
		})
		res := run.wait(t)
		s.Engine().SetFaults(sim.Faults{})
		if len(res) < 2 {
			t.Fatalf("streaming %v: %d results", streaming, len(res))
		}
		for _, r := range res {
			if r.Cancelled {
				continue
			}
			// Each try waits 100ms, then one retry after 10ms.
			if r.Code != codes.DeadlineExceeded || r.Retries != 1 {
				t.Fatalf("streaming %v: result %+v, want DEADLINE_EXCEEDED after 1 retry", streaming, r)
			}
			if l := r.Latency(); l < 200*time.Millisecond || l > 2*time.Second {
				t.Errorf("streaming %v: timed-out request took %v, want about 210ms", streaming, l)
			}
		}
	}
}

func TestStopCancelsAfterDrain(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(10 * time.Second)})
	run := start(t, context.Background(), Options{Client: c, Requests: identityRequests(t, c), Load: Load{Mode: Concurrency, Concurrency: 3}})
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

func TestPauseResumeAndSchedule(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	run := start(t, context.Background(), Options{
		Client:   c,
		Requests: identityRequests(t, c),
		Schedule: []Step{
			{Load: Load{Mode: Concurrency, Concurrency: 1}, Duration: 300 * time.Millisecond},
			{Load: Load{Mode: RequestRate, Rate: 100}, Duration: 600 * time.Millisecond},
		},
	})
	eventually(t, 2*time.Second, "step 2", func() bool { return run.d.State().Step == 1 })
	if st := run.d.State(); st.Load.Mode != RequestRate || st.Load.Rate != 100 {
		t.Errorf("state in step 2: %+v", st)
	}
	run.d.Pause()
	time.Sleep(20 * time.Millisecond) // let the request in flight finish
	before, _ := serverCounts(t, c, "identity")
	time.Sleep(150 * time.Millisecond)
	if after, _ := serverCounts(t, c, "identity"); after != before {
		t.Errorf("%d requests sent while paused", after-before)
	}
	if !run.d.State().Paused {
		t.Error("State does not report the pause")
	}
	run.d.Resume()
	res := run.wait(t)
	success, _ := serverCounts(t, c, "identity")
	if uint64(len(res)) != success {
		t.Errorf("%d results, server counted %d", len(res), success)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	c := &nopClient{}
	reqs := []*triton.InferRequest{{Model: "m"}}
	for _, o := range []Options{
		{Requests: reqs},
		{Client: c},
		{Client: c, Requests: reqs, Load: Load{Concurrency: -1}},
		{Client: c, Requests: reqs, Load: Load{Mode: RequestRate, Rate: -2}},
		{Client: c, Requests: reqs, Retries: 300},
		{Client: c, Requests: reqs, Schedule: []Step{{Load: Load{MaxInFlight: -1}}}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted bad options", o)
		}
	}
}

// probeTimers measures, for the given time, the share of 5ms sleeps that
// overshoot by more than threshold: how late this machine itself is.
func probeTimers(threshold, d time.Duration) <-chan float64 {
	out := make(chan float64, 1)
	go func() {
		end := time.Now().Add(d)
		n, late := 0, 0
		for time.Now().Before(end) {
			t := time.Now()
			time.Sleep(5 * time.Millisecond)
			if time.Since(t)-5*time.Millisecond > threshold {
				late++
			}
			n++
		}
		out <- float64(late) / float64(max(n, 1))
	}()
	return out
}

func TestResultsArriveWhileRunning(t *testing.T) {
	// At 20 requests/s a batch of 64 would take 3s to fill; results must
	// still reach the consumer within about ResultMaxAge.
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	d, err := New(Options{Client: c, Requests: identityRequests(t, c), Load: Load{Mode: RequestRate, Rate: 20}})
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
