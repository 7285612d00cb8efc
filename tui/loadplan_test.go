package tui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

func TestPlanText(t *testing.T) {
	st := NewStyles(false)
	s := &stats.Snapshot{Interval: time.Second,
		Load: stats.Load{Mode: load.Rate, Rate: 400, Step: 1, Planned: 250},
		Tick: stats.ClientStats{RequestsPerS: 249}}
	if got, want := ansi.Strip(planText(st, s)), "  plan 250/s sent 249/s stage 2"; got != want {
		t.Errorf("rate plan: %q, want %q", got, want)
	}
	c := &stats.Snapshot{Interval: time.Second, Load: stats.Load{Mode: load.Concurrency, Concurrency: 8, Planned: 3.5}}
	if got, want := ansi.Strip(planText(st, c)), "  plan 3.5 stage 1"; got != want {
		t.Errorf("concurrency plan: %q, want %q", got, want)
	}
	for _, s := range []*stats.Snapshot{nil, {Load: stats.Load{Mode: load.Rate, Rate: 100}}, {Load: stats.Load{Mode: load.Rate, Planned: 5, Drain: true}}} {
		if got := planText(st, s); got != "" {
			t.Errorf("no plan: %q", got)
		}
	}
}
