package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// column is the cell index of the first r in line (styles stripped).
func column(line string, r rune) int {
	for i, c := range []rune(ansi.Strip(line)) {
		if c == r {
			return i
		}
	}
	return -1
}

// A load change starts a new tick: the mark sits on the first tick at the
// new level, with the level, and nowhere else.
func TestChartMarksTheTickWhereTheLoadChanged(t *testing.T) {
	snaps := closedLoopRun(30) // 4 in flight for ticks 1–20, 8 from tick 21
	h := historyOf(snaps)
	st := NewStyles(false)
	c := newChart(fmtAxis, "", reqPerS)
	const width, rows = 48, 10 // 40 columns: ticks 1..30 in columns 10..39
	out := c.draw(st, h, width, rows)
	want := chartAxis + 10 + 20 // tick 21's column
	if got := column(out[0], '┊'); got != want {
		t.Errorf("mark in column %d, want %d (tick 21):\n%s", got, want, strings.Join(out, "\n"))
	}
	if top := ansi.Strip(out[0]); !strings.Contains(top, "┊8") || strings.Count(top, "┊") != 1 {
		t.Errorf("top row %q: want one mark labelled with the new level 8", top)
	}
	// A rate level and the drain are named as such.
	if got := levelLabel(stats.Load{Mode: "rate", Rate: 250}); got != "250/s" {
		t.Errorf("rate level %q", got)
	}
	if got := levelLabel(stats.Load{Mode: "concurrency", Concurrency: 8, Drain: true}); got != "stop" {
		t.Errorf("drain %q", got)
	}
}

// A pause is no change of level: no mark.
func TestChartDoesNotMarkAPause(t *testing.T) {
	snaps := closedLoopRun(15)
	for i := 5; i < 10; i++ {
		snaps[i].Load.Paused = true
	}
	out := newChart(fmtAxis, "", reqPerS).draw(NewStyles(false), historyOf(snaps), 40, 8)
	if s := ansi.Strip(strings.Join(out, "\n")); strings.Contains(s, "┊") {
		t.Errorf("a pause was marked:\n%s", s)
	}
}

// The time axis names round instants of the run under the tick they fell
// in; the value axis has round ticks between 0 and the top, with the unit
// on the top one.
func TestChartAxes(t *testing.T) {
	snaps := closedLoopRun(64)
	out := newChart(fmtAxis, "ms", latP50, latP90, latP99).draw(NewStyles(false), historyOf(snaps), 68, 18)
	axis := ansi.Strip(out[len(out)-1])
	// 60 columns show ticks 5..64; 00:50 fell in tick 50, column 45.
	if got, want := strings.Index(axis, "╵00:50"), chartAxis+45; column(axis[got:], '╵') != 0 || len([]rune(axis[:got])) != want {
		t.Errorf("time axis %q: 00:50 not under column %d", axis, want)
	}
	for _, label := range []string{"╵00:10", "╵00:20", "╵00:30", "╵00:40"} {
		if !strings.Contains(axis, label) {
			t.Errorf("time axis %q lacks %s", axis, label)
		}
	}
	// p99 peaks at 44.3 ms: the scale tops at 50, ticks every 20.
	var ticks []string
	for _, l := range out[:len(out)-1] {
		if a := string([]rune(ansi.Strip(l))[:chartAxis]); strings.HasSuffix(a, "┤") {
			ticks = append(ticks, strings.TrimSpace(strings.TrimSuffix(a, "┤")))
		}
	}
	if got := strings.Join(ticks, ","); got != "50 ms,40,20,0" {
		t.Errorf("value axis labels %q, want 50 ms on top, 40, 20 and 0", got)
	}
}

// Queue and compute share one scale: a 1.4 ms queue is drawn lower than a
// 6.2 ms compute, never as high.
func TestQueueAndComputeShareOneScale(t *testing.T) {
	snaps := closedLoopRun(10)
	for i := range snaps {
		snaps[i].Server.Queue = 1400 * time.Microsecond
		snaps[i].Server.ComputeInput, snaps[i].Server.ComputeInfer, snaps[i].Server.ComputeOutput = 0, 6200*time.Microsecond, 0
	}
	m := loaded(t, Options{Control: newFakeControl(4), NoColor: true}, snaps, 120, 40)
	var queue, compute string
	for _, l := range screenLines(m) {
		if _, after, ok := strings.Cut(l, "│ queue "); ok {
			queue = after
		}
		if _, after, ok := strings.Cut(l, "│ compute "); ok {
			compute = after
		}
	}
	q, c := strings.TrimRight(queue, " │"), strings.TrimRight(compute, " │")
	if !strings.Contains(q, "0–8 ms") || !strings.HasSuffix(q, "▂") || !strings.HasSuffix(c, "▆") {
		t.Errorf("queue %q and compute %q not on one 0–8 ms scale (▂ and ▆)", q, c)
	}
}

// The sweep's plot grows a point per measured step; a step that failed
// the SLO is hollow.
func TestSweepPlotHasAPointPerStep(t *testing.T) {
	st := NewStyles(false)
	sw := sweepAt(sweepRun(64)).p
	for n := 0; n <= len(sw.Levels); n++ {
		levels := append([]plan.Level(nil), sw.Levels[:n]...)
		if n == 3 {
			levels[2].Step.Measurement = &record.Measurement{SLO: &record.SLOCheck{Pass: false}}
		}
		out := ansi.Strip(strings.Join(sweepPlot(st, levels, 40, 8), "\n"))
		full, hollow := strings.Count(out, "●"), strings.Count(out, "○")
		wantHollow := 0
		if n == 3 {
			wantHollow = 1
		}
		// Levels 4 and 8 have the same p99 and distinct throughput.
		if full+hollow != n || hollow != wantHollow {
			t.Errorf("%d steps: %d full and %d hollow points:\n%s", n, full, hollow, out)
		}
	}
}

// Time left: the step's own estimate, and the run's at most that plus a
// whole step for each step still to come.
func TestSweepTimeLeft(t *testing.T) {
	p := plan.Progress{Step: 4, Total: 5, InStep: 4 * time.Second, Left: 41 * time.Second}
	step, run := sweepLeft(&p)
	if step != 41*time.Second || run != 86*time.Second {
		t.Errorf("left %v in the step, %v in the run; want 41s and 1m26s", step, run)
	}
	p = plan.Progress{Step: 6, Total: 5, Left: 10 * time.Second} // a search past its estimate
	if _, run := sweepLeft(&p); run != 10*time.Second {
		t.Errorf("run left %v past the total, want the step's 10s", run)
	}
}

// Near the right edge a time label ends at its tick instead of starting
// there, so that a young run's first instant is named too.
func TestTimeLabelNearTheEdgeEndsAtItsTick(t *testing.T) {
	out := newChart(fmtAxis, "", reqPerS).draw(NewStyles(false), historyOf(closedLoopRun(13)), 51, 8)
	axis := ansi.Strip(out[len(out)-1])
	// 43 columns, ticks 1..13 in columns 30..42: 00:10 fell in tick 10,
	// column 39.
	i := strings.Index(axis, "00:10╵")
	if i < 0 || len([]rune(axis[:i]))+5 != chartAxis+39 {
		t.Errorf("time axis %q: want 00:10╵ ending at column %d", axis, 39)
	}
}
