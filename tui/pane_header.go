package tui

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// headerPane is the two lines at the top: what is under load, and how.
type headerPane struct {
	b    *board
	w, h int
}

func (p *headerPane) SetSize(w, h int) { p.w, p.h = w, h }

func (p *headerPane) View() string {
	st := p.b.common.Styles
	hi := p.b.header
	s := p.b.hist.latest()

	model := hi.Model
	if hi.Version != "" {
		model += " v" + hi.Version
	}
	var id []string
	if model != "" {
		id = append(id, st.Value.Render(model))
	}
	// A narrow header abbreviates the model's batching and puts it last,
	// so that the transport and a recording stay visible.
	compact := p.w < 100
	switch {
	case hi.MaxBatch > 0 && compact:
		id = append(id, "batch≤"+strconv.Itoa(hi.MaxBatch))
	case hi.MaxBatch > 0:
		id = append(id, "max batch "+strconv.Itoa(hi.MaxBatch))
	case hi.Model != "":
		id = append(id, "no batching")
	}
	switch {
	case hi.DynamicBatching && compact:
		id = append(id, "dynamic")
	case hi.DynamicBatching:
		id = append(id, "dynamic batching")
	}
	var line1 string
	if compact {
		line1 = join(
			st.Brand.Render("tritontop"),
			badge(st, hi.Simulated),
			hi.Server,
			hi.Protocol,
			recording(st, hi.Recording, p.b.ui.replay),
			strings.Join(id, " · "),
		)
	} else {
		line1 = join(
			st.Brand.Render("tritontop"),
			badge(st, hi.Simulated),
			hi.Server,
			strings.Join(id, " · "),
			hi.Protocol,
			recording(st, hi.Recording, p.b.ui.replay),
		)
	}

	// In a shared process the simulator's work is in the process's CPU,
	// which the label must not let pass for the client's cost.
	cpuLabel := "tritontop cpu "
	switch {
	case hi.SharedProcess && p.w < 100:
		cpuLabel = "cpu+sim "
	case hi.SharedProcess:
		cpuLabel = "tritontop+sim cpu "
	case p.w < 100:
		cpuLabel = "cpu "
	}
	var line2 string
	if s == nil {
		line2 = join(p.loadText(), st.Dim.Render("○ waiting for the first tick"))
	} else {
		line2 = join(
			p.loadText(),
			"in flight "+st.Value.Render(strconv.Itoa(p.b.ui.load.InFlight)),
			st.Value.Render(fmtElapsed(s.Elapsed)),
			p.state(s),
			st.Label.Render(cpuLabel)+st.Value.Render(fmtCores(s.System.ProcessCPU)),
		)
	}
	return fit(" "+line1, p.w) + "\n" + fit(" "+line2, p.w)
}

func badge(st *Styles, simulated bool) string {
	if !simulated {
		return ""
	}
	return st.Badge.Render(" SIMULATED ")
}

// recording marks a run being written; a replay names its file instead,
// without the red dot of a recording.
func recording(st *Styles, path string, replay bool) string {
	switch {
	case path == "":
		return ""
	case replay:
		return st.Dim.Render(path)
	}
	return st.Bad.Render("●") + " rec " + path
}

// loadText is the load mode and target, from the driver when it is known
// (so a key press shows at once) and otherwise from the snapshot.
func (p *headerPane) loadText() string {
	st := p.b.common.Styles
	l := p.b.ui.load
	hint := ""
	if !p.b.ui.replay {
		hint = " " + st.Dim.Render("↑↓")
	}
	switch l.Mode {
	case load.Rate:
		t := "rate " + st.Value.Render(fmtRate(l.Rate)+"/s")
		if l.Distribution == load.Poisson {
			t += " " + string(l.Distribution)
		}
		return t + hint
	case load.Concurrency:
		return "concurrency " + st.Value.Render(strconv.Itoa(l.Concurrency)) + hint
	}
	return ""
}

// state is the one-word run state: running, paused, server unreachable,
// no responses (a stall), replay.
func (p *headerPane) state(s *stats.Snapshot) string {
	st := p.b.common.Styles
	ui := p.b.ui
	if ui.replay {
		switch {
		case ui.ended || ui.atEnd:
			return st.Dim.Render("■ replay ended")
		case ui.paused:
			return st.Warn.Render("⏸ replay paused")
		case ui.speed <= 0:
			return st.Good.Render("▶ replay max speed")
		default:
			return st.Good.Render("▶ replay " + strconv.FormatFloat(ui.speed, 'g', 3, 64) + "×")
		}
	}
	switch {
	case ui.ended:
		return st.Dim.Render("■ stopped")
	case ui.paused || s.Load.Paused:
		return st.Warn.Render("⏸ paused")
	case unreachable(s):
		return st.Bad.Render("✖ server unreachable")
	case stalled(s):
		return st.Warn.Render("◌ no responses")
	default:
		return st.Good.Render("● running")
	}
}

// stalled is true when requests are in flight but none finished in a whole
// tick: the server (or the network) holds them.
func stalled(s *stats.Snapshot) bool {
	return s.Load.InFlight > 0 && s.Tick.Requests == 0 && s.Tick.Cancelled == 0 && s.Interval > 0
}

// unreachable is true when nothing answered in the tick: no statistics, no
// metrics and no successful request.
func unreachable(s *stats.Snapshot) bool {
	return !s.Server.Available && !s.Metrics.Available && s.Tick.Successes == 0
}
