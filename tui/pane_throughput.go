package tui

import (
	"strings"

	"github.com/tritontop/tritontop/stats"
)

// throughputPane shows requests and inferences per second, now and over
// time.
type throughputPane struct {
	b    *board
	w, h int
}

func (p *throughputPane) SetSize(w, h int) { p.w, p.h = w, h }

func reqPerS(s *stats.Snapshot) (float64, bool)   { return s.Tick.RequestsPerS, true }
func inferPerS(s *stats.Snapshot) (float64, bool) { return s.Tick.InferPerS, true }

func (p *throughputPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusThroughput
	s := p.b.hist.latest()
	// The charts draw the ticks up to where the wheel scrolled them.
	ch := p.b.charted()
	if s == nil {
		return box(st, "Throughput", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	ws, wname := p.b.windowStats(s)
	iw := p.w - 4
	rows := p.h - 2
	lines := make([]string, 0, rows)
	runAvg := "run avg "
	if iw < 44 {
		runAvg = "avg "
	}
	infer := st.Value.Render(fmtRate(s.Tick.InferPerS)) + " infer/s"
	req := st.Value.Render(fmtRate(s.Tick.RequestsPerS)) + " req/s"
	avg := st.Label.Render(runAvg) + st.Value.Render(fmtRate(s.Run.RequestsPerS))
	// The rates of the latest tick, so named.
	tick := st.Label.Render("tick ")
	first := tick + join(infer, req, avg)
	if cellWidth(first) > iw && s.Tick.InferPerS == s.Tick.RequestsPerS {
		// Unbatched, the two rates are one: better said once than have
		// the average cut.
		first = tick + join(req, avg)
	}
	if cellWidth(first) > iw {
		// Batched and narrow: the tick's two rates whole, the run's
		// average (and total, below) rather than cut.
		first = tick + join(infer, req)
	}
	lines = append(lines, first)
	batched := s.Run.Inferences != s.Run.Requests
	legend := ""
	if rows >= 5 { // a chart is drawn: its bands are named
		legend = st.Series[0].Render("█") + " req/s"
		if batched {
			legend += " " + st.Series[1].Render("▓") + " infer/s"
		}
	}
	total := st.Label.Render("total ") + st.Value.Render(fmtInt(s.Run.Requests))
	second := join(st.Label.Render(wname+" ")+st.Value.Render(fmtRate(ws.RequestsPerS))+" req/s", total, legend)
	if cellWidth(second) > iw {
		// Narrow: the window's rate in fewer words, then without the
		// total, before the legend is cut.
		short := st.Label.Render(shortWindow(wname)+" ") + st.Value.Render(fmtRate(ws.RequestsPerS)) + "/s"
		second = join(short, total, legend)
		if cellWidth(second) > iw {
			second = join(short, legend)
		}
	}
	// Without errors there is no Errors pane: its "none" is said here,
	// where it fits.
	if s.Run.Errors == 0 {
		if e := join(second, st.Good.Render("no errors")); cellWidth(e) <= iw {
			second = e
		}
	}
	lines = append(lines, second)
	switch left := rows - len(lines); {
	case left >= 3:
		c := newChart(fmtAxis, "", reqPerS)
		if batched {
			c = newChart(fmtAxis, "", reqPerS, inferPerS)
		}
		lines = append(lines, c.draw(st, &ch, iw, left)...)
	case left >= 1:
		lines = append(lines, st.Label.Render("req/s ")+sparkline(st.Series[0], &ch, iw-6, reqPerS, 0))
	}
	return box(st, "Throughput", focused, p.w, p.h, lines)
}

// shortWindow is a window's name in fewer words: "10 s", "1 min", "run".
func shortWindow(name string) string {
	if name == "whole run" {
		return "run"
	}
	return strings.TrimPrefix(name, "last ")
}
