package promexport

import (
	"math"
	"testing"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// TestPausedTimeLeftOut: the time load was applied and the paused time add
// up the ticks', so that requests over applied time is the summary's
// throughput even across a pause.
func TestPausedTimeLeftOut(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ticks := []struct{ interval, paused time.Duration }{
		{time.Second, 0}, {time.Second, 400 * time.Millisecond}, {time.Second, time.Second}, {time.Second, 250 * time.Millisecond},
	}
	for i, tk := range ticks {
		n := int64(100 * (tk.interval - tk.paused) / time.Second)
		e.Add(stats.Snapshot{Seq: i + 1, Interval: tk.interval, Paused: tk.paused,
			Tick: stats.ClientStats{Duration: tk.interval - tk.paused, Requests: n, Successes: n}})
	}
	fams := mustScrape(t, serve(t, e))
	applied := counter(t, fams, MetricLoadApplied, nil)
	paused := counter(t, fams, MetricPaused, nil)
	if math.Abs(applied-2.35) > 1e-9 || math.Abs(paused-1.65) > 1e-9 {
		t.Errorf("applied %v s, paused %v s; want 2.35 and 1.65", applied, paused)
	}
	if got := counter(t, fams, MetricRequests, nil) / applied; math.Abs(got-100) > 1 {
		t.Errorf("requests over applied time = %v/s, want 100/s", got)
	}
}
