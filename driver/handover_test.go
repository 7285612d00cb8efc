package driver

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

func TestResultMaxAgeFor(t *testing.T) {
	for _, c := range []struct{ tick, want time.Duration }{
		{0, DefaultResultMaxAge},
		{-time.Second, DefaultResultMaxAge},
		{time.Second, DefaultResultMaxAge},
		{200 * time.Millisecond, DefaultResultMaxAge},
		{100 * time.Millisecond, 25 * time.Millisecond},
		{10 * time.Millisecond, 2500 * time.Microsecond},
		{2 * time.Millisecond, time.Millisecond},
		{time.Nanosecond, time.Millisecond},
	} {
		if got := ResultMaxAgeFor(c.tick); got != c.want {
			t.Errorf("ResultMaxAgeFor(%v) = %v; want %v", c.tick, got, c.want)
		}
	}
}

// emptyTickShare runs an open loop of 400 requests/s for 600 ms and
// returns the share of 10 ms ticks, in its steady middle, in which no
// results were handed over.
func emptyTickShare(t *testing.T, age time.Duration) float64 {
	t.Helper()
	d, err := New(Options{Client: &nopClient{}, Requests: []*triton.InferRequest{{Model: "m"}},
		Load: load.Target{Mode: load.Rate, Rate: 400}, ResultMaxAge: age})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	const tick = 10 * time.Millisecond
	begin := time.Now()
	seen := map[int]bool{}
	for b := range d.Results() {
		if len(b) > 0 {
			seen[int(time.Since(begin)/tick)] = true
		}
	}
	if err := <-done; err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	empty, ticks := 0, 0
	for i := 10; i < 50; i++ { // 100 ms to 500 ms
		ticks++
		if !seen[i] {
			empty++
		}
	}
	return float64(empty) / float64(ticks)
}

// TestShortTicksSeeResults: with the hand-over interval following a 10 ms
// tick, results reach nearly every tick; with the fixed default of 50 ms
// most ticks get none, which the diagnosis read as a stalled server.
func TestShortTicksSeeResults(t *testing.T) {
	fixed := emptyTickShare(t, DefaultResultMaxAge)
	following := emptyTickShare(t, ResultMaxAgeFor(10*time.Millisecond))
	t.Logf("empty 10 ms ticks: %.0f%% with a %v hand-over, %.0f%% with %v", 100*fixed, DefaultResultMaxAge,
		100*following, ResultMaxAgeFor(10*time.Millisecond))
	if following > fixed/2 {
		t.Errorf("empty 10 ms ticks: %.0f%% with the tick's hand-over, against %.0f%% with the fixed one; want under half", 100*following, 100*fixed)
	}
}
