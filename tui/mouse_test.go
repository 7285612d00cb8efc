package tui

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tritontop/tritontop/stats"
)

// setMouseMode is what the terminal is sent to report clicks and the
// wheel (DEC mode 1002).
const setMouseMode = "\x1b[?1002h"

// center is the screen cell in the middle of pane p.
func center(m Model, p int) (x, y int) {
	r := m.rects[p]
	return r.x + r.w/2, headerRows + r.y + r.h/2
}

func click(t *testing.T, m Model, x, y int) Model {
	t.Helper()
	next, _ := m.Update(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	return next.(Model)
}

func wheel(t *testing.T, m Model, p int, b tea.MouseButton) Model {
	t.Helper()
	x, y := center(m, p)
	next, _ := m.Update(tea.MouseWheelMsg{X: x, Y: y, Button: b})
	return next.(Model)
}

// shownEnd is the tick at the charts' right edge; shownLen and shownFirst
// are how many ticks they hold and the oldest.
func shownEnd(m Model) int {
	h := m.board.charted()
	return h.latest().Seq
}

func shownLen(m Model) int {
	h := m.board.charted()
	return h.len()
}

func shownFirst(m Model) int {
	h := m.board.charted()
	return h.at(0).Seq
}

// A click on a pane gives it the focus tab gives: the same state and the
// same screen.
func TestClickFocusesPane(t *testing.T) {
	for _, sz := range sizes {
		o := Options{Control: newFakeControl(32), Mouse: true}
		snaps := degradedRun(64) // errors: six panes shown
		base := loaded(t, o, snaps, sz.w, sz.h)
		tabbed := loaded(t, o, snaps, sz.w, sz.h)
		clicked := 0
		for p := range paneCount {
			if !base.show[p] {
				continue
			}
			tabbed = press(t, tabbed, tea.KeyPressMsg{Code: tea.KeyTab})
			if tabbed.board.ui.focus != p {
				t.Fatalf("%dx%d: tab reached pane %d, want %d", sz.w, sz.h, tabbed.board.ui.focus, p)
			}
			m := loaded(t, o, snaps, sz.w, sz.h)
			x, y := center(m, p)
			m = click(t, m, x, y)
			if m.board.ui.focus != p {
				t.Errorf("%dx%d: click at (%d,%d) on pane %d focused %d", sz.w, sz.h, x, y, p, m.board.ui.focus)
				continue
			}
			if got, want := m.Render(), tabbed.Render(); got != want {
				t.Errorf("%dx%d: pane %d focused by a click draws another screen than by tab:\n%s\nwant\n%s",
					sz.w, sz.h, p, got, want)
			}
			// A click on the focused pane, which now fills the body,
			// keeps it.
			if m = click(t, m, 1, headerRows+1); m.board.ui.focus != p {
				t.Errorf("%dx%d: click on focused pane %d moved the focus to %d", sz.w, sz.h, p, m.board.ui.focus)
			}
			clicked++
		}
		if clicked != 6 {
			t.Errorf("%dx%d: %d panes clicked, want 6", sz.w, sz.h, clicked)
		}
	}
}

// The header, the warning lines and the key hints are no pane: a click
// there, a click off the screen, or another button changes nothing.
func TestClickOutsidePanesChangesNothing(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32), Mouse: true}, closedLoopRun(64), 120, 40)
	before := m.Render()
	tx, ty := center(m, focusThroughput)
	for _, c := range []tea.MouseClickMsg{
		{X: 5, Y: 0, Button: tea.MouseLeft},                    // header
		{X: 5, Y: headerRows - 1, Button: tea.MouseLeft},       // header
		{X: 5, Y: headerRows + m.body, Button: tea.MouseLeft},  // warning line
		{X: 5, Y: 39, Button: tea.MouseLeft},                   // key hints
		{X: 5, Y: 40, Button: tea.MouseLeft},                   // below the screen
		{X: 120, Y: headerRows + 1, Button: tea.MouseLeft},     // right of it
		{X: -1, Y: headerRows + 1, Button: tea.MouseLeft},      // left of it
		{X: tx, Y: ty, Button: tea.MouseRight},                 // not the left button
		{X: tx, Y: ty, Button: tea.MouseMiddle},                // nor this one
		{X: tx, Y: ty, Button: tea.MouseLeft, Mod: tea.ModAlt}, // a left click still
	} {
		next, _ := m.Update(c)
		got := next.(Model)
		want := -1
		if c.Button == tea.MouseLeft && c.X == tx {
			want = focusThroughput
		}
		if got.board.ui.focus != want {
			t.Errorf("click %v: focus %d, want %d", c, got.board.ui.focus, want)
		}
		if want < 0 && got.Render() != before {
			t.Errorf("click %v changed the screen", c)
		}
		got.board.ui.focus = -1
		got.layout()
	}
}

// Without Options.Mouse no mouse mode is asked for, and a mouse event that
// comes anyway does nothing; with it the View asks for clicks and the
// wheel.
func TestMouseModeOnlyWithOption(t *testing.T) {
	off := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(300), 120, 40)
	if mode := off.View().MouseMode; mode != tea.MouseModeNone {
		t.Errorf("without Mouse the View asks for mouse mode %v", mode)
	}
	before := off.Render()
	x, y := center(off, focusLatency)
	off = click(t, off, x, y)
	off = wheel(t, off, focusLatency, tea.MouseWheelUp)
	if off.board.ui.focus != -1 || off.board.ui.scrolled || off.Render() != before {
		t.Errorf("without Mouse a click and the wheel changed the dashboard: focus %d, scrolled %v",
			off.board.ui.focus, off.board.ui.scrolled)
	}
	on := loaded(t, Options{Control: newFakeControl(32), Mouse: true}, closedLoopRun(300), 120, 40)
	if mode := on.View().MouseMode; mode != tea.MouseModeCellMotion {
		t.Errorf("with Mouse the View asks for mouse mode %v, want cell motion", mode)
	}
}

// The full help lists the mouse's actions with Mouse, and only then; the
// keys that scroll the history always.
func TestHelpListsMouseActions(t *testing.T) {
	want := []string{"click focus pane", "wheel scroll history"}
	keys := []string{"[ scroll history back", "] scroll forward", "end live charts"}
	for _, mouse := range []bool{false, true} {
		m := loaded(t, Options{Control: newFakeControl(32), Mouse: mouse}, closedLoopRun(64), 120, 40)
		m = press(t, m, tea.KeyPressMsg{Code: '?', Text: "?"})
		out := ansi.Strip(m.Render())
		for _, w := range want {
			if strings.Contains(out, w) != mouse {
				t.Errorf("mouse %v: help has %q: %v\n%s", mouse, w, !mouse, out)
			}
		}
		spaced := strings.Join(strings.Fields(out), " ")
		for _, w := range keys {
			if !strings.Contains(spaced, w) {
				t.Errorf("mouse %v: help lacks %q\n%s", mouse, w, out)
			}
		}
	}
}

// chartRows are a throughput pane's chart rows: its lines under the two
// lines of numbers, inside the frame.
func chartRows(m Model) []string {
	lines := strings.Split(m.panes[focusThroughput].View(), "\n")
	return lines[3 : len(lines)-1]
}

// The wheel over a chart moves the charts back through the history and
// forward again; they draw exactly what a run that ended there would, and
// the header says where they are.
func TestWheelScrollsCharts(t *testing.T) {
	snaps := closedLoopRun(300)
	m := loaded(t, Options{Control: newFakeControl(32), Mouse: true}, snaps, 120, 40)
	live := chartRows(m)
	cols := m.rects[focusThroughput].w - 4 - chartAxis
	step := cols / 8

	m = wheel(t, m, focusThroughput, tea.MouseWheelUp)
	m = wheel(t, m, focusThroughput, tea.MouseWheelUp)
	if got, want := shownEnd(m), 300-2*step; got != want {
		t.Fatalf("charts end at tick %d after two wheel steps up, want %d", got, want)
	}
	if m.board.hist.latest().Seq != 300 {
		t.Fatal("scrolling changed the history")
	}
	ended := loaded(t, Options{Control: newFakeControl(32)}, snaps[:300-2*step], 120, 40)
	if got, want := chartRows(m), chartRows(ended); !slices.Equal(got, want) {
		t.Errorf("scrolled chart:\n%s\nwant the chart of a run ended there:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	header := ansi.Strip(strings.SplitN(m.Render(), "\n", 3)[1])
	if want := "◂ charts at " + fmtElapsed(snaps[300-2*step-1].Elapsed); !strings.Contains(header, want) {
		t.Errorf("header %q does not say %q", header, want)
	}
	// Its numbers still say now.
	if !strings.Contains(ansi.Strip(m.panes[focusThroughput].View()), fmtRate(snaps[299].Tick.InferPerS)+" infer/s") {
		t.Errorf("scrolled pane's numbers are not the latest tick's:\n%s", m.panes[focusThroughput].View())
	}

	m = wheel(t, m, focusLatency, tea.MouseWheelDown)
	m = wheel(t, m, focusThroughput, tea.MouseWheelDown)
	if m.board.ui.scrolled {
		t.Errorf("charts still scrolled after as many steps down as up (end at %d)", shownEnd(m))
	}
	if got := chartRows(m); !slices.Equal(got, live) {
		t.Errorf("chart after scrolling back down is not the live one:\n%s", strings.Join(got, "\n"))
	}
	if strings.Contains(m.Render(), "charts at") {
		t.Error("the header still says the charts are scrolled")
	}
	// Down past now stays live.
	if m = wheel(t, m, focusThroughput, tea.MouseWheelDown); m.board.ui.scrolled {
		t.Error("wheel down while live scrolled the charts")
	}
}

// Back through the whole history, the charts stop where the chart under
// the pointer has the oldest tick at its left edge.
func TestWheelStopsAtOldestTick(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32), Mouse: true}, closedLoopRun(300), 120, 40)
	cols := m.rects[focusThroughput].w - 4 - chartAxis
	for range 300 {
		m = wheel(t, m, focusThroughput, tea.MouseWheelUp)
	}
	if got := shownLen(m); got != cols {
		t.Errorf("charts show %d ticks at the oldest end, want the chart's %d columns", got, cols)
	}
	if first := shownFirst(m); first != 1 {
		t.Errorf("oldest tick shown is %d, want 1", first)
	}
	// One step down from there moves forward again.
	end := m.board.chartEnd()
	if m = wheel(t, m, focusThroughput, tea.MouseWheelDown); m.board.chartEnd() != end+cols/8 {
		t.Errorf("wheel down from the oldest end moved to %d, want %d", m.board.chartEnd(), end+cols/8)
	}
	// The wheel over a pane that draws no history does nothing.
	e := loaded(t, Options{Control: newFakeControl(32), Mouse: true}, degradedRun(300), 120, 40)
	if e = wheel(t, e, focusErrors, tea.MouseWheelUp); e.board.ui.scrolled {
		t.Error("the wheel over the errors pane scrolled the charts")
	}
}

// Scrolled charts hold still as ticks come, until their ticks leave the
// history; end, G and a load change bring them back to now.
func TestScrolledChartsHoldAndReturnToLive(t *testing.T) {
	snaps := closedLoopRun(HistoryLength + 400)
	ctl := newFakeControl(32)
	m := loaded(t, Options{Control: ctl, Mouse: true}, snaps[:300], 120, 40)
	m = wheel(t, m, focusLatency, tea.MouseWheelUp)
	held := shownEnd(m)
	for _, s := range snaps[300:400] {
		m.push(s)
	}
	if got := shownEnd(m); got != held {
		t.Errorf("charts moved from tick %d to %d as ticks came", held, got)
	}
	// Past the history's length the held tick is gone: the charts keep
	// the oldest ticks left.
	for _, s := range snaps[400:] {
		m.push(s)
	}
	cols := m.rects[focusLatency].w - 4 - chartAxis
	if shownLen(m) != cols || shownFirst(m) != snaps[len(snaps)-HistoryLength].Seq {
		t.Errorf("charts hold %d ticks from %d, want the %d oldest left", shownLen(m), shownFirst(m), cols)
	}

	for _, k := range []tea.KeyPressMsg{
		{Code: tea.KeyEnd},
		{Code: 'g', ShiftedCode: 'G', Text: "G", Mod: tea.ModShift},
		{Code: tea.KeyUp},
		{Code: tea.KeyDown},
	} {
		m = wheel(t, m, focusThroughput, tea.MouseWheelUp)
		if !m.board.ui.scrolled {
			t.Fatal("the wheel did not scroll the charts")
		}
		m = press(t, m, k)
		if m.board.ui.scrolled {
			t.Errorf("charts still scrolled after %s", k)
		}
		if n := shownEnd(m); n != snaps[len(snaps)-1].Seq {
			t.Errorf("after %s the charts end at tick %d, not the latest", k, n)
		}
	}
	if calls := ctl.Calls(); len(calls) != 2 {
		t.Errorf("load calls %v, want one up and one down", calls)
	}
}

// A replay stepping back to before where the charts were scrolled shows
// them live.
func TestReplayStepBackPastScrollIsLive(t *testing.T) {
	snaps := closedLoopRun(300)
	m := loaded(t, Options{Replay: &fakeReplay{}, Mouse: true}, snaps, 120, 40)
	m = wheel(t, m, focusThroughput, tea.MouseWheelUp)
	held := shownEnd(m)
	m.push(snaps[held+1]) // stepped back, but not past it
	if !m.board.ui.scrolled || shownEnd(m) != held {
		t.Errorf("a step back to after tick %d moved the charts to %d", held, shownEnd(m))
	}
	m.push(snaps[held-10])
	if m.board.ui.scrolled || shownEnd(m) != held-9 {
		t.Errorf("a step back past tick %d left the charts scrolled at %d", held, shownEnd(m))
	}
}

// In a running program, --mouse's dashboard asks the terminal for mouse
// events and a click focuses the pane under it; without it, the program
// never asks.
func TestMouseInProgram(t *testing.T) {
	for _, mouse := range []bool{false, true} {
		ch := make(chan stats.Snapshot, 64)
		for _, s := range closedLoopRun(64) {
			ch <- s
		}
		tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Control: newFakeControl(32), Header: header, FPS: 50, Mouse: mouse}),
			teatest.WithInitialTermSize(120, 40))
		var seen []byte
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			seen = append(seen, b...)
			return bytes.Contains(seen, []byte("Throughput"))
		}, teatest.WithDuration(flowTimeout))
		// The latency pane is right of the middle, below the header.
		tm.Send(tea.MouseClickMsg{X: 90, Y: 10, Button: tea.MouseLeft})
		tm.Type("q")
		m := tm.FinalModel(t, teatest.WithFinalTimeout(flowTimeout)).(Model)
		rest, err := io.ReadAll(tm.FinalOutput(t))
		if err != nil {
			t.Fatal(err)
		}
		if asked := bytes.Contains(append(seen, rest...), []byte(setMouseMode)); asked != mouse {
			t.Errorf("mouse %v: the program asked the terminal for mouse events: %v", mouse, asked)
		}
		want := -1
		if mouse {
			want = focusLatency
		}
		if m.board.ui.focus != want {
			t.Errorf("mouse %v: focus %d after a click on the latency pane, want %d", mouse, m.board.ui.focus, want)
		}
	}
}

// [ and ] scroll the charts as the wheel does, with or without the mouse:
// over the focused chart, else the throughput chart; ] back to the latest
// tick is live again.
func TestKeysScrollCharts(t *testing.T) {
	snaps := closedLoopRun(300)
	earlier := tea.KeyPressMsg{Code: '[', Text: "["}
	later := tea.KeyPressMsg{Code: ']', Text: "]"}
	m := loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40)
	live := chartRows(m)
	step := (m.rects[focusThroughput].w - 4 - chartAxis) / 8

	m = press(t, m, earlier, earlier)
	if got, want := shownEnd(m), 300-2*step; got != want {
		t.Fatalf("charts end at tick %d after [ twice, want %d", got, want)
	}
	ended := loaded(t, Options{Control: newFakeControl(32)}, snaps[:300-2*step], 120, 40)
	if got, want := chartRows(m), chartRows(ended); !slices.Equal(got, want) {
		t.Errorf("scrolled chart:\n%s\nwant the chart of a run ended there:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(m.Render(), "charts at") {
		t.Error("the header does not say the charts are scrolled")
	}
	m = press(t, m, later, later)
	if m.board.ui.scrolled || !slices.Equal(chartRows(m), live) {
		t.Errorf("charts not live after as many ] as [ (end at %d)", shownEnd(m))
	}

	// Focused, the latency chart's width sets the step.
	m = press(t, m, tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab})
	if m.board.ui.focus != focusLatency {
		t.Fatalf("focus %d after two tabs, want the latency pane", m.board.ui.focus)
	}
	lstep := (m.rects[focusLatency].w - 4 - chartAxis) / 8
	if m = press(t, m, earlier); shownEnd(m) != 300-lstep {
		t.Errorf("[ on the focused latency chart ends the charts at %d, want %d", shownEnd(m), 300-lstep)
	}
	if m = press(t, m, tea.KeyPressMsg{Code: tea.KeyEnd}); m.board.ui.scrolled {
		t.Error("end left the charts scrolled")
	}
}

// A digit focuses that pane among the shown ones, in tab's order; one past
// the panes shown changes nothing.
func TestDigitFocusesPane(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(64), 120, 40)
	digit := func(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }
	m = press(t, m, digit('2'))
	if m.board.ui.focus != focusLatency {
		t.Fatalf("2 focused pane %d, want the latency pane", m.board.ui.focus)
	}
	tabbed := press(t, loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(64), 120, 40),
		tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab})
	if m.Render() != tabbed.Render() {
		t.Error("the screen after 2 differs from the one after two tabs")
	}
	// Five panes without errors or a sweep: 5 is the CPU pane, 6 nothing.
	if m = press(t, m, digit('5')); m.board.ui.focus != focusCPU {
		t.Errorf("5 focused pane %d, want the CPU pane", m.board.ui.focus)
	}
	if m = press(t, m, digit('6')); m.board.ui.focus != focusCPU {
		t.Errorf("6 with five panes shown moved the focus to %d", m.board.ui.focus)
	}
}
