package tui

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// spanRun is 12 one-second ticks at concurrency 4 whose client latency and
// error share change in the last five (the diagnosis's span), so that the
// latest tick, the last 5 s and the last 10 s each give another value. The
// windows are the last ten ticks added up, as the aggregator keeps them.
func spanRun(t *testing.T) []stats.Snapshot {
	t.Helper()
	var snaps []stats.Snapshot
	for i := 1; i <= 12; i++ {
		ok, bad, us, server := 100, 1, int64(3000), int64(1000)
		if i > 7 {
			// Slower outside Triton, more errors.
			ok, bad, us, server = 90, 10, int64(3000+400*(i-7)), int64(1000+100*(i-7))
		}
		s := statstest.Tick(t, i, 4, ok, us, [5]int64{server, 100, 50, server - 300, 50})
		s.Tick.Requests += int64(bad)
		s.Tick.Errors = int64(bad)
		s.Tick.RequestsPerS = float64(s.Tick.Requests)
		s.Tick.ErrorsByCode = []stats.ErrorCount{{Code: "UNAVAILABLE", Count: int64(bad), Message: "overloaded"}}
		s.WindowLength = 10 * time.Second
		snaps = append(snaps, s)
	}
	snaps = statstest.WithRun(snaps)
	for i := range snaps {
		var w stats.ClientStats
		for j := max(0, i-9); j <= i; j++ {
			w.Add(&snaps[j].Tick)
		}
		w.SetRates()
		w.Latency = snaps[i].Tick.Latency
		snaps[i].Window = w
	}
	return snaps
}

// near reports whether a shown number is v at the precision it is shown
// with: within half a unit of its last digit.
func near(shown string, v float64) bool {
	f, err := strconv.ParseFloat(shown, 64)
	if err != nil {
		return false
	}
	unit := 1.0
	if i := strings.IndexByte(shown, '.'); i >= 0 {
		unit = math.Pow(10, -float64(len(shown)-i-1))
	}
	return math.Abs(f-v) <= unit/2+1e-9
}

// The latency pane's "avg = Triton + outside" line and the footer's
// time-outside-Triton finding are one quantity over one span: both equal
// the value recomputed from the last five ticks, both name that span, and
// neither is the latest tick's.
func TestAvgSplitPaneAndFooterAgree(t *testing.T) {
	snaps := spanRun(t)
	var client, server, k float64
	for _, s := range snaps[len(snaps)-stats.DiagnoseTicks:] {
		n := float64(s.Tick.Latency.Count)
		client += float64(s.Tick.Latency.Mean) / 1e6 * n
		server += float64(s.Server.Request) / 1e6 * n
		k += n
	}
	client, server = client/k, server/k
	outside := client - server
	last := &snaps[len(snaps)-1]
	if lastOut := float64(last.Tick.Latency.Mean-last.Server.Request) / 1e6; math.Abs(lastOut-outside) < 0.1 {
		t.Fatalf("fixture: the last tick's %.3f ms outside is the span's %.3f", lastOut, outside)
	}

	m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 160, 40)
	screen := strings.Join(screenLines(m), "\n")
	pane := regexp.MustCompile(`avg +([0-9.]+) ms = Triton ([0-9.]+) \([0-9.]+%\) \+ outside ([0-9.]+) \([0-9.]+%\) network, client · (last 5 s)`).FindStringSubmatch(screen)
	foot := regexp.MustCompile(`time outside Triton: ([0-9.]+) ms of the ([0-9.]+) ms client latency \([0-9]+%\) is network and client; the server takes ([0-9.]+) ms · (last 5 s)`).FindStringSubmatch(screen)
	if pane == nil || foot == nil {
		t.Fatalf("pane line %q, footer %q, in:\n%s", pane, foot, screen)
	}
	for _, c := range []struct {
		what, shown string
		want        float64
	}{
		{"pane client", pane[1], client}, {"pane Triton", pane[2], server}, {"pane outside", pane[3], outside},
		{"footer outside", foot[1], outside}, {"footer client", foot[2], client}, {"footer Triton", foot[3], server},
	} {
		if !near(c.shown, c.want) {
			t.Errorf("%s shows %s, recomputed over the last 5 s: %.4f", c.what, c.shown, c.want)
		}
	}
	if pane[1] != foot[2] || pane[3] != foot[1] {
		t.Errorf("pane says %s = … + outside %s, footer says %s of %s", pane[1], pane[3], foot[1], foot[2])
	}
}

// The errors pane's share is over its window and the footer's over the
// diagnosis's span: each equals the share recomputed over the span it
// names, and the names differ, so two different numbers read as two
// quantities.
func TestErrorSharePaneAndFooterNameTheirSpans(t *testing.T) {
	snaps := spanRun(t)
	share := func(ticks []stats.Snapshot) float64 {
		var e, r int64
		for _, s := range ticks {
			e += s.Tick.Errors
			r += s.Tick.Requests
		}
		return 100 * float64(e) / float64(r)
	}
	window := share(snaps[len(snaps)-10:])
	diag := share(snaps[len(snaps)-stats.DiagnoseTicks:])

	m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 160, 40)
	screen := strings.Join(screenLines(m), "\n")
	pane := regexp.MustCompile(`([0-9,]+) errors \(([0-9.]+)%\) in (last 10 s)`).FindStringSubmatch(screen)
	foot := regexp.MustCompile(`errors: ([0-9]+)% of requests fail \(UNAVAILABLE: overloaded\) · (last 5 s)`).FindStringSubmatch(screen)
	if pane == nil || foot == nil {
		t.Fatalf("errors pane %q, footer %q, in:\n%s", pane, foot, screen)
	}
	if !near(pane[2], window) {
		t.Errorf("errors pane shows %s%% in the last 10 s, recomputed %.3f%%", pane[2], window)
	}
	if !near(foot[1], diag) {
		t.Errorf("footer shows %s%% over the last 5 s, recomputed %.3f%%", foot[1], diag)
	}
	if pane[2] == foot[1] {
		t.Fatalf("fixture: both spans give %s%%", pane[2])
	}
}

// A change of load cuts the diagnosis's span short, and both the pane and
// the footer say so.
func TestSpanAtThisLoad(t *testing.T) {
	snaps := spanRun(t)
	for i := len(snaps) - 2; i < len(snaps); i++ {
		snaps[i].Load.Concurrency, snaps[i].Load.Step = 8, 1
	}
	m := loaded(t, Options{Control: newFakeControl(8)}, snaps, 160, 40)
	screen := strings.Join(screenLines(m), "\n")
	for _, want := range []string{"% · last 2 s at this load  ", "the server takes 1.45 ms · last 2 s at this load", "fail (UNAVAILABLE: overloaded) · last 2 s at this load"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if got := m.board.avg.span; got != "last 2 s at this load" {
		t.Errorf("span %q", got)
	}
}

// m in a run of one model says why it does nothing, on the key hints'
// line, until the next key; in a run of several it switches models.
func TestModelKeyWithOneModelSaysSo(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(4)}, spanRun(t), 120, 40)
	next, _ := m.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	lines := screenLines(next.(Model))
	if got := lines[len(lines)-1]; !strings.Contains(got, oneModelNote) {
		t.Fatalf("after m the last line is %q", got)
	}
	next, _ = next.Update(tea.KeyPressMsg{Code: 'w', Text: "w"})
	if out := strings.Join(screenLines(next.(Model)), "\n"); strings.Contains(out, oneModelNote) {
		t.Errorf("the note stayed after another key:\n%s", out)
	}
}

// The panes that show the latest tick say so: the throughput pane's first
// rates (the tick's, not the window's) and the server pane's title.
func TestTickFiguresNamed(t *testing.T) {
	snaps := spanRun(t)
	last := &snaps[len(snaps)-1]
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := loaded(t, Options{Control: newFakeControl(4)}, snaps, size[0], size[1])
		screen := strings.Join(screenLines(m), "\n")
		got := regexp.MustCompile(`│ tick (?:[0-9.,]+ infer/s  )?([0-9.,]+) req/s`).FindStringSubmatch(screen)
		if got == nil || !near(strings.ReplaceAll(got[1], ",", ""), last.Tick.RequestsPerS) {
			t.Errorf("%dx%d: tick rate %q, the last tick's is %.1f/s:\n%s", size[0], size[1], got, last.Tick.RequestsPerS, screen)
		}
		if !strings.Contains(screen, "Triton statistics · last tick") {
			t.Errorf("%dx%d: the server pane does not name its span:\n%s", size[0], size[1], screen)
		}
	}
}

// TestErrorsPaneSaysRetries: with retries in the run, the errors pane says
// how many sends of its window were retries, as a share of the requests,
// and the run's count: beside the errors, and beside "none" when every
// retry succeeded.
func TestErrorsPaneSaysRetries(t *testing.T) {
	withRetries := func(snaps []stats.Snapshot, errorsToo bool) []stats.Snapshot {
		for i := range snaps {
			s := &snaps[i]
			if !errorsToo {
				s.Tick.Requests -= s.Tick.Errors
				s.Tick.Errors, s.Tick.ErrorsByCode = 0, nil
				s.Window.Requests -= s.Window.Errors
				s.Window.Errors, s.Window.ErrorsByCode = 0, nil
				s.Run.Requests -= s.Run.Errors
				s.Run.Errors, s.Run.ErrorsByCode = 0, nil
			}
			s.Tick.Retries, s.Window.Retries, s.Run.Retries = 5, 50, int64(5*(i+1))
		}
		return snaps
	}
	for _, errorsToo := range []bool{true, false} {
		snaps := withRetries(spanRun(t), errorsToo)
		m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 160, 40)
		screen := strings.Join(screenLines(m), "\n")
		got := regexp.MustCompile(`retries 50 \(\+([0-9.]+)%\) in last 10 s +run 60`).FindStringSubmatch(screen)
		if got == nil {
			t.Fatalf("errors too %v: no retries line in:\n%s", errorsToo, screen)
		}
		last := snaps[len(snaps)-1].Window
		if want := 100 * 50 / float64(last.Requests+last.Cancelled); !near(got[1], want) {
			t.Errorf("errors too %v: retries +%s%%, want %.2f%%", errorsToo, got[1], want)
		}
		if !errorsToo && !strings.Contains(screen, "none") {
			t.Errorf("no errors, yet the pane does not say none:\n%s", screen)
		}
	}
}
