package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

func historyOf(snaps []stats.Snapshot) *history {
	h := newHistory(HistoryLength)
	for _, s := range snaps {
		h.push(s)
	}
	return h
}

// screenLines is m's screen without styles, one string per row.
func screenLines(m Model) []string { return strings.Split(ansi.Strip(m.Render()), "\n") }

// The header names what limits the load for as long as the ticks show it,
// and the warning lines say why; a run that recovers loses both.
func TestVerdictHoldsAsLongAsItsCondition(t *testing.T) {
	snaps := closedLoopRun(80) // past the knee: Triton's queue is longer than compute
	m := loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40)
	lines := screenLines(m)
	if !strings.Contains(lines[1], "⚠ bottleneck: server queue") {
		t.Errorf("header does not name the server queue:\n%s", lines[1])
	}
	if !strings.Contains(strings.Join(lines[2:], "\n"), "⚠ server queueing: requests wait") {
		t.Errorf("no warning line says why:\n%s", strings.Join(lines, "\n"))
	}
	// Below the knee for the last ten ticks: nothing to say.
	calm := closedLoopRun(12)
	ch := make(chan stats.Snapshot, len(calm))
	for i := range calm {
		s := calm[i]
		s.Seq, s.Elapsed, s.Time = 80+i+1, time.Duration(80+i+1)*time.Second, base.Add(time.Duration(80+i+1)*time.Second)
		ch <- s
	}
	m.opts.Snapshots = ch
	m.drain()
	next, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	out := strings.Join(screenLines(next.(Model)), "\n")
	if strings.Contains(out, "⚠") {
		t.Errorf("verdicts stayed after the condition ended:\n%s", out)
	}
}

// With the simulator in the process, tritontop's CPU is mostly the
// server's: no client-bound verdict from it; a full client host still is.
func TestSharedProcessIsNotClientBound(t *testing.T) {
	busy := closedLoopRun(12)
	for i := range busy {
		busy[i].System.ProcessCPU, busy[i].System.HostCPU = 15.5, 0.6
	}
	for _, shared := range []bool{false, true} {
		h := header
		h.SharedProcess = shared
		m := loaded(t, Options{Control: newFakeControl(4), Header: h}, busy, 120, 40)
		got := strings.Contains(screenLines(m)[1], "bottleneck: client CPU")
		if got == shared {
			t.Errorf("shared %v: header names the client: %v\n%s", shared, got, screenLines(m)[1])
		}
	}
}

// Findings that need more lines than the screen gives them scroll, a line
// every warnScroll, instead of being cut.
func TestLongWarningsWrapAndScroll(t *testing.T) {
	snaps := degradedRun(64)
	long := strings.Repeat("the server said something long about it ", 6)
	for i := len(snaps) / 2; i < len(snaps); i++ {
		snaps[i].Tick.ErrorsByCode = []stats.ErrorCount{{Code: "UNAVAILABLE", Count: 4, Message: long}}
	}
	m := loaded(t, Options{Control: newFakeControl(32), FPS: 10}, snaps, 80, 24)
	if len(m.warn.all) <= m.warn.rows {
		t.Fatalf("%d warning lines in %d rows: the test needs more", len(m.warn.all), m.warn.rows)
	}
	first := strings.Join(screenLines(m), "\n")
	if !strings.Contains(first, "⚠ server unreachable") {
		t.Errorf("first finding not shown:\n%s", first)
	}
	var tm tea.Model = m
	for range int(warnScroll / (time.Second / 10)) {
		tm, _ = tm.Update(frameMsg(time.Now()))
	}
	if got := tm.(Model).warn.offset; got != 1 {
		t.Errorf("after %v the warning lines scrolled to %d, want 1", warnScroll, got)
	}
	// As it scrolls, every line of the findings reaches the screen: the
	// long message is read whole.
	seen := map[string]bool{}
	for range len(tm.(Model).warn.all) {
		lines := screenLines(tm.(Model))
		for _, l := range lines[len(lines)-1-tm.(Model).warn.rows : len(lines)-1] {
			seen[strings.TrimSpace(l)] = true
		}
		for range int(warnScroll / (time.Second / 10)) {
			tm, _ = tm.Update(frameMsg(time.Now()))
		}
	}
	var all []string
	for _, l := range tm.(Model).warn.all {
		l = strings.TrimSpace(ansi.Strip(l))
		if !seen[l] {
			t.Errorf("warning line never shown: %q", l)
		}
		all = append(all, l)
	}
	if words := strings.Count(strings.Join(all, " "), "long about it"); words != 6 {
		t.Errorf("the warning lines hold %d of the message's 6 repeats", words)
	}
}

// A client near its CPU limit is where the time outside Triton goes: the
// header names it once, the warning lines say both.
func TestClientCPUAndTimeOutsideTritonNamedOnce(t *testing.T) {
	snaps := closedLoopRun(12)
	for i := range snaps {
		s := &snaps[i]
		s.System.HostCPU = 0.97
		s.Tick.Latency = latencyAt(s.Tick.Latency.Count, 3*s.Server.Request)
	}
	m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 120, 40)
	lines := screenLines(m)
	if h := lines[1]; !strings.Contains(h, "⚠ bottleneck: client CPU  ") {
		t.Errorf("header %q, want the client CPU alone", h)
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{"⚠ client host near full", "⚠ time outside Triton"} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning line %q:\n%s", want, out)
		}
	}
}

// The warning lines are painted with the styles: a terminal found to be
// colorless repaints them without color.
func TestWarningLinesFollowTheStyles(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(80), 120, 40)
	next, _ := m.Update(colorProfile(false))
	for _, l := range next.(Model).warn.all {
		if strings.Contains(l, "38;2;") {
			t.Errorf("a warning line kept its color: %q", l)
		}
	}
}
