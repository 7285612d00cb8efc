package tui

import (
	"strconv"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// gpuPane shows each server GPU from Triton's metrics. A GPU the metrics do
// not report is said to be missing, never drawn as idle, and so is a gauge
// a GPU does not report.
type gpuPane struct {
	b    *board
	w, h int
}

func (p *gpuPane) SetSize(w, h int) { p.w, p.h = w, h }

// missing stands for a gauge the source did not report.
const missing = "—"

// gpuUtil reads GPU i's utilization when the snapshot has that GPU and it
// reported its utilization.
func gpuUtil(i int, uuid string) metric {
	return func(s *stats.Snapshot) (float64, bool) {
		if !s.Metrics.Available || i >= len(s.Metrics.GPUs) || s.Metrics.GPUs[i].UUID != uuid {
			return 0, false
		}
		g := &s.Metrics.GPUs[i]
		return g.Utilization, g.HasUtilization
	}
}

func (p *gpuPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusGPU
	s := p.b.hist.latest()
	// The charts draw the ticks up to where the wheel scrolled them.
	ch := p.b.charted()
	if s == nil {
		return box(st, "GPU", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	iw := p.w - 4
	m := &s.Metrics
	switch {
	case !m.Available:
		return box(st, "GPU", focused, p.w, p.h, wrapped(st.Dim.Render("no GPU metrics: ")+m.Err, iw))
	case len(m.GPUs) == 0:
		return box(st, "GPU", focused, p.w, p.h, []string{st.Dim.Render("no GPU metrics (the server reports no GPU)")})
	}
	rows := p.h - 2
	// Two lines per GPU while they fit, one (utilization only) otherwise;
	// rows to spare give each GPU a chart of its utilization over time.
	two := 2*len(m.GPUs) <= rows
	// One row is kept for the time axis, under the last GPU's chart.
	chartRows := (rows-1)/len(m.GPUs) - 2
	if chartRows < 3 {
		chartRows = 0
	}
	// More GPUs than rows: as many as fit over a line that counts the rest.
	shown := len(m.GPUs)
	if !two && shown > rows {
		shown = max(0, rows-1)
	}
	var lines []string
	for i := range shown {
		g := &m.GPUs[i]
		id := gpuID(m.GPUs, i, iw)
		// A replica's name needs more room than an index.
		idCap := iw/3 - 1
		if g.Replica != "" {
			idCap = iw/2 - 1
		}
		idw := min(ansi.StringWidth(id), idCap) + 1
		mem, power := gpuMemory(st, g), gpuPower(st, g, iw)
		line := fit(id, idw-1) + " "
		if g.HasUtilization {
			gw := min(20, max(5, (iw-idw-5)/2))
			line += gauge(st.Series[0], g.Utilization, gw) + " " + st.Value.Render(padLeft(fmtPct(g.Utilization), 4))
			if sw := iw - idw - gw - 6; sw >= 4 && chartRows == 0 {
				line += " " + sparkline(st.Series[0], &ch, sw, gpuUtil(i, g.UUID), 1)
			}
		} else {
			line += st.Label.Render("utilization ") + st.Dim.Render(missing+" not reported")
			// On one line, memory is what this GPU can still show.
			if !two && g.HasMemory {
				line = fit(id, idw-1) + " " + st.Label.Render("util ") + st.Dim.Render(missing) + "  " + mem
			}
		}
		lines = append(lines, line)
		if two {
			lines = append(lines, "  "+join(mem, power))
		}
		if chartRows > 0 {
			c := newChart(fmtAxisPct, "", gpuUtil(i, g.UUID))
			c.top, c.minPlot = 1, chartRows-1
			n := chartRows
			if i == len(m.GPUs)-1 {
				n++
			} else {
				c.timeAxis = false
			}
			lines = append(lines, c.draw(st, &ch, iw, n)...)
		}
	}
	if more := len(m.GPUs) - shown; more > 0 {
		lines = append(lines, st.Dim.Render("+"+strconv.Itoa(more)+" more"+gpuMoreHint(m.GPUs[shown:])))
	}
	return box(st, "GPU", focused, p.w, p.h, lines)
}

// gpuMemory is "memory used / total GB", or a dash when not reported.
func gpuMemory(st *Styles, g *stats.GPU) string {
	if !g.HasMemory {
		return st.Label.Render("memory ") + st.Dim.Render(missing)
	}
	return st.Label.Render("memory ") + st.Value.Render(fmtGB(g.MemoryUsed)) + " / " + fmtGB(g.MemoryTotal) + " GB"
}

// gpuPower is "power W / limit", or a dash when not reported; the limit
// shows from iw ≥ 50 cells.
func gpuPower(st *Styles, g *stats.GPU, iw int) string {
	if !g.HasPower {
		return st.Label.Render("power ") + st.Dim.Render(missing)
	}
	power := st.Label.Render("power ") + st.Value.Render(strconv.FormatFloat(g.PowerW, 'f', 0, 64)) + " W"
	if g.PowerLimitW > 0 && iw >= 50 {
		power += " / " + strconv.FormatFloat(g.PowerLimitW, 'f', 0, 64)
	}
	return power
}
