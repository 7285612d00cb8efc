package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// seqClient is a SequenceClient that answers after delay and records every
// sequence request it is sent, so that tests can check what a server's
// sequence batcher would see.
type seqClient struct {
	nopClient
	delay time.Duration
	// failStart, when set, fails the first request of the sequences it
	// names, as a server refusing them would.
	failStart func(id uint64) bool

	mu       sync.Mutex
	sends    []seqSend
	inFlight map[uint64]int
	starting map[uint64]bool // sequences whose first request is in flight
	overlaps int             // requests sent while their sequence had one in flight
	// misordered counts requests that could reach a server out of their
	// sequence: sent while its first request was in flight, or a last
	// request sent while others were.
	misordered int
	// live is the sequences the server holds: from their first request's
	// send until their last request's answer; maxLive the most at once.
	live, maxLive int
}

type seqSend struct {
	id         uint64
	start, end bool
	failed     bool
	at         time.Time
}

type seqPrepared struct {
	id         uint64
	start, end bool
}

func (p *seqPrepared) Size() int { return 100 }

type fakeSequence struct{ reqs [4]seqPrepared }

func (s *fakeSequence) Request(start, end bool) triton.Prepared {
	i := 0
	if start {
		i = 1
	}
	if end {
		i |= 2
	}
	return &s.reqs[i]
}

func (c *seqClient) PrepareSequence(p triton.Prepared, id uint64) (triton.Sequence, error) {
	if _, ok := p.(nopPrepared); !ok {
		return nil, errors.New("not this client's request")
	}
	s := &fakeSequence{}
	for i := range s.reqs {
		s.reqs[i] = seqPrepared{id: id, start: i&1 != 0, end: i&2 != 0}
	}
	return s, nil
}

func (c *seqClient) Send(ctx context.Context, p triton.Prepared) (int, error) {
	sp, ok := p.(*seqPrepared)
	if !ok {
		return 0, errors.New("a request of a sequence model sent outside a sequence")
	}
	fail := sp.start && c.failStart != nil && c.failStart(sp.id)
	c.mu.Lock()
	if c.inFlight == nil {
		c.inFlight, c.starting = map[uint64]int{}, map[uint64]bool{}
	}
	if c.inFlight[sp.id] > 0 {
		c.overlaps++
	}
	if c.starting[sp.id] || sp.end && c.inFlight[sp.id] > 0 {
		c.misordered++
	}
	c.starting[sp.id] = sp.start
	c.inFlight[sp.id]++
	if sp.start {
		c.live++
		c.maxLive = max(c.maxLive, c.live)
	}
	c.sends = append(c.sends, seqSend{id: sp.id, start: sp.start, end: sp.end, failed: fail, at: time.Now()})
	c.mu.Unlock()
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	c.inFlight[sp.id]--
	if sp.start {
		c.starting[sp.id] = false
	}
	if sp.end || sp.start && fail {
		c.live--
	}
	c.mu.Unlock()
	if fail {
		return 0, &triton.Error{Code: codes.InvalidArgument, Message: "refused"}
	}
	return 64, ctx.Err()
}

// sequences replays what the client was sent as a server's sequence
// batcher would take it, and returns the sequences in the order they
// started with their lengths, and an error for anything out of order: a
// request of no running sequence, a START on a running one, or a sequence
// never ended.
func (c *seqClient) sequences() (lengths []int, maxLive int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	running := map[uint64]int{} // id -> index in lengths
	for i, s := range c.sends {
		idx, open := running[s.id]
		switch {
		case s.start && open:
			return nil, 0, fmt.Errorf("send %d: START for sequence %d, which is running", i, s.id)
		case s.start && s.failed:
			continue // never started at the server
		case s.start:
			idx = len(lengths)
			lengths = append(lengths, 0)
			running[s.id] = idx
		case !open:
			return nil, 0, fmt.Errorf("send %d: request for sequence %d, which is not running (start %v end %v)", i, s.id, s.start, s.end)
		}
		lengths[idx]++
		maxLive = max(maxLive, len(running))
		if s.end {
			delete(running, s.id)
		}
	}
	if len(running) > 0 {
		return nil, 0, fmt.Errorf("sequences %v never ended", running)
	}
	return lengths, maxLive, nil
}

func (c *seqClient) ids() map[uint64]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := map[uint64]bool{}
	for _, s := range c.sends {
		ids[s.id] = true
	}
	return ids
}

// runSequences runs a driver on c for d and returns its results.
func runSequences(t *testing.T, c *seqClient, d time.Duration, l load.Target, so SequenceOptions) []Result {
	t.Helper()
	s := startFor(t, context.Background(), d, Options{Client: c, Requests: []*triton.InferRequest{{Model: "seq"}},
		Load: l, Sequences: &so, Seed: 7})
	return s.wait(t)
}

// checkLatencies: exactly the last request of each sequence that ended
// well carries its sequence latency, at least the sum of its requests'.
func checkLatencies(t *testing.T, res []Result, ended int, perRequest time.Duration, minLength int) {
	t.Helper()
	n := 0
	for _, r := range res {
		if r.SequenceLatency() > 0 {
			n++
			if r.SequenceLatency() < time.Duration(minLength)*perRequest {
				t.Errorf("sequence latency %v below %d requests of %v", r.SequenceLatency(), minLength, perRequest)
			}
		}
	}
	if n != ended {
		t.Errorf("%d results carry a sequence latency, want one per ended sequence (%d)", n, ended)
	}
}

// TestClosedLoopSequences: at concurrency 4 each worker runs its own
// sequences: never two requests of one in flight, START first and END
// last, lengths within ±20% of 10, at most 4 live at once, each ended
// when the run stops, and every ended one timed.
func TestClosedLoopSequences(t *testing.T) {
	c := &seqClient{delay: time.Millisecond}
	res := runSequences(t, c, 600*time.Millisecond, load.Target{Mode: load.Concurrency, Concurrency: 4},
		SequenceOptions{Length: 10, Variation: 20})
	lengths, live, err := c.sequences()
	if err != nil {
		t.Fatal(err)
	}
	if c.overlaps > 0 {
		t.Errorf("%d requests sent while their sequence had one in flight", c.overlaps)
	}
	if len(lengths) < 8 || live > 4 || live < 4 {
		t.Errorf("%d sequences, %d live at most; want many, 4 live", len(lengths), live)
	}
	seen := map[int]bool{}
	for i, n := range lengths {
		seen[n] = true
		// The last ones were ended early by the stop.
		if i < len(lengths)-4 && (n < 8 || n > 12) {
			t.Errorf("sequence %d has %d requests, want 8 to 12", i+1, n)
		}
	}
	if len(seen) < 3 {
		t.Errorf("sequence lengths %v do not vary", lengths)
	}
	checkLatencies(t, res, len(lengths), time.Millisecond, 1)
	for id := range c.ids() {
		if id < 1 || id > 1<<32 {
			t.Errorf("id %d outside perf_analyzer's default range", id)
		}
	}
}

// TestSequenceIDsWrapInRange: ids 5, 6, 7 (--sequence-id-range 5:8) at
// concurrency 3 wrap and are reused, never by two live sequences at once.
func TestSequenceIDsWrapInRange(t *testing.T) {
	c := &seqClient{}
	runSequences(t, c, 200*time.Millisecond, load.Target{Mode: load.Concurrency, Concurrency: 3},
		SequenceOptions{Length: 3, StartID: 5, IDRange: 3})
	lengths, live, err := c.sequences()
	if err != nil {
		t.Fatal(err)
	}
	ids := c.ids()
	if len(ids) != 3 || !ids[5] || !ids[6] || !ids[7] {
		t.Errorf("ids %v, want 5, 6 and 7", ids)
	}
	if len(lengths) < 10 || live > 3 {
		t.Errorf("%d sequences, %d live at most", len(lengths), live)
	}
}

// TestSequenceIDsWaitWhenAllHeld: concurrency 4 over 2 ids: two workers
// wait for an id instead of sharing one, and each sequence still runs
// alone under its id.
func TestSequenceIDsWaitWhenAllHeld(t *testing.T) {
	c := &seqClient{delay: time.Millisecond}
	runSequences(t, c, 200*time.Millisecond, load.Target{Mode: load.Concurrency, Concurrency: 4},
		SequenceOptions{Length: 4, StartID: 1, IDRange: 2})
	lengths, live, err := c.sequences()
	if err != nil {
		t.Fatal(err)
	}
	if live > 2 || len(lengths) < 4 || c.overlaps > 0 {
		t.Errorf("%d sequences, %d live at most, %d overlaps; want several, 2 live, none", len(lengths), live, c.overlaps)
	}
}

// TestOpenLoopSerialSequences: at 400 requests/s over 3 serial sequences
// no sequence ever has two requests in flight, and every one ends.
func TestOpenLoopSerialSequences(t *testing.T) {
	c := &seqClient{delay: 2 * time.Millisecond}
	res := runSequences(t, c, 500*time.Millisecond, load.Target{Mode: load.Rate, Rate: 400},
		SequenceOptions{Length: 5, Count: 3, Serial: true})
	lengths, live, err := c.sequences()
	if err != nil {
		t.Fatal(err)
	}
	if c.overlaps > 0 {
		t.Errorf("%d requests sent while their sequence had one in flight", c.overlaps)
	}
	if c.maxLive > 3 {
		t.Errorf("the server held %d sequences at once; want at most 3", c.maxLive)
	}
	if live != 3 || len(lengths) < 10 {
		t.Errorf("%d sequences, %d live at most; want many, 3", len(lengths), live)
	}
	checkLatencies(t, res, len(lengths), 2*time.Millisecond, 1)
}

// TestOpenLoopSequencesOverlap: without Serial the open loop's sequences
// take requests as they come, several in flight at once, as
// perf_analyzer's do; still at most Count live, each started and ended,
// its first request answered before the others go out and its last sent
// alone.
func TestOpenLoopSequencesOverlap(t *testing.T) {
	c := &seqClient{delay: 20 * time.Millisecond}
	runSequences(t, c, 500*time.Millisecond, load.Target{Mode: load.Rate, Rate: 400},
		SequenceOptions{Length: 20, Count: 2})
	lengths, live, err := c.sequences()
	if err != nil {
		t.Fatal(err)
	}
	if c.overlaps == 0 {
		t.Error("no sequence had two requests in flight at 400/s against 20 ms answers")
	}
	if c.misordered > 0 {
		t.Errorf("%d requests sent beside their sequence's first, or last requests beside others", c.misordered)
	}
	if live > 2 || len(lengths) < 4 {
		t.Errorf("%d sequences, %d live at most; want several, 2", len(lengths), live)
	}
	// A new sequence starts only once the last one's END is answered: the
	// server never holds more than Count.
	if c.maxLive > 2 {
		t.Errorf("the server held %d sequences at once; want at most 2", c.maxLive)
	}
}

// TestSequencesEndWhenLoadDrops: lowering the concurrency, pausing and
// switching to open loop each end the sequences no longer driven at once,
// and State counts those running.
func TestSequencesEndWhenLoadDrops(t *testing.T) {
	c := &seqClient{delay: time.Millisecond}
	d, err := New(Options{Client: c, Requests: []*triton.InferRequest{{Model: "seq"}},
		Load: load.Target{Mode: load.Concurrency, Concurrency: 6}, Sequences: &SequenceOptions{Length: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	s := startDriver(t, context.Background(), d)
	eventually(t, 5*time.Second, "6 sequences running", func() bool { return d.State().Sequences == 6 })
	d.SetConcurrency(2)
	eventually(t, 5*time.Second, "2 sequences running", func() bool { return d.State().Sequences == 2 })
	d.Pause()
	eventually(t, 5*time.Second, "no sequence running when paused", func() bool { return d.State().Sequences == 0 })
	d.Resume()
	eventually(t, 5*time.Second, "2 sequences again", func() bool { return d.State().Sequences == 2 })
	d.SetRate(200)
	time.Sleep(100 * time.Millisecond)
	if n := d.State().Sequences; n > DefaultSequences {
		t.Errorf("%d sequences running in open loop, at most %d", n, DefaultSequences)
	}
	d.Stop(5 * time.Second)
	s.wait(t)
	if _, _, err := c.sequences(); err != nil {
		t.Fatal(err)
	}
	if n := d.State().Sequences; n != 0 {
		t.Errorf("%d sequences running after the run", n)
	}
}

// TestFailedStartAbandonsSequence: a sequence whose first request failed
// never started at the server; the worker starts a new one with a new
// START rather than sending the rest.
func TestFailedStartAbandonsSequence(t *testing.T) {
	c := &seqClient{failStart: func(id uint64) bool { return id%3 == 0 }}
	res := runSequences(t, c, 200*time.Millisecond, load.Target{Mode: load.Concurrency, Concurrency: 2},
		SequenceOptions{Length: 4})
	if _, _, err := c.sequences(); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, r := range res {
		if r.Code == codes.InvalidArgument {
			failed++
		}
	}
	if failed == 0 {
		t.Error("no START failed")
	}
}

// TestSequencesNeedASequenceClient: a client without PrepareSequence, or
// options out of range, are refused by New.
func TestSequencesNeedASequenceClient(t *testing.T) {
	reqs := []*triton.InferRequest{{Model: "seq"}}
	cases := []struct {
		name string
		c    Client
		so   SequenceOptions
	}{
		{"no PrepareSequence", &nopClient{}, SequenceOptions{}},
		{"negative length", &seqClient{}, SequenceOptions{Length: -1}},
		{"negative variation", &seqClient{}, SequenceOptions{Variation: -5}},
		{"ids past int64", &seqClient{}, SequenceOptions{StartID: 1 << 62, IDRange: 1<<62 + 1}},
	}
	for _, tc := range cases {
		so := tc.so
		if _, err := New(Options{Client: tc.c, Requests: reqs, Load: load.Target{Mode: load.Concurrency, Concurrency: 1},
			Sequences: &so}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
