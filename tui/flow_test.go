package tui

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tritontop/tritontop/stats"
)

const flowTimeout = 10 * time.Second

// waitCalls polls until calls() holds want.
func waitCalls(t *testing.T, calls func() []string, want string) {
	t.Helper()
	deadline := time.Now().Add(flowTimeout)
	for time.Now().Before(deadline) {
		if slices.Contains(calls(), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no call %s; calls: %v", want, calls())
}

func TestUpRaisesConcurrencyAndHeaderShowsIt(t *testing.T) {
	ctl := newFakeControl(8)
	ch := make(chan stats.Snapshot, 64)
	for _, s := range closedLoopRun(10) {
		ch <- s
	}
	tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Control: ctl, Header: header, FPS: 50}),
		teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("concurrency")) },
		teatest.WithDuration(flowTimeout))

	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
	waitCalls(t, ctl.Calls, "SetConcurrency(10)")
	// The renderer redraws only what changed: the new target.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("10 ↑↓")) },
		teatest.WithDuration(flowTimeout))

	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(flowTimeout))
	m, ok := tm.FinalModel(t).(Model)
	if !ok {
		t.Fatalf("final model is %T, want tui.Model", tm.FinalModel(t))
	}
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "concurrency 10 ↑↓") {
		t.Errorf("header does not show the new concurrency:\n%s", out)
	}
	if got := ctl.Calls(); !slices.Equal(got, []string{"SetConcurrency(10)"}) {
		t.Errorf("calls %v, want just SetConcurrency(10)", got)
	}
}

func TestLessLoadAndPauseKeys(t *testing.T) {
	ctl := newFakeControl(10)
	var m tea.Model = New(Options{Control: ctl})
	for _, k := range "-pp" {
		m, _ = m.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	want := []string{"SetConcurrency(8)", "Pause", "Resume", "SetConcurrency(7)"}
	if got := ctl.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); cmd == nil || cmd() != tea.Quit() {
		t.Error("ctrl+c does not quit")
	}
}

func TestRateKeys(t *testing.T) {
	ctl := newFakeRateControl(100)
	m := New(Options{Control: ctl})
	next, _ := m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	next, _ = next.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	want := []string{"SetRate(110)", "SetRate(100)"}
	if got := ctl.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if r := next.(Model).board.ui.load.Rate; r != 100 {
		t.Errorf("rate shown %g, want 100", r)
	}
}

func TestReplayIgnoresLoadKeys(t *testing.T) {
	rp := &fakeReplay{speed: 1}
	ch := make(chan stats.Snapshot, 64)
	for _, s := range closedLoopRun(10) {
		ch <- s
	}
	tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Replay: rp, Header: header, FPS: 50}),
		teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("replay")) },
		teatest.WithDuration(flowTimeout))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyRight})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyLeft})
	tm.Type("+")
	// The steps paused the replay: space resumes it.
	tm.Send(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	waitCalls(t, rp.Calls, "Resume")
	tm.Type("q")
	m := tm.FinalModel(t, teatest.WithFinalTimeout(flowTimeout)).(Model)
	want := []string{"Step(1)", "Step(-1)", "SetSpeed(2)", "Resume"}
	if got := rp.Calls(); !slices.Equal(got, want) {
		t.Errorf("replay calls %v, want %v", got, want)
	}
	if got := m.board.hist.latest().Load.Concurrency; got != closedLoopRun(10)[9].Load.Concurrency {
		t.Errorf("replayed load changed to %d", got)
	}
	if got := m.board.ui.load; got != m.board.hist.latest().Load {
		t.Errorf("replay shows load %+v, not the latest snapshot's", got)
	}
}

func TestWindowAndResetKeys(t *testing.T) {
	w := &fakeWindows{}
	var m tea.Model = New(Options{Control: newFakeControl(1), Windows: w})
	for _, k := range "wwwr" {
		m, _ = m.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	want := []string{"SetWindow(1m0s)", "SetWindow(0s)", "SetWindow(10s)", "ResetWindows"}
	if !slices.Equal(w.calls, want) {
		t.Errorf("window calls %v, want %v", w.calls, want)
	}
}

func TestWholeRunWithoutWindowControlReadsRun(t *testing.T) {
	m := loaded(t, Options{}, closedLoopRun(30), 120, 40)
	next, _ := m.Update(tea.KeyPressMsg{Code: 'w', Text: "w"})
	out := next.(Model).Render()
	if !strings.Contains(out, "Latency · whole run") {
		t.Errorf("whole-run window not shown after one w:\n%s", out)
	}
	// The recorded window and the whole run are the only two choices: a
	// second w goes back, never through a span the run file lacks.
	next, _ = next.Update(tea.KeyPressMsg{Code: 'w', Text: "w"})
	if out := next.(Model).Render(); !strings.Contains(out, "Latency · last 10 s") {
		t.Errorf("second w did not go back to the recorded window:\n%s", out)
	}
}

func TestFocusCyclesAndFillsBody(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(64), 120, 40)
	var tm tea.Model = m
	tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	got := tm.(Model)
	if got.board.ui.focus != focusLatency {
		t.Fatalf("focus %d after two tabs, want latency", got.board.ui.focus)
	}
	out := got.Render()
	checkScreen(t, out, 120, 40)
	if strings.Contains(out, "Throughput") {
		t.Error("focused latency pane shares the screen with throughput")
	}
	tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	if f := tm.(Model).board.ui.focus; f != focusThroughput {
		t.Errorf("shift+tab went to %d, want throughput", f)
	}
	// Without errors and without a sweep, five panes are shown: from
	// throughput, five tabs come back to no focus.
	for range 5 {
		tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	}
	if f := tm.(Model).board.ui.focus; f != -1 {
		t.Errorf("tab past the last pane gave focus %d, want none", f)
	}
}

func TestFocusedAndHelpScreens(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	for _, sz := range sizes {
		m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(64), sz.w, sz.h)
		var tm tea.Model = m
		tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyTab})
		tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyTab})
		t.Run(fmt.Sprintf("latency/%dx%d", sz.w, sz.h), func(t *testing.T) {
			out := tm.(Model).Render()
			checkScreen(t, out, sz.w, sz.h)
			golden.RequireEqual(t, out)
		})
		tm, _ = tm.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
		tm, _ = tm.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
		t.Run(fmt.Sprintf("help/%dx%d", sz.w, sz.h), func(t *testing.T) {
			out := tm.(Model).Render()
			checkScreen(t, out, sz.w, sz.h)
			golden.RequireEqual(t, out)
		})
	}
}

func TestStepBackDropsLaterTicks(t *testing.T) {
	m := loaded(t, Options{}, closedLoopRun(20), 80, 24)
	m.push(closedLoopRun(20)[14]) // a replay stepped back to tick 15
	if got := m.board.hist.latest().Seq; got != 15 {
		t.Fatalf("latest seq %d after stepping back, want 15", got)
	}
	if n := m.board.hist.len(); n != 15 {
		t.Errorf("history holds %d ticks, want 15", n)
	}
}

func TestClosedFeedStopsDraining(t *testing.T) {
	ch := make(chan stats.Snapshot, 2)
	ch <- closedLoopRun(1)[0]
	close(ch)
	m := New(Options{Snapshots: ch, Control: newFakeControl(1)})
	m.drain()
	m.drain()
	if !m.board.ui.ended || m.board.hist.len() != 1 {
		t.Errorf("ended=%v len=%d, want the tick kept and the feed marked ended", m.board.ui.ended, m.board.hist.len())
	}
	if out := m.Render(); !strings.Contains(out, "stopped") {
		t.Errorf("header does not say stopped:\n%s", out)
	}
}

// The aggregator's window has a length; the whole run is Snapshot.Run, so
// the third w must show it in a live run too.
func TestWholeRunWithWindowControlReadsRun(t *testing.T) {
	snaps := closedLoopRun(30)
	m := loaded(t, Options{Control: newFakeControl(8), Windows: &fakeWindows{}}, snaps, 120, 40)
	next, _ := m.Update(tea.KeyPressMsg{Code: 'w', Text: "w"})
	next, _ = next.Update(tea.KeyPressMsg{Code: 'w', Text: "w"})
	out := next.(Model).Render()
	if !strings.Contains(out, "Latency · whole run") {
		t.Errorf("whole-run window not shown:\n%s", out)
	}
	want := "whole run " + fmtRate(snaps[29].Run.RequestsPerS) + " req/s"
	if !strings.Contains(ansi.Strip(out), want) {
		t.Errorf("throughput does not show the run's rate %q:\n%s", want, out)
	}
}

// The footer says what p does now.
func TestPauseHintSaysResumeWhilePaused(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(8)}, closedLoopRun(5), 120, 40)
	next, _ := m.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	if out := ansi.Strip(next.(Model).Render()); !strings.Contains(out, "p resume") {
		t.Errorf("footer while paused:\n%s", out)
	}
	next, _ = next.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	if out := ansi.Strip(next.(Model).Render()); !strings.Contains(out, "p pause") {
		t.Errorf("footer after resume:\n%s", out)
	}
}

// A key press changes the load, the driver starts a new tick at the new
// level, and the charts mark that tick with the level.
func TestLoadChangeMarksTheCharts(t *testing.T) {
	ctl := newFakeControl(4)
	ch := make(chan stats.Snapshot, 64)
	snaps := closedLoopRun(20) // all at 4 in flight
	for _, s := range snaps {
		ch <- s
	}
	tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Control: ctl, Header: header, FPS: 50}),
		teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Throughput")) },
		teatest.WithDuration(flowTimeout))

	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
	waitCalls(t, ctl.Calls, "SetConcurrency(5)")
	// The collector's next ticks run at the new level.
	for i := range 5 {
		s := closedLoopRun(21 + i)[20+i]
		s.Load.Concurrency, s.Load.InFlight = 5, 5
		ch <- s
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("┊")) },
		teatest.WithDuration(flowTimeout))
	tm.Type("q")
	m := tm.FinalModel(t, teatest.WithFinalTimeout(flowTimeout)).(Model)
	// The throughput chart is left of "││", the latency chart right of it:
	// each says the new level once, in its top row.
	var left, right int
	for _, l := range screenLines(m) {
		if a, b, ok := strings.Cut(l, "││"); ok {
			left += strings.Count(a, "┊5")
			right += strings.Count(b, "┊5")
		}
	}
	if left != 1 || right != 1 {
		t.Errorf("marks with the new level 5: %d on throughput, %d on latency; want one each\n%s",
			left, right, strings.Join(screenLines(m), "\n"))
	}
}

// At 80x24 the charts are too small for a time axis; focused, a chart
// fills the screen and shows it.
func TestFocusedChartShowsItsTimeAxis(t *testing.T) {
	ch := make(chan stats.Snapshot, 64)
	for _, s := range closedLoopRun(64) {
		ch <- s
	}
	tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Control: newFakeControl(32), Header: header, FPS: 50}),
		teatest.WithInitialTermSize(80, 24))
	var before []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		before = append(before, b...)
		return bytes.Contains(before, []byte("Throughput"))
	}, teatest.WithDuration(flowTimeout))
	if bytes.Contains(before, []byte("╵")) {
		t.Fatalf("a time axis at 80x24 before any focus:\n%s", before)
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("╵00:50")) },
		teatest.WithDuration(flowTimeout))
	tm.Type("q")
	m := tm.FinalModel(t, teatest.WithFinalTimeout(flowTimeout)).(Model)
	if m.board.ui.focus != focusThroughput {
		t.Errorf("focus %d, want the throughput chart", m.board.ui.focus)
	}
}

// While a sweep sets the load, the load keys do nothing and the header
// says which step runs; once it is done they work again.
func TestSweepTurnsLoadKeysOff(t *testing.T) {
	ctl := newFakeControl(32)
	sw := sweepAt(sweepRun(64))
	m := loaded(t, Options{Control: ctl, Sweep: sw}, sweepRun(64), 120, 40)
	next, _ := m.Update(frameMsg(time.Now()))
	next, _ = next.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if calls := ctl.Calls(); len(calls) != 0 {
		t.Errorf("a load key during the sweep called %v", calls)
	}
	if h := screenLines(next.(Model))[1]; !strings.Contains(h, "step 4/5") || strings.Contains(h, "↑↓") {
		t.Errorf("header during the sweep: %q", h)
	}
	p := sw.Progress()
	p.Done = true
	sw.set(p)
	next, _ = next.Update(frameMsg(time.Now()))
	next, _ = next.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if calls := ctl.Calls(); !slices.Equal(calls, []string{"SetConcurrency(40)"}) {
		t.Errorf("after the sweep, ↑ called %v", calls)
	}
}
