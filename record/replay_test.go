package record

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// fakeClock is a manual clock: After's channels fire only when Advance
// passes their deadline.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waits   []time.Duration // every duration asked of After
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waits = append(c.waits, d)
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// waitFor returns the i-th duration asked of After, waiting for Run to ask.
func (c *fakeClock) waitFor(t *testing.T, i int) time.Duration {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		if len(c.waits) > i {
			d := c.waits[i]
			c.mu.Unlock()
			return d
		}
		c.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("replay never waited a %d-th time", i+1)
	return 0
}

// seqSnaps returns snapshots whose run times are the given seconds.
func seqSnaps(seconds ...float64) []stats.Snapshot {
	out := make([]stats.Snapshot, len(seconds))
	for i, s := range seconds {
		out[i] = stats.Snapshot{Seq: i + 1, Elapsed: time.Duration(s * float64(time.Second))}
	}
	return out
}

// player runs a replay in the background and collects emitted seqs.
type player struct {
	seqs chan int
	done chan error
}

func play(ctx context.Context, r *Replay) *player {
	p := &player{seqs: make(chan int, 100), done: make(chan error, 1)}
	go func() { p.done <- r.Run(ctx, func(s stats.Snapshot) { p.seqs <- s.Seq }) }()
	return p
}

func (p *player) next(t *testing.T) int {
	t.Helper()
	select {
	case s := <-p.seqs:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot emitted")
		return 0
	}
}

func (p *player) none(t *testing.T) {
	t.Helper()
	select {
	case s := <-p.seqs:
		t.Fatalf("unexpected snapshot %d emitted", s)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestReplayFullSpeedEmitsAllInOrder(t *testing.T) {
	r := NewReplay(seqSnaps(1, 2, 3, 4, 5), 0)
	var got []int
	if err := r.Run(context.Background(), func(s stats.Snapshot) { got = append(got, s.Seq) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0] != 1 || got[4] != 5 {
		t.Errorf("emitted %v, want 1..5", got)
	}
}

func TestReplayScalesRecordedSpacing(t *testing.T) {
	clk := &fakeClock{now: statstest.T0}
	r := NewReplay(seqSnaps(1, 2, 4, 4.5), 2)
	r.clock = clk
	p := play(context.Background(), r)
	if s := p.next(t); s != 1 {
		t.Fatalf("first emitted %d", s)
	}
	// Recorded gaps 1 s, 2 s, 0.5 s at speed 2.
	for i, want := range []time.Duration{500 * time.Millisecond, time.Second, 250 * time.Millisecond} {
		if d := clk.waitFor(t, i); d != want {
			t.Errorf("wait %d: %v, want %v", i, d, want)
		}
		clk.Advance(want - time.Millisecond)
		p.none(t)
		clk.Advance(time.Millisecond)
		if s := p.next(t); s != i+2 {
			t.Errorf("emitted %d, want %d", s, i+2)
		}
	}
	if err := <-p.done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestReplaySetSpeedKeepsPlayedTime(t *testing.T) {
	clk := &fakeClock{now: statstest.T0}
	r := NewReplay(seqSnaps(0, 10), 1)
	r.clock = clk
	p := play(context.Background(), r)
	p.next(t)
	clk.waitFor(t, 0)
	clk.Advance(4 * time.Second) // 4 of the 10 recorded seconds played
	r.SetSpeed(2)
	// The remaining 6 recorded seconds at speed 2.
	if d := clk.waitFor(t, 1); d != 3*time.Second {
		t.Errorf("after SetSpeed(2) waits %v, want 3s", d)
	}
	clk.Advance(3 * time.Second)
	if s := p.next(t); s != 2 {
		t.Errorf("emitted %d, want 2", s)
	}
	if err := <-p.done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestReplayStepAndPause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := NewReplay(seqSnaps(1, 2, 3, 4, 5), 0)
	r.HoldAtEnd(true)
	p := play(ctx, r)
	for want := 1; want <= 5; want++ {
		if s := p.next(t); s != want {
			t.Fatalf("emitted %d, want %d", s, want)
		}
	}
	p.none(t) // held at the end
	for _, step := range []struct{ n, want int }{{-2, 3}, {-10, 1}, {1, 2}, {100, 5}} {
		r.Step(step.n)
		if s := p.next(t); s != step.want {
			t.Errorf("Step(%d) emitted %d, want %d", step.n, s, step.want)
		}
		if !r.Paused() {
			t.Error("Step did not pause")
		}
	}
	r.Step(-3) // at 2
	p.next(t)
	p.none(t) // paused
	r.Resume()
	for want := 3; want <= 5; want++ {
		if s := p.next(t); s != want {
			t.Errorf("after Resume emitted %d, want %d", s, want)
		}
	}
	if i, n := r.Position(); i != 4 || n != 5 {
		t.Errorf("Position %d of %d, want 4 of 5", i, n)
	}
	cancel()
	if err := <-p.done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel: %v", err)
	}
}

func TestReplayPauseStopsPlayback(t *testing.T) {
	clk := &fakeClock{now: statstest.T0}
	r := NewReplay(seqSnaps(0, 1, 2), 1)
	r.clock = clk
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := play(ctx, r)
	p.next(t)
	clk.waitFor(t, 0)
	clk.Advance(500 * time.Millisecond)
	r.Pause()
	clk.Advance(time.Hour)
	p.none(t)
	r.Resume()
	// Half of the 1 s gap was played before the pause.
	if d := clk.waitFor(t, 1); d != 500*time.Millisecond {
		t.Errorf("after Resume waits %v, want 500ms", d)
	}
	clk.Advance(500 * time.Millisecond)
	if s := p.next(t); s != 2 {
		t.Errorf("emitted %d, want 2", s)
	}
}
