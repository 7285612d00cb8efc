package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// streaming reports whether the model under load is decoupled (an LLM
// streaming tokens): the header says so, or the snapshots time responses.
// Its requests then last as long as their responses keep coming, and the
// request latency alone says little; the streaming pane takes the latency
// pane's place.
func (b *board) streaming() bool {
	if b.header.Decoupled {
		return true
	}
	s := b.hist.latest()
	return s != nil && s.Tick.Streaming != nil
}

// latencySlot is the pane in the latency pane's place: the streaming pane
// for a decoupled model, the latency pane for any other.
type latencySlot struct {
	b       *board
	latency latencyPane
	stream  streamPane
}

func newLatencySlot(b *board) *latencySlot {
	return &latencySlot{b: b, latency: latencyPane{b: b}, stream: streamPane{b: b}}
}

func (p *latencySlot) SetSize(w, h int) {
	p.latency.SetSize(w, h)
	p.stream.SetSize(w, h)
}

func (p *latencySlot) View() string {
	if p.b.streaming() {
		return p.stream.View()
	}
	return p.latency.View()
}

// streamPane shows a decoupled model's responses as the client timed
// them: time to first response (TTFT) and between responses (ITL), the
// request latency to the final response, responses per request and per
// second, for the selected window; and TTFT and ITL over time, each on its
// own scale (hundreds of milliseconds against tens).
type streamPane struct {
	b    *board
	w, h int
}

func (p *streamPane) SetSize(w, h int) { p.w, p.h = w, h }

// tickTTFT and tickITL are the tick's response timings, nil when no
// request of the tick was timed; the time to first response is from the
// schedule in open loop (paneTTFT).
func tickTTFT(s *stats.Snapshot) *stats.Latency {
	if st := s.Tick.Streaming; st != nil {
		if l, _ := paneTTFT(st); l.Count > 0 {
			return l
		}
	}
	return nil
}

func tickITL(s *stats.Snapshot) *stats.Latency {
	if st := s.Tick.Streaming; st != nil && st.ITL.Count > 0 {
		return &st.ITL
	}
	return nil
}

// msOf is a latency in milliseconds, missing when l is nil.
func msOf(l *stats.Latency, d func(*stats.Latency) time.Duration) (float64, bool) {
	if l == nil {
		return 0, false
	}
	return float64(d(l)) / 1e6, true
}

func p50Of(l *stats.Latency) time.Duration { return l.P50 }
func p90Of(l *stats.Latency) time.Duration { return l.P90 }
func p99Of(l *stats.Latency) time.Duration { return l.P99 }

func ttftP50(s *stats.Snapshot) (float64, bool) { return msOf(tickTTFT(s), p50Of) }
func ttftP90(s *stats.Snapshot) (float64, bool) { return msOf(tickTTFT(s), p90Of) }
func ttftP99(s *stats.Snapshot) (float64, bool) { return msOf(tickTTFT(s), p99Of) }
func itlP50(s *stats.Snapshot) (float64, bool)  { return msOf(tickITL(s), p50Of) }
func itlP90(s *stats.Snapshot) (float64, bool)  { return msOf(tickITL(s), p90Of) }
func itlP99(s *stats.Snapshot) (float64, bool)  { return msOf(tickITL(s), p99Of) }

// streamChartRows is the least number of rows under the numbers for the two
// charts (a legend and three rows of plot each); fewer get sparklines.
const streamChartRows = 8

func (p *streamPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusLatency
	s := p.b.hist.latest()
	if s == nil {
		return box(st, "Streaming", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	ws, wname := p.b.windowStats(s)
	title := "Streaming · " + wname + fromWhere(ws)
	iw, rows := p.w-4, p.h-2
	lines := make([]string, 0, rows)
	lines = append(lines, streamTable(st, ws, iw)...)
	if rows > len(lines) {
		lines = append(lines, responsesSummary(st, ws.Streaming, iw))
	}
	ch := p.b.charted() // up to where the wheel scrolled the charts
	h := &ch
	switch left := rows - len(lines); {
	case left >= streamChartRows:
		glyphs := st.Series[0].Render("█") + " p50  " + st.Series[1].Render("▓") + " p90  " +
			st.Series[2].Render("░") + " p99"
		// The time axis goes under the lower chart only: both share it.
		top := (left - 2) / 2
		ttft := newChart(fmtAxis, "ms", ttftP50, ttftP90, ttftP99)
		ttft.timeAxis = false
		itl := newChart(fmtAxis, "ms", itlP50, itlP90, itlP99)
		lines = append(lines, st.Label.Render("TTFT ")+glyphs+st.Dim.Render("  time to first response, ms"))
		lines = append(lines, ttft.draw(st, h, iw, top)...)
		lines = append(lines, st.Label.Render("ITL  ")+glyphs+st.Dim.Render("  time between responses, ms"))
		lines = append(lines, itl.draw(st, h, iw, left-2-top)...)
	case left >= 1:
		// Each on its own scale, p99 and p50 together so that the two
		// compare.
		const label = 9
		ttftTop, itlTop := maxOver(h, ttftP99), maxOver(h, itlP99)
		spark := func(name string, paint Paint, m metric, top float64) string {
			return fit(st.Label.Render(name), label) + sparkline(paint, h, iw-label, m, top)
		}
		sparks := []string{
			spark("ttft p99", st.Series[2], ttftP99, ttftTop),
			spark("itl p99", st.Series[2], itlP99, itlTop),
		}
		if left >= 4 {
			sparks = []string{
				sparks[0], spark("ttft p50", st.Series[0], ttftP50, ttftTop),
				sparks[1], spark("itl p50", st.Series[0], itlP50, itlTop),
			}
		}
		lines = append(lines, sparks[:min(left, len(sparks))]...)
	}
	return box(st, title, focused, p.w, p.h, lines)
}

// streamTable is the window's time to first response, time between
// responses and request latency (to the final response): p50, p90, p99 and
// the average in milliseconds, and how many values each is over, in iw
// cells.
func streamTable(st *Styles, ws *stats.ClientStats, iw int) []string {
	label, request := 8, "request"
	if iw < 42 {
		label, request = 5, "req"
	}
	col := min(9, max(5, (iw-label)/5))
	// The counts (up to five cells, "3,842") need a column of six.
	count := col >= 6 && label+5*col <= iw
	var hdr strings.Builder
	hdr.WriteString(st.Dim.Render(fit("ms", label)))
	for _, name := range [...]string{"p50", "p90", "p99", "avg"} {
		hdr.WriteString(st.Label.Render(padLeft(name, col)))
	}
	if count {
		hdr.WriteString(st.Label.Render(padLeft("count", col)))
	}
	row := func(name string, l *stats.Latency, none string) string {
		var b strings.Builder
		b.WriteString(st.Label.Render(fit(name, label)))
		if l == nil || l.Count == 0 {
			b.WriteString(st.Dim.Render(padLeft(none, max(col*3, len(none)+1))))
			return b.String()
		}
		for _, d := range [...]time.Duration{l.P50, l.P90, l.P99, l.Mean} {
			b.WriteString(st.Value.Render(padLeft(fmtMsIn(d, col-1), col)))
		}
		if count {
			b.WriteString(st.Dim.Render(padLeft(fmtCount(l.Count), col)))
		}
		return b.String()
	}
	var ttft, itl *stats.Latency
	if sc := ws.Streaming; sc != nil {
		ttft, _ = paneTTFT(sc)
		itl = &sc.ITL
	}
	return []string{
		hdr.String(),
		row("ttft", ttft, "no request finished"),
		row("itl", itl, "no second response"),
		row(request, paneLatency(ws), "no request finished"),
	}
}

// responsesSummary is the window's responses per second (output tokens
// per second when a response is a token) and per request, in iw cells.
func responsesSummary(st *Styles, sc *stats.StreamingStats, iw int) string {
	if sc == nil {
		return st.Dim.Render("no responses timed yet")
	}
	rate := st.Value.Render(fmtRate(sc.ResponsesPerS))
	per := sc.PerRequest
	if sc.OutputTokens > 0 && sc.OutputTokens != sc.Responses {
		// The server counted the tokens (a text endpoint's usage), and
		// a response is not one token: say both.
		tokens := join(st.Label.Render("tokens ")+st.Value.Render(fmtRate(sc.OutputTokensPerS))+"/s", rate+" resp/s")
		if cellWidth(tokens) <= iw {
			return tokens
		}
		return st.Value.Render(fmtRate(sc.OutputTokensPerS)) + " tok/s"
	}
	if per.Count == 0 {
		return join(st.Label.Render("responses ")+rate+"/s", st.Dim.Render("no request finished"))
	}
	mean := st.Value.Render(strconv.FormatFloat(per.Mean, 'f', 1, 64))
	wide := join(st.Label.Render("responses ")+rate+"/s", mean+" per request",
		st.Dim.Render("p50 "+strconv.FormatInt(per.P50, 10)+" · max "+strconv.FormatInt(per.Max, 10)))
	if cellWidth(wide) <= iw {
		return wide
	}
	return join(rate+" resp/s", mean+"/req", st.Dim.Render("max "+strconv.FormatInt(per.Max, 10)))
}

// fmtCount is a count in at most five cells: 842, 3,842, 38k, 3.84M.
func fmtCount(n int64) string {
	switch {
	case n < 10_000:
		return fmtInt(n)
	case n < 1_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return sig3(float64(n)/1e6) + "M"
}

// serverResponses is Triton's own account of a decoupled model's responses
// in the tick (response_stats): the model's time per response, for the
// first and the later ones, its output time, responses per second, and the
// empty, cancelled and failed ones; "" for other models.
func serverResponses(st *Styles, s *stats.Snapshot, iw int) string {
	r := s.Server.Responses
	if r == nil || !s.Server.Available || s.Server.Reset {
		return ""
	}
	if r.ComputeInferCount == 0 && r.Success+r.Empty+r.Fail+r.Cancel == 0 {
		return st.Label.Render("per response ") + st.Dim.Render("no response in the last tick")
	}
	d := s.Tick.Duration
	if d <= 0 {
		d = s.Interval
	}
	rate, rated := "", ""
	if d > 0 {
		rate = st.Value.Render(fmtRate(float64(r.Success)/d.Seconds())) + "/s"
		rated = st.Label.Render("responses ") + rate
	}
	val := func(d time.Duration) string { return st.Value.Render(fmtDur(d)) }
	count := func(name string, n int64, always bool) string {
		if n == 0 && !always {
			return ""
		}
		paint := st.Value
		if name == "failed" && n > 0 {
			paint = st.Warn
		}
		return st.Label.Render(name+" ") + paint.Render(fmtInt(n))
	}
	var split, short []string
	if r.FirstCount > 0 {
		split = append(split, "first "+val(r.FirstComputeInfer))
		short = append(short, "1st "+val(r.FirstComputeInfer))
	}
	if r.LaterCount > 0 {
		split = append(split, "later "+val(r.LaterComputeInfer))
		short = append(short, "later "+val(r.LaterComputeInfer))
	}
	infer := st.Label.Render("infer ") + val(r.ComputeInfer)
	wide := join(
		st.Label.Render("per response"),
		infer+paren(strings.Join(split, ", ")),
		st.Label.Render("output ")+val(r.ComputeOutput),
		rated,
		count("empty", r.Empty, true), count("cancelled", r.Cancel, true), count("failed", r.Fail, false),
	)
	if cellWidth(wide) <= iw {
		return wide
	}
	return join(
		st.Label.Render("resp ")+infer+" "+strings.Join(short, " "),
		st.Label.Render("out ")+val(r.ComputeOutput),
		rate,
		count("empty", r.Empty, false), count("cancelled", r.Cancel, false), count("failed", r.Fail, false),
	)
}

// paren is " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
