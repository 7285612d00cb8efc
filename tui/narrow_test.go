package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// fastRun is closedLoopRun against a fast, unbatched model: latencies
// under a millisecond and thousands of requests per second.
func fastRun(n int) []stats.Snapshot {
	snaps := closedLoopRun(n)
	for i := range snaps {
		s := &snaps[i]
		for _, c := range []*stats.ClientStats{&s.Tick, &s.Window, &s.Run} {
			c.Latency = latencyAt(c.Requests, 393*time.Microsecond)
			c.RequestsPerS *= 4
			c.InferPerS = c.RequestsPerS
		}
	}
	return snaps
}

// At 80 columns the latency table's cells are five wide: sub-millisecond
// values must still be apart, one number per percentile.
func TestLatencyCellsStayApartAt80(t *testing.T) {
	out := ansi.Strip(loaded(t, Options{Control: newFakeControl(4)}, fastRun(20), 80, 24).Render())
	var row string
	for _, l := range strings.Split(out, "\n") {
		if _, after, ok := strings.Cut(l, "│ send"); ok {
			row, _, _ = strings.Cut(after, "│")
		}
	}
	if f := strings.Fields(row); len(f) != 6 {
		t.Errorf("send row has %d fields, want 6 percentiles: %q\n%s", len(f), row, out)
	}
}

// At 80 columns an unbatched run's first throughput line says its rate
// once rather than cut the run average.
func TestThroughputLineFitsAt80(t *testing.T) {
	snaps := fastRun(20)
	out := ansi.Strip(loaded(t, Options{Control: newFakeControl(4)}, snaps, 80, 24).Render())
	want := "avg " + fmtRate(snaps[19].Run.RequestsPerS)
	line := strings.Split(out, "\n")[3]
	if !strings.Contains(line, want+" ") || strings.Contains(line, "…") {
		t.Errorf("throughput line %q lacks %q", line, want)
	}
}
