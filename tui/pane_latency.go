package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// latencyPane shows the selected window's percentiles and p50/p90/p99 over
// time. In open loop it shows the latency from the scheduled send
// (coordinated-omission-correct) beside the latency from the actual send,
// and charts the scheduled one, the one the user of the service would see.
type latencyPane struct {
	b    *board
	w, h int
}

func (p *latencyPane) SetSize(w, h int) { p.w, p.h = w, h }

// tickLatency is the latency the charts follow: scheduled in open loop.
func tickLatency(s *stats.Snapshot) *stats.Latency {
	if s.Tick.Scheduled != nil {
		return s.Tick.Scheduled
	}
	return &s.Tick.Latency
}

func latP50(s *stats.Snapshot) (float64, bool) { return latValue(s, tickLatency(s).P50) }
func latP90(s *stats.Snapshot) (float64, bool) { return latValue(s, tickLatency(s).P90) }
func latP99(s *stats.Snapshot) (float64, bool) { return latValue(s, tickLatency(s).P99) }

// latValue is a latency in milliseconds, missing in a tick without
// successful requests.
func latValue(s *stats.Snapshot, d time.Duration) (float64, bool) {
	if tickLatency(s).Count == 0 {
		return 0, false
	}
	return float64(d) / 1e6, true
}

func (p *latencyPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusLatency
	s := p.b.hist.latest()
	// The charts draw the ticks up to where the wheel scrolled them.
	ch := p.b.charted()
	if s == nil {
		return box(st, "Latency", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	ws, wname := p.b.windowStats(s)
	title := "Latency · " + wname
	iw := p.w - 4
	rows := p.h - 2
	lines := make([]string, 0, rows)

	label := tableLabel(iw)
	lines = append(lines, latencyTable(st, ws, iw)...)
	if rows > len(lines) && p.b.avg.ok {
		lines = append(lines, outsideTriton(st, &p.b.avg, iw, label))
	}
	switch left := rows - len(lines); {
	case left >= 4:
		legend := st.Series[0].Render("█") + " p50  " + st.Series[1].Render("▓") + " p90  " +
			st.Series[2].Render("░") + " p99  ms"
		if ws.Scheduled != nil {
			legend += st.Dim.Render("  from schedule")
		}
		c := newChart(fmtAxis, "ms", latP50, latP90, latP99)
		lines = append(lines, legend)
		lines = append(lines, c.draw(st, &ch, iw, left-1)...)
	case left >= 1:
		// Sparklines on one scale, the tail first: p50 scaled apart
		// from p99 would look as high.
		top := maxOver(&ch, latP99)
		lines = append(lines, fit(st.Label.Render("p99"), label)+sparkline(st.Series[2], &ch, iw-label, latP99, top))
		if left >= 2 {
			lines = append(lines, fit(st.Label.Render("p50"), label)+sparkline(st.Series[0], &ch, iw-label, latP50, top))
		}
	}
	return box(st, title, focused, p.w, p.h, lines)
}

// outsideTriton sets the average client latency beside the server's
// request time from Triton's statistics over the same ticks, and their
// difference, the time outside Triton (network and client), with the share
// of each: the one line that says where the time goes. The ticks are the
// diagnosis's (board.avg), so the footer's time-outside-Triton finding,
// when it holds, shows the same numbers; the line names the span. The
// client side is from the actual send, as the server cannot see a late
// send. a must be ok.
func outsideTriton(st *Styles, a *avgSplit, iw, label int) string {
	lead := st.Label.Render(fit("avg", label))
	span := st.Dim.Render(a.tag)
	if !a.split {
		line := lead + st.Value.Render(fmtMs(a.client)) + st.Dim.Render("  Triton's request time: n/a")
		if cellWidth(line)+cellWidth(span) <= iw {
			line += span
		}
		return line
	}
	in := min(a.server, a.client)
	out := a.client - in
	inShare := float64(in) / float64(a.client)
	outPaint := st.Value
	if inShare < 0.5 {
		// Most of the latency is spent outside the server.
		outPaint = st.Warn
	}
	total := st.Value.Render(fmtMs(a.client))
	inPct, outPct := fmtPct(inShare), fmtPct(1-inShare)
	wide := lead + total + " ms = " + st.Label.Render("Triton ") + st.Value.Render(fmtMs(in)) + " (" + inPct + ") + " +
		st.Label.Render("outside ") + outPaint.Render(fmtMs(out)+" ("+outPct+")") + st.Dim.Render(" network, client") + span
	if cellWidth(wide) <= iw {
		return wide
	}
	mid := lead + total + " = " + st.Label.Render("Triton ") + st.Value.Render(fmtMs(in)) + " " + inPct + " + " +
		st.Label.Render("outside ") + outPaint.Render(fmtMs(out)+" "+outPct) + span
	if cellWidth(mid) <= iw {
		return mid
	}
	short := lead + total + ": " + st.Label.Render("Triton ") + st.Value.Render(inPct) + ", " +
		st.Label.Render("outside ") + outPaint.Render(outPct)
	if cellWidth(short)+cellWidth(span) <= iw {
		return short + span
	}
	if line := short + st.Dim.Render(" "+a.short); cellWidth(line) <= iw {
		return line
	}
	return lead + total + st.Dim.Render(" "+a.short) + ": " + st.Label.Render("Triton ") + st.Value.Render(inPct) + ", " +
		st.Label.Render("out ") + outPaint.Render(outPct)
}

// tableLabel is the width of the latency table's row names.
func tableLabel(iw int) int {
	if iw < 42 {
		return 5
	}
	return 6
}

// latencyTable is the window's percentiles, one column per percentile and
// one row per kind of latency (from the schedule and from the send in open
// loop), in iw cells.
//
// It is written by hand rather than with lipgloss/table: the same table
// through lipgloss/table took 380–770 µs against 7–11 µs here, with 785
// allocations against 40 (BenchmarkLatencyTable, BENCHMARKS.md), more than
// a whole frame, for fixed-width right-aligned columns that padLeft gives.
func latencyTable(st *Styles, ws *stats.ClientStats, iw int) []string {
	label := tableLabel(iw)
	col := min(9, max(5, (iw-label)/6))
	var hdr strings.Builder
	hdr.WriteString(st.Dim.Render(fit("ms", label)))
	for _, name := range [...]string{"p50", "p90", "p95", "p99", "p99.9", "max"} {
		if name == "p99.9" && col < 6 {
			name = "99.9"
		}
		hdr.WriteString(st.Label.Render(padLeft(name, col)))
	}
	row := func(name string, l *stats.Latency) string {
		var b strings.Builder
		b.WriteString(st.Label.Render(fit(name, label)))
		if l.Count == 0 {
			b.WriteString(st.Dim.Render(padLeft("no successful requests", col*3)))
			return b.String()
		}
		for _, d := range [...]time.Duration{l.P50, l.P90, l.P95, l.P99, l.P999, l.Max} {
			b.WriteString(st.Value.Render(padLeft(fmtMsIn(d, col-1), col)))
		}
		return b.String()
	}
	if ws.Scheduled != nil {
		return []string{hdr.String(), row("sched", ws.Scheduled), row("send", &ws.Latency)}
	}
	return []string{hdr.String(), row("send", &ws.Latency)}
}

// fmtMsIn is fmtMs in at most w cells where fewer decimals make it fit, so
// that neighbouring table cells never run together: 0.393 becomes 0.39 in
// four cells.
func fmtMsIn(d time.Duration, w int) string {
	s := fmtMs(d)
	if len(s) <= w {
		return s
	}
	if v := float64(d) / 1e6; v < 1 {
		return strconv.FormatFloat(v, 'f', max(0, w-2), 64)
	}
	return s
}

// padLeft right-aligns s in w cells.
func padLeft(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}
