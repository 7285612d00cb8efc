package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/tritontop/tritontop/stats"
)

var sizes = []struct{ w, h int }{{80, 24}, {120, 40}, {200, 60}}

// loaded returns a dashboard that has drawn snaps at w×h.
func loaded(t testing.TB, o Options, snaps []stats.Snapshot, w, h int) Model {
	t.Helper()
	o.Snapshots = feed(snaps)
	if o.Header == (HeaderInfo{}) {
		o.Header = header
	}
	m := New(o)
	m.drain()
	next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return next.(Model)
}

// checkScreen verifies the screen's shape: exactly h lines of w cells.
func checkScreen(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

func TestPanes(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	names := [paneCount]string{"throughput", "latency", "server", "gpu", "cpu", "errors", "sweep"}
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := loaded(t, Options{Control: newFakeControl(4)}, closedLoopRun(64), sz.w, sz.h)
			m.header.SetSize(sz.w, 2)
			t.Run("header", func(t *testing.T) { golden.RequireEqual(t, m.header.View()) })
			for i, p := range m.panes {
				r := m.rects[i]
				if r.w == 0 {
					continue // not shown: no errors, no sweep
				}
				t.Run(names[i], func(t *testing.T) {
					out := p.View()
					checkScreen(t, out, r.w, r.h)
					golden.RequireEqual(t, out)
				})
			}
		})
	}
}

func TestScreen(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	cases := []struct {
		name  string
		o     Options
		snaps []stats.Snapshot
	}{
		{"closed", Options{Control: newFakeControl(32)}, closedLoopRun(64)},
		{"open", Options{Control: newFakeRateControl(800)}, openLoopRun(64)},
		{"degraded", Options{Control: newFakeControl(32)}, degradedRun(64)},
		{"replay", Options{Header: HeaderInfo{Server: "run.jsonl", Model: "resnet50", Simulated: true}}, closedLoopRun(64)},
		{"nocolor", Options{Control: newFakeControl(32), NoColor: true}, closedLoopRun(64)},
		{"empty", Options{Control: newFakeControl(1)}, nil},
		{"partialgpu", Options{Control: newFakeControl(32)}, partialGPURun(64)},
		{"localgpu", Options{Control: newFakeControl(32)}, localGPURun(64, 1)},
		{"localgpus", Options{Control: newFakeControl(32)}, localGPURun(64, 2)},
		// The demo: client and simulator in one process that uses most of
		// the host, which is no reason to call the client the bottleneck.
		{"shared", Options{Control: newFakeRateControl(800), Header: sharedHeader}, openLoopRun(64)},
		// A range 4:64 at its fourth step, three steps measured.
		{"sweep", Options{Control: newFakeControl(32), Sweep: sweepAt(sweepRun(64))}, sweepRun(64)},
		// A stateful model: each of the 32 requests in flight runs a
		// sequence.
		{"sequences", Options{Control: newFakeSequenceControl(32)}, closedLoopRun(64)},
		// An ensemble: a row per step under the pipeline's time, and the
		// footer names the step where its requests queue.
		{"pipeline", Options{Control: newFakeControl(32)}, pipelineRun(64)},
	}
	for _, c := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				m := loaded(t, c.o, c.snaps, sz.w, sz.h)
				out := m.Render()
				checkScreen(t, out, sz.w, sz.h)
				golden.RequireEqual(t, out)
			})
		}
	}
}

// TestWindowAtThisLoad: after a change of load the window restarts, and
// the panes that show it say how much of it there is and that it is this
// load's, not "last 10 s" over less.
func TestWindowAtThisLoad(t *testing.T) {
	snaps := closedLoopRun(64)
	last := &snaps[len(snaps)-1]
	if last.WindowLength != 10*time.Second || last.Run.Duration < 20*time.Second {
		t.Fatalf("fixture: window %v, run %v", last.WindowLength, last.Run.Duration)
	}
	full := ansi.Strip(loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40).Render())
	// (The fixture's load changed 4 ticks ago; the diagnosis's span, which
	// does not read the window, says so.)
	if !strings.Contains(full, "Latency · last 10 s ─") || strings.Contains(full, "10 s at this load") {
		t.Fatalf("a full window is not named last 10 s:\n%s", full)
	}
	last.Window.Duration = 3 * time.Second
	screen := ansi.Strip(loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40).Render())
	for _, want := range []string{"Latency · last 3 s at this load", "3 s at this load "} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
}

// TestCPUPaneNamesPinnedCores: when tritontop may run on some of the
// host's cores only, the client host row says which, and that they are
// near full when they are.
func TestCPUPaneNamesPinnedCores(t *testing.T) {
	snaps := closedLoopRun(64)
	for i := range snaps {
		snaps[i].System.HostCPUs = "0-1"
	}
	screen := ansi.Strip(loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40).Render())
	if !strings.Contains(screen, "all processes on cores 0-1") {
		t.Errorf("CPU pane does not name the cores:\n%s", screen)
	}
	for i := range snaps {
		snaps[i].System.HostCPU = 0.97
	}
	screen = ansi.Strip(loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40).Render())
	if !strings.Contains(screen, "cores 0-1 near full") {
		t.Errorf("CPU pane does not say the cores are near full:\n%s", screen)
	}
}
