package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
)

// fakeTune is a tune search's view, fixed; it is a plan.Search only to
// ride in plan.Progress.
type fakeTune struct {
	plan.Sweep
	v TuneView
}

func (f fakeTune) TuneView() TuneView { return f.v }

// tuneRun is a tune run four trials in: the baseline met the SLO at 32,
// a bigger batch did better, one configuration did not load, one missed;
// the fifth trial's configuration is loading.
func tuneRun() TuneView {
	cfg := func(i, b, d int) record.TuneConfig {
		return record.TuneConfig{Instances: i, MaxBatchSize: b, QueueDelayUS: d, Preferred: "max"}
	}
	trial := func(c record.TuneConfig, conc int, x float64, p99 time.Duration, pass bool) record.TuneTrial {
		return record.TuneTrial{Config: c, Concurrency: conc, Throughput: x, P99: p99, Pass: pass, Stable: true}
	}
	t := record.Tune{Objective: "throughput", SLOs: []string{"p99:100ms"}, Best: 1, Baseline: 0, Configurations: 4,
		Grid: record.TuneGrid{Points: 640},
		Trials: []record.TuneTrial{
			trial(cfg(1, 8, 100), 32, 1200, 40*time.Millisecond, true),
			trial(cfg(1, 16, 100), 64, 2100, 70*time.Millisecond, true),
			{Config: cfg(1, 256, 100), Concurrency: 64, Step: -1, LoadError: "load failed"},
			trial(cfg(2, 16, 100), 128, 2300, 180*time.Millisecond, false),
		}}
	t.Frontier = []int{0, 1, 3}
	cur := record.TuneTrial{Config: cfg(2, 16, 500), Concurrency: 64}
	return TuneView{Tune: t, Current: &cur, Loading: true}
}

// TestTunePaneShowsTrialsBestAndFrontier: in a tune run the sweep pane is
// the tune pane: the trial under way and its loading, the best so far, the
// configurations tried (focused, with room) and the frontier plot.
func TestTunePaneShowsTrialsBestAndFrontier(t *testing.T) {
	sw := &fakeSweep{p: plan.Progress{Step: 4, Total: 60, Level: load.Target{Mode: load.Concurrency, Concurrency: 64},
		MaxTrials: 6, Search: fakeTune{v: tuneRun()}}}
	for _, sz := range sizes {
		m := loaded(t, Options{Control: newFakeControl(64), Sweep: sw}, sweepRun(64), sz.w, sz.h)
		out := m.Render()
		checkScreen(t, out, sz.w, sz.h)
		screen := ansi.Strip(out)
		for _, want := range []string{"Tune · trial 5 · 4 configs", "best 1i b16 d100µs @64 2,100/s", "@64  loading"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%dx%d: the screen lacks %q:\n%s", sz.w, sz.h, want, screen)
			}
		}
		if sz.h >= 40 && !strings.Contains(screen, "★") {
			t.Errorf("%dx%d: no best point in the frontier plot:\n%s", sz.w, sz.h, screen)
		}
	}
	// Focused, the pane has room for the configurations, best first.
	m := loaded(t, Options{Control: newFakeControl(64), Sweep: sw}, sweepRun(64), 160, 40)
	m.board.ui.focus = focusSweep
	m.layout()
	screen := ansi.Strip(m.Render())
	for _, want := range []string{"★ 1i b16 d100µs", "1i b8 d100µs", "1i b256 d100µs   not loaded", "2i b16 d100µs    miss", "● frontier"} {
		if !strings.Contains(screen, want) {
			t.Errorf("focused: the screen lacks %q:\n%s", want, screen)
		}
	}
	if i, j := strings.Index(screen, "★ 1i b16"), strings.Index(screen, "  1i b8 "); i < 0 || j < i {
		t.Errorf("the best configuration is not listed first:\n%s", screen)
	}
}
