package tui

import (
	"strconv"
	"time"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/stats"
)

// Common is what every pane shares: the screen size, styles and keys.
type Common struct {
	Width, Height int
	Styles        *Styles
	KeyMap        *KeyMap
}

// windowChoices are the spans w cycles through; zero is the whole run.
var windowChoices = [...]time.Duration{10 * time.Second, 60 * time.Second, 0}

// uiState is what the person changed, as opposed to what was measured.
type uiState struct {
	replay bool
	window int // index into windowChoices
	focus  int // index into the panes, -1 for none
	// load is the load shown: in a live run the driver's own word, read
	// each frame and after each key, so a key press shows at once; in a
	// replay the latest snapshot's. Its Mode is empty until one is known.
	load   stats.Load
	paused bool
	speed  float64 // replay speed
	ended  bool    // the snapshot feed closed
	atEnd  bool    // the replay has played its last snapshot
	// sweep is the stepped run's progress, read each frame; sweeping is
	// set when there is one.
	sweep    plan.Progress
	sweeping bool
	// model is the model of a run over several that the detailed panes
	// show (an index into Snapshot.Models), -1 for all of them together.
	model int
	// scrolled says that the wheel moved the charts back from now: their
	// right edge is then the tick numbered scrollSeq, which holds still as
	// new ticks come. scrollCols is the plot width of the chart the wheel
	// was over: the charts never end so early that its left part would be
	// empty.
	scrolled   bool
	scrollSeq  int
	scrollCols int
}

// board is the state the panes render: the snapshot history, the UI state
// and the run's fixed facts. Views read it and never change it.
type board struct {
	common *Common
	// hist is what the panes draw: the snapshots, or in a run over several
	// models each one's view of the model shown (Snapshot.ModelView).
	// raw keeps the whole snapshots of such a run, nil until one comes.
	hist *history
	raw  *history
	ui   *uiState
	// header is what the header says; in a run over several models it is
	// base with the facts of the model shown.
	header HeaderInfo
	base   HeaderInfo
	models []ModelControl
	// findings are stats.Diagnose's verdicts over the latest ticks;
	// diagnosed counts the diagnoses, so that what is drawn from them is
	// redone only when they change.
	findings  []stats.Finding
	diagnosed int
	// spans names the ticks each finding was read over (findingSpans);
	// avg is the latency pane's client/Triton split over the same ticks.
	spans []string
	avg   avgSplit
}

// windowStats returns the client statistics for the selected window and its
// name. The whole-run choice reads Snapshot.Run: the sliding window has a
// length, the run's totals are already kept.
func (b *board) windowStats(s *stats.Snapshot) (*stats.ClientStats, string) {
	if windowChoices[b.ui.window] == 0 {
		return &s.Run, "whole run"
	}
	// The window restarts at a change of load (stats.Aggregator.StartLevel)
	// and covers less than its length until it fills again: it says so.
	if w := s.Window.Duration; w > 0 && w+s.Interval/2 < min(s.WindowLength, s.Run.Duration) {
		return &s.Window, "last " + strconv.FormatFloat(w.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s at this load"
	}
	return &s.Window, fmtWindow(s.WindowLength)
}

// chartEnd is the index in hist of the newest tick the charts show: the
// latest when live, the one numbered scrollSeq (or the newest before it)
// when scrolled, but never before the scrollCols-th tick. -1 when the
// history is empty.
func (b *board) chartEnd() int {
	h, ui := b.hist, b.ui
	n := h.len()
	if !ui.scrolled || n == 0 {
		return n - 1
	}
	// Seq grows along the history (push drops the ticks a step back
	// replaces): the first tick past scrollSeq, by bisection.
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.at(mid).Seq <= ui.scrollSeq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return min(n-1, max(lo-1, ui.scrollCols-1))
}

// charted is the history the charts and sparklines draw: all of it when
// live, up to chartEnd when scrolled. It shares hist's ring, so taking it
// costs no allocation; the panes' numbers keep reading hist, now.
func (b *board) charted() history {
	h := *b.hist
	h.n = b.chartEnd() + 1
	return h
}

// pane is one box of the dashboard.
type pane interface {
	SetSize(w, h int)
	View() string
}
