package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// serverPane is Triton's own account of where a request's time goes, from
// its statistics, and how it batches.
type serverPane struct {
	b    *board
	w, h int
	// steps caches a pipeline's rows of its composing models.
	steps stepRows
}

func (p *serverPane) SetSize(w, h int) { p.w, p.h = w, h }

func queueMs(s *stats.Snapshot) (float64, bool) {
	return float64(s.Server.Queue) / 1e6, serverMeasured(s)
}

func computeMs(s *stats.Snapshot) (float64, bool) {
	return float64(s.Server.Compute()) / 1e6, serverMeasured(s)
}

// serverMeasured is true when the tick has server times to show.
func serverMeasured(s *stats.Snapshot) bool {
	return s.Server.Available && !s.Server.Reset && s.Server.SuccessCount > 0
}

func (p *serverPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusServer
	// The numbers are the latest tick's, so named.
	const title = "Server time per request · Triton statistics · last tick"
	s := p.b.hist.latest()
	// The charts draw the ticks up to where the wheel scrolled them.
	ch := p.b.charted()
	if s == nil {
		return box(st, title, focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	iw := p.w - 4
	rows := p.h - 2
	sv := &s.Server
	// Queue and compute over time, on one scale so that their heights
	// compare: as a stacked chart when there are rows for one, else as
	// two sparklines.
	history := func(lines []string) []string {
		left := rows - len(lines)
		if left >= 5 {
			c := newChart(fmtAxis, "ms", computeMs, serverMs)
			legend := st.Series[0].Render("█") + " compute  " + st.Series[1].Render("▓") + " queue  " +
				st.Dim.Render("ms per request, stacked")
			return append(append(lines, legend), c.draw(st, &ch, iw, left-1)...)
		}
		if left <= 0 {
			return lines
		}
		const label = 8
		top := niceCeil(maxOver(&ch, queueMs, computeMs))
		scale := st.Dim.Render(fit("0–"+fmtAxis(top)+" ms", 11))
		lines = append(lines, st.Label.Render(fit("queue", label))+scale+
			sparkline(st.Segments[0], &ch, iw-label-11, queueMs, top))
		if left >= 2 {
			lines = append(lines, st.Label.Render(fit("compute", label))+scale+
				sparkline(st.Segments[2], &ch, iw-label-11, computeMs, top))
		}
		return lines
	}
	// Without this tick's times, the message comes first and the history
	// (with its gap) still shows below it.
	var lines []string
	switch {
	case !sv.Available:
		lines = wrapped(st.Warn.Render("server statistics unavailable: ")+sv.Err, iw)
	case sv.Reset:
		lines = wrapped(st.Warn.Render("statistics counters went back (server restart or model reload); showing from the next tick"), iw)
	case sv.SuccessCount == 0:
		lines = []string{st.Dim.Render("no request finished on the server in the last tick")}
	}
	if lines != nil {
		if pend := pending(st, s); pend != "" {
			lines = append(lines, pend)
		}
		if r := serverResponses(st, s, iw); r != "" {
			lines = append(lines, r)
		}
		return box(st, title, focused, p.w, p.h, history(lines))
	}

	parts := [5]float64{float64(sv.Queue), float64(sv.ComputeInput), float64(sv.ComputeInfer),
		float64(sv.ComputeOutput), float64(sv.Overhead)}
	names := [5]string{"queue", "input", "infer", "output", "overhead"}
	wide := iw >= 100
	if !wide {
		names = [5]string{"queue", "in", "infer", "out", "ovh"}
	}
	var legend strings.Builder
	for i, name := range names {
		if i > 0 {
			legend.WriteString(" ")
			if wide {
				legend.WriteString(" ")
			}
		}
		legend.WriteString(st.Segments[i].Render(segmentGlyphs[i]))
		legend.WriteString(" " + st.Label.Render(name) + " " + st.Value.Render(fmtDur(timeOf(parts[i]))))
	}
	legend.WriteString("  " + st.Label.Render("= request ") + st.Value.Render(fmtDur(sv.Request)))
	first := legend.String()
	if !wide && cellWidth(first) > iw {
		first = msLegend(st, parts, names, sv.Request, iw)
	}
	if sv.Pipeline() {
		return box(st, pipelineTitle, focused, p.w, p.h, history(p.pipelineLines(s, first, parts, iw, rows)))
	}
	lines = append(lines, first, stackedBar(st, parts, iw))

	batch := st.Dim.Render("-")
	if sv.ExecutionCount > 0 {
		// A decoupled model's tick may end requests but no execution.
		batch = st.Value.Render(strconv.FormatFloat(sv.AvgBatch, 'f', 1, 64))
	}
	lines = append(lines, join(
		st.Label.Render("batch avg ")+batch,
		batchShares(st, sv.Batches),
		pending(st, s),
	))
	if r := serverResponses(st, s, iw); r != "" {
		lines = append(lines, r)
	}
	return box(st, title, focused, p.w, p.h, history(lines))
}

// pipelineLines are a pipeline's lines of the server pane: its time over
// its steps (first), then a row per step, then its bar and pending count
// as the rows allow; the numbers come before the bar and the history,
// which get what rows are left.
func (p *serverPane) pipelineLines(s *stats.Snapshot, first string, parts [5]float64, iw, rows int) []string {
	st := p.b.common.Styles
	lines := append([]string{first}, p.steps.rows(st, s, iw)...)
	if len(lines) < rows {
		lines = append(lines, stackedBar(st, parts, iw))
	}
	if pend := pending(st, s); pend != "" && len(lines) < rows {
		lines = append(lines, pend)
	}
	return lines
}

// pipelineTitle is the server pane's title for a pipeline, whose queue
// and compute are its steps' added up.
const pipelineTitle = "Server time per request · pipeline: its steps' queue + compute · last tick"

// serverMs is queue and compute together, the top of the stacked chart.
func serverMs(s *stats.Snapshot) (float64, bool) {
	return float64(s.Server.Queue+s.Server.Compute()) / 1e6, serverMeasured(s)
}

// msLegend is the server times in milliseconds without a unit on each,
// for narrow panes: the request total and its unit must stay on screen.
// The parts get at most two decimals (a 0.000431 ms overhead is 0.00, not
// seven cells); where even that is too wide for iw, the total comes first
// and the parts after it.
func msLegend(st *Styles, parts [5]float64, names [5]string, request time.Duration, iw int) string {
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(st.Segments[i].Render(segmentGlyphs[i]))
		b.WriteString(" " + st.Label.Render(name) + " " + st.Value.Render(fmtMs2(timeOf(parts[i]))))
	}
	total := st.Label.Render("request ") + st.Value.Render(fmtMs2(request)) + " ms"
	if line := b.String() + " " + st.Label.Render("= ") + total; cellWidth(line) <= iw {
		return line
	}
	return total + " " + st.Label.Render("= ") + b.String()
}

// fmtMs2 is a duration in milliseconds with at most two decimals: 0.06,
// 2.14, 26.1, 1234.
func fmtMs2(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v <= 0:
		return "0"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func timeOf(ns float64) time.Duration { return time.Duration(ns) }

// batchShares is the tick's executions by batch size: "1:2% 2:3% 8:85%".
func batchShares(st *Styles, batches []stats.BatchCount) string {
	var total int64
	for _, b := range batches {
		total += b.Count
	}
	if total == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(st.Label.Render("sizes"))
	for _, bc := range batches {
		if bc.Count == 0 {
			continue
		}
		b.WriteString(" " + strconv.Itoa(bc.Size) + ":" + st.Value.Render(fmtPct(float64(bc.Count)/float64(total))))
	}
	return b.String()
}

// pending is Triton's pending request count when the metrics have it.
func pending(st *Styles, s *stats.Snapshot) string {
	if !s.Metrics.HasPending {
		return ""
	}
	return st.Label.Render("pending ") + st.Value.Render(strconv.FormatFloat(s.Metrics.Pending, 'f', 0, 64))
}
