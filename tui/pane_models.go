package tui

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// modelsPane is one row per model of a run over several: its load, the
// requests it finished in the last tick, their p99, Triton's queue and
// compute time and batch size for that model, its errors, and a sparkline
// of its throughput when there is room. The model the detailed panes show
// is marked; m selects another.
type modelsPane struct {
	b    *board
	w, h int
}

func (p *modelsPane) SetSize(w, h int) { p.w, p.h = w, h }

// modelRate reads model i's throughput, for its sparkline.
func modelRate(i int, name string) metric {
	return func(s *stats.Snapshot) (float64, bool) {
		if i >= len(s.Models) || s.Models[i].Name != name {
			return 0, false
		}
		return s.Models[i].Tick.InferPerS, true
	}
}

// shortLoad is a model's load in a few cells: "c 8", "200/s", "200/s poi".
func shortLoad(l stats.Load) string {
	switch {
	case l.Drain:
		return "stop"
	case l.Mode == load.Rate:
		s := fmtRate(l.Rate) + "/s"
		if l.Distribution == load.Poisson {
			s += " poi"
		}
		return s
	}
	return "c " + strconv.Itoa(l.Concurrency)
}

// Column widths of the pane's numbers.
const (
	modelLoadW   = 10
	modelRateW   = 8
	modelDurW    = 8
	modelBatchW  = 5
	modelErrorsW = 6
)

func (p *modelsPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusModels
	var s *stats.Snapshot
	if p.b.raw != nil {
		s = p.b.raw.latest()
	}
	if s == nil || len(s.Models) == 0 {
		return box(st, "Models", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	title := "Models · showing all · m selects"
	if i := p.b.ui.model; i >= 0 && i < len(s.Models) {
		title = "Models · showing " + s.Models[i].Name + " · m selects"
	}
	iw := p.w - 4
	nums := 1 + modelLoadW + 1 + modelRateW + 1 + modelDurW + 1 + modelDurW + 1 + modelDurW + 1 + modelBatchW + 1 + modelErrorsW
	nameW := 0
	for i := range s.Models {
		nameW = max(nameW, cellWidth(s.Models[i].Name))
	}
	nameW = max(5, min(nameW, iw-2-nums))
	spark := iw - 2 - nameW - nums - 2
	if spark < 8 {
		spark = 0
	}
	top := 0.0
	if spark > 0 {
		for i := range s.Models {
			top = max(top, maxOver(p.b.raw, modelRate(i, s.Models[i].Name)))
		}
	}
	cell := func(v string, w int) string { return strings.Repeat(" ", max(0, w-cellWidth(v))) + v }
	head := "  " + fit("model", nameW) + " " + cell("load", modelLoadW) + " " + cell("infer/s", modelRateW) + " " +
		cell("p99", modelDurW) + " " + cell("queue", modelDurW) + " " + cell("compute", modelDurW) + " " +
		cell("batch", modelBatchW) + " " + cell("errors", modelErrorsW)
	if spark > 0 {
		head += "  " + "infer/s over time"
	}
	lines := []string{st.Label.Render(head)}
	rows := p.h - 3
	for i := range s.Models {
		m := &s.Models[i]
		if len(lines) == rows && i < len(s.Models)-1 {
			lines = append(lines, st.Dim.Render("+"+strconv.Itoa(len(s.Models)-i)+" more: tab to this pane"))
			break
		}
		mark := "  "
		if i == p.b.ui.model {
			mark = st.Good.Render("▸ ")
		}
		dash := func(w int) string { return st.Dim.Render(cell(missing, w)) }
		p99, queue, compute, batch := dash(modelDurW), dash(modelDurW), dash(modelDurW), dash(modelBatchW)
		lat := m.Tick.Latency
		if m.Tick.Scheduled != nil {
			lat = *m.Tick.Scheduled
		}
		if lat.Count > 0 {
			p99 = st.Value.Render(cell(fmtDur(lat.P99), modelDurW))
		}
		if sv := &m.Server; sv.Available && !sv.Reset && sv.SuccessCount > 0 {
			queue = st.Value.Render(cell(fmtDur(sv.Queue), modelDurW))
			compute = st.Value.Render(cell(fmtDur(sv.Compute()), modelDurW))
			if sv.ExecutionCount > 0 {
				batch = st.Value.Render(cell(strconv.FormatFloat(sv.AvgBatch, 'f', 1, 64), modelBatchW))
			}
		}
		errs := st.Value.Render(cell("0", modelErrorsW))
		if m.Tick.Errors > 0 {
			errs = st.Bad.Render(cell(strconv.FormatInt(m.Tick.Errors, 10), modelErrorsW))
		}
		line := mark + fit(m.Name, nameW) + " " + st.Value.Render(cell(shortLoad(m.Load), modelLoadW)) + " " +
			st.Value.Render(cell(fmtRate(m.Tick.InferPerS), modelRateW)) + " " + p99 + " " + queue + " " + compute + " " + batch + " " + errs
		if spark > 0 {
			line += "  " + sparkline(st.Series[0], p.b.raw, spark, modelRate(i, m.Name), top)
		}
		lines = append(lines, line)
	}
	return box(st, title, focused, p.w, p.h, lines)
}
