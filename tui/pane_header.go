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
	names := p.b.modelNames()
	switch {
	case len(names) > 0 && p.b.ui.model < 0:
		// All the models of a run over several together: their names,
		// each model's batching being its own.
		id = []string{st.Value.Render(strconv.Itoa(len(names))+" models") + " " + strings.Join(names, ", ")}
	case hi.MaxBatch > 0 && compact:
		id = append(id, "batch≤"+strconv.Itoa(hi.MaxBatch))
	case hi.MaxBatch > 0:
		id = append(id, "max batch "+strconv.Itoa(hi.MaxBatch))
	case hi.Model != "":
		id = append(id, "no batching")
	}
	switch {
	case len(names) > 0 && p.b.ui.model < 0:
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
	// which the label must not let pass for the client's cost. The unit
	// is the CPU pane's: a share of the client host's cores.
	cpuLabel := "tritontop cpu "
	switch {
	case hi.SharedProcess && compact:
		cpuLabel = "cpu+sim "
	case hi.SharedProcess:
		cpuLabel = "tritontop+sim cpu "
	case compact:
		cpuLabel = "cpu "
	}
	var line2 string
	if s == nil {
		line2 = join(p.loadText(), st.Dim.Render("○ waiting for the first tick"))
	} else {
		// What matters most stays when the line is too long: the load,
		// the state and the verdict; then the time, the CPU, in flight.
		line2 = joinFit(p.w-1,
			field{p.loadText(), 5},
			field{"in flight " + st.Value.Render(strconv.Itoa(p.b.ui.load.InFlight)), 1},
			field{p.sequences(), 1},
			field{st.Value.Render(fmtElapsed(s.Elapsed)), 3},
			field{p.state(s), 4},
			field{p.scrolled(), 4},
			field{p.b.verdictTag(compact), 5},
			field{st.Label.Render(cpuLabel) + st.Value.Render(processShare(&s.System)), 2},
		)
	}
	return fit(" "+line1, p.w) + "\n" + fit(" "+line2, p.w)
}

// scrolled says where the wheel scrolled the charts back to, and how to
// bring them to now; "" while they are live.
func (p *headerPane) scrolled() string {
	if !p.b.ui.scrolled {
		return ""
	}
	st := p.b.common.Styles
	end := p.b.hist.at(p.b.chartEnd())
	return st.Warn.Render("◂ charts at "+fmtElapsed(end.Elapsed)) + " " + st.Dim.Render("end: live")
}

// sequences is a stateful model's running sequences, "" for other models
// and while none runs.
func (p *headerPane) sequences() string {
	n := p.b.ui.load.Sequences
	if n <= 0 {
		return ""
	}
	return "sequences " + p.b.common.Styles.Value.Render(strconv.Itoa(n)) + " active"
}

// processShare is tritontop's CPU as the CPU pane gives it: a share of
// the client host's cores.
func processShare(sys *stats.SystemStats) string {
	if sys.NumCPU <= 0 {
		return missing
	}
	return fmtPct(sys.ProcessCPU / float64(sys.NumCPU))
}

// field is a part of a line and how long it is kept when the line is too
// long: the lowest keep goes first.
type field struct {
	text string
	keep int
}

// joinFit joins the fields as join does, leaving out the least kept ones
// until the line fits in w cells.
func joinFit(w int, fields ...field) string {
	for {
		var b strings.Builder
		drop, lowest := -1, 0
		for i, f := range fields {
			if f.text == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("  ")
			}
			b.WriteString(f.text)
			if drop < 0 || f.keep < lowest {
				drop, lowest = i, f.keep
			}
		}
		line := b.String()
		if drop < 0 || cellWidth(line) <= w || lowest >= 5 {
			return line
		}
		fields[drop].text = ""
	}
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
	if !p.b.common.KeyMap.Up.Enabled() {
		hint = "" // a sweep sets the load
	}
	step := ""
	if ui := p.b.ui; ui.sweeping && !ui.sweep.Done {
		i, n := ui.sweep.Position()
		step = "  " + st.Label.Render("step ") + st.Value.Render(strconv.Itoa(i)+"/"+strconv.Itoa(n))
	}
	switch l.Mode {
	case load.Rate:
		t := "rate " + st.Value.Render(fmtRate(l.Rate)+"/s")
		if l.Distribution == load.Poisson {
			t += " " + string(l.Distribution)
		}
		return t + hint + step + p.planText()
	case load.Concurrency:
		return "concurrency " + st.Value.Render(strconv.Itoa(l.Concurrency)) + hint + step + p.planText()
	case load.Mixed:
		return "concurrency " + st.Value.Render(strconv.Itoa(l.Concurrency)) + " + rate " + st.Value.Render(fmtRate(l.Rate)+"/s") + hint
	}
	return ""
}

// modelNames are the names of the models of a run over several, nil with
// one model.
func (b *board) modelNames() []string {
	if len(b.models) > 0 {
		out := make([]string, len(b.models))
		for i, m := range b.models {
			out[i] = m.Name
		}
		return out
	}
	if b.raw == nil || b.raw.latest() == nil {
		return nil
	}
	s := b.raw.latest()
	out := make([]string, len(s.Models))
	for i := range s.Models {
		out[i] = s.Models[i].Name
	}
	return out
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
	case ui.load.Drain || s.Load.Drain:
		return st.Dim.Render("◌ draining")
	case p.b.has(stats.Unreachable):
		return st.Bad.Render("✖ server unreachable")
	case p.b.has(stats.Stalled):
		return st.Warn.Render("◌ no responses")
	default:
		return st.Good.Render("● running")
	}
}
