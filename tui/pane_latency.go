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

func fmtMsAxis(v float64) string { return sig3(v) }

func (p *latencyPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusLatency
	s := p.b.hist.latest()
	if s == nil {
		return box(st, "Latency", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	ws, wname := p.b.windowStats(s)
	title := "Latency · " + wname
	iw := p.w - 4
	rows := p.h - 2
	lines := make([]string, 0, rows)

	// The table: one column per percentile, one row per kind of latency.
	label := 6
	if iw < 42 {
		label = 5
	}
	col := min(9, max(5, (iw-label)/6))
	var hdr strings.Builder
	hdr.WriteString(st.Dim.Render(fit("ms", label)))
	for _, name := range [...]string{"p50", "p90", "p95", "p99", "p99.9", "max"} {
		if name == "p99.9" && col < 6 {
			name = "99.9"
		}
		hdr.WriteString(st.Label.Render(padLeft(name, col)))
	}
	lines = append(lines, hdr.String())
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
		lines = append(lines, row("sched", ws.Scheduled), row("send", &ws.Latency))
	} else {
		lines = append(lines, row("send", &ws.Latency))
	}
	if rows-len(lines) >= 5 {
		legend := st.Series[0].Render("█") + " p50  " + st.Series[1].Render("▓") + " p90  " +
			st.Series[2].Render("░") + " p99  ms"
		if ws.Scheduled != nil {
			legend += st.Dim.Render("  from schedule")
		}
		lines = append(lines, legend)
	}
	switch left := rows - len(lines); {
	case left >= 4:
		lines = append(lines, bandChart(st, p.b.hist, iw, left, fmtMsAxis, latP50, latP90, latP99)...)
	case left >= 1:
		lines = append(lines, fit(st.Label.Render("p99"), label)+sparkline(st.Series[2], p.b.hist, iw-label, latP99, 0))
	}
	return box(st, title, focused, p.w, p.h, lines)
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
