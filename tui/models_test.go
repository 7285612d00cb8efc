package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// modelsRun is closedLoopRun shared by two models on the same GPUs:
// resnet50 at the run's concurrency takes 70 % of the requests with the
// run's latency and queue; bert, at 200/s, the rest, with twice the queue
// and a p99 of 40 ms, and from tick 40 on a few errors.
func modelsRun(n int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		s := &out[i]
		split := func(c stats.ClientStats, f float64) stats.ClientStats {
			c.Requests = int64(float64(c.Requests) * f)
			c.Successes, c.Inferences = c.Requests, c.Requests
			c.RequestsPerS, c.InferPerS = c.RequestsPerS*f, c.InferPerS*f
			c.Latency.Count = c.Requests
			return c
		}
		a := stats.Model{Name: "resnet50", Version: "1", Load: s.Load,
			Tick: split(s.Tick, 0.7), Window: split(s.Window, 0.7), Run: split(s.Run, 0.7), Server: s.Server}
		b := stats.Model{Name: "bert", Load: stats.Load{Mode: load.Rate, Rate: 200, Distribution: load.Constant, InFlight: 3},
			Tick: split(s.Tick, 0.3), Window: split(s.Window, 0.3), Run: split(s.Run, 0.3), Server: s.Server}
		a.Server.SuccessCount, b.Server.SuccessCount = a.Tick.Successes, b.Tick.Successes
		b.Server.Model, b.Server.Version = "bert", ""
		b.Server.Queue, b.Server.AvgBatch = 2*s.Server.Queue, 4
		b.Tick.Latency = latencyAt(b.Tick.Requests, 20*time.Millisecond)
		if s.Seq >= 40 {
			errs := []stats.ErrorCount{{Code: "UNAVAILABLE", Count: 3, Message: "queue full"}}
			b.Tick.Errors, b.Tick.Requests, b.Tick.ErrorsByCode = 3, b.Tick.Requests+3, errs
			b.Window.Errors, b.Window.ErrorsByCode = 30, errs
			b.Run.Errors, b.Run.ErrorsByCode = int64(3*(s.Seq-39)), errs
		}
		s.Models = []stats.Model{a, b}
		s.Load = stats.AggregateLoad([]stats.Load{a.Load, b.Load})
	}
	return out
}

// modelsHeader is the header of the two-model run.
var modelsHeader = HeaderInfo{Server: "127.0.0.1:8001", Protocol: "gRPC", Model: "resnet50,bert"}

// modelControls are the two models' controls: resnet50 at the run's last
// concurrency, bert at 200/s.
func modelControls() []ModelControl {
	return []ModelControl{
		{Name: "resnet50", Version: "1", MaxBatch: 32, DynamicBatching: true, Control: newFakeControl(32)},
		{Name: "bert", MaxBatch: 16, DynamicBatching: true, Control: &fakeControl{state: load.State{
			Target: load.Target{Mode: load.Rate, Rate: 200, Distribution: load.Constant}, InFlight: 3}}},
	}
}

// TestModelsScreen: a run over two models gets a row per model under the
// panes, and the detailed panes show all the models together until m
// selects one ("all"), then that one ("bert").
func TestModelsScreen(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	for _, c := range []struct {
		name    string
		presses int
	}{{"all", 0}, {"bert", 2}} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				m := loaded(t, Options{Models: modelControls(), Header: modelsHeader}, modelsRun(64), sz.w, sz.h)
				for range c.presses {
					next, _ := m.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
					m = next.(Model)
				}
				out := m.Render()
				checkScreen(t, out, sz.w, sz.h)
				golden.RequireEqual(t, out)
				plain := ansi.Strip(out)
				rowB := lineWith(plain, "bert          200/s")
				if !strings.Contains(rowB, "200/s") || !strings.Contains(rowB, "3") {
					t.Errorf("bert's row %q lacks its load or errors:\n%s", rowB, plain)
				}
				switch c.name {
				case "all":
					if !strings.Contains(plain, "2 models resnet50, bert") || !strings.Contains(plain, "showing all") ||
						!strings.Contains(plain, "concurrency 32 + rate 200/s") {
						t.Errorf("all the models shown, but:\n%s", plain)
					}
				case "bert":
					if !strings.Contains(plain, "showing bert") || !strings.Contains(plain, "rate 200/s") ||
						strings.Contains(plain, "concurrency 32") || !strings.Contains(plain, "▸ bert") {
						t.Errorf("bert selected, but:\n%s", plain)
					}
				}
			})
		}
	}
}

// TestModelSelectionDrivesPanesAndKeys: m cycles all → resnet50 → bert →
// all; the detailed panes read the model shown; ↑ changes the shown
// model's load alone, or each model's when all are shown; p pauses them.
func TestModelSelectionDrivesPanesAndKeys(t *testing.T) {
	mcs := modelControls()
	m := loaded(t, Options{Models: mcs, Header: modelsHeader}, modelsRun(64), 120, 40)
	press := func(k tea.KeyPressMsg) {
		next, _ := m.Update(k)
		m = next.(Model)
	}
	mKey, up := tea.KeyPressMsg{Code: 'm', Text: "m"}, tea.KeyPressMsg{Code: tea.KeyUp}
	latest := func() *stats.Snapshot { return m.board.hist.latest() }
	all := latest().Tick.Requests

	press(mKey) // resnet50
	if m.board.ui.model != 0 || latest().Tick.Requests >= all || latest().Server.Model != "resnet50" || m.board.header.MaxBatch != 32 {
		t.Fatalf("resnet50 selected: model %d, tick %+v, header %+v", m.board.ui.model, latest().Tick, m.board.header)
	}
	press(up)
	if got := mcs[0].Control.(*fakeControl).Calls(); !slices.Equal(got, []string{"SetConcurrency(40)"}) {
		t.Errorf("↑ on resnet50: %v", got)
	}
	if got := mcs[1].Control.(*fakeControl).Calls(); len(got) != 0 {
		t.Errorf("↑ on resnet50 changed bert: %v", got)
	}
	press(mKey) // bert
	if m.board.ui.model != 1 || latest().Server.Model != "bert" || !m.board.ui.load.Open() || m.board.ui.load.Rate != 200 {
		t.Fatalf("bert selected: model %d, server %q, load %+v", m.board.ui.model, latest().Server.Model, m.board.ui.load)
	}
	// Its errors reach the errors pane and the diagnosis reads its ticks.
	if !m.show[focusErrors] {
		t.Error("bert's errors do not show the errors pane")
	}
	press(mKey) // all
	if m.board.ui.model != -1 || latest().Tick.Requests != all {
		t.Fatalf("all selected again: model %d, tick %+v", m.board.ui.model, latest().Tick)
	}
	press(up)
	if got := mcs[1].Control.(*fakeControl).Calls(); !slices.Equal(got, []string{"SetRate(220)"}) {
		t.Errorf("↑ on all: bert got %v", got)
	}
	if got := mcs[0].Control.(*fakeControl).Calls(); len(got) != 2 {
		t.Errorf("↑ on all: resnet50 got %v", got)
	}
	press(tea.KeyPressMsg{Code: 'p', Text: "p"})
	for i, mc := range mcs {
		if !mc.Control.State().Paused {
			t.Errorf("p with all shown left model %d running", i)
		}
	}
	if !m.board.ui.paused {
		t.Error("the header does not say paused")
	}
}

// TestOneModelHasNoModelKey: a run of one model has no models pane and no
// m key in the footer.
func TestOneModelHasNoModelKey(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(8), 120, 40)
	if m.show[focusModels] || m.common.KeyMap.Model.Enabled() || strings.Contains(ansi.Strip(m.Render()), "m model") {
		t.Error("a run of one model shows the model selector")
	}
}
