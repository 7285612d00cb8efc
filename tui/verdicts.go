package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// diagnose reads what limits the load from the latest ticks with
// stats.Diagnose, the one set of rules the headless line, the summary and
// capacity planning also use. It runs when ticks arrive, not per frame: a
// verdict then shows exactly as long as its condition holds in the ticks.
func (b *board) diagnose() {
	h := b.hist
	n := min(h.len(), 2*stats.DiagnoseTicks)
	recent := make([]stats.Snapshot, n)
	for i := range n {
		recent[i] = *h.fromEnd(n - 1 - i)
	}
	b.findings = stats.Diagnose(recent, stats.DiagnoseOptions{SharedProcess: b.header.SharedProcess})
	b.spans = findingSpans(b.findings, recent)
	tail, cut := stats.DiagnosisTail(recent)
	b.avg = splitOver(tail, cut)
	b.diagnosed++
}

// has reports whether a verdict holds now.
func (b *board) has(v stats.Verdict) bool {
	for _, f := range b.findings {
		if f.Verdict == v {
			return true
		}
	}
	return false
}

// bottleneck names a verdict's limit in the header, briefly; the warning
// lines say the whole finding. Unreachable and stalled are the header's run
// state instead, and an empty name is no bottleneck.
func bottleneck(v stats.Verdict, compact bool) (name string, limit bool) {
	switch v {
	case stats.ClientBound:
		if compact {
			return "client-bound", true
		}
		return "client CPU", true
	case stats.OutsideTriton:
		if compact {
			return "client/network", true
		}
		return "client or network", true
	case stats.Queueing:
		if compact {
			return "server-bound", true
		}
		return "server queue", true
	case stats.ComputeBound:
		if compact {
			return "GPU-bound", true
		}
		return "server GPU", true
	case stats.FallingBehind:
		return "open loop behind", false
	case stats.Failing:
		return "errors", false
	}
	return "", false
}

// verdictTag is the header's word on what limits the load: "⚠ bottleneck:
// server queue, client CPU · errors"; compact, the first verdict only.
func (b *board) verdictTag(compact bool) string {
	var limits, others []string
	for _, f := range b.findings {
		name, limit := bottleneck(f.Verdict, compact)
		switch {
		case name == "":
		case f.Verdict == stats.OutsideTriton && b.has(stats.ClientBound):
			// The client's CPU is where the time outside Triton goes:
			// one name for both.
		case compact:
			return b.common.Styles.Warn.Render("⚠ " + name)
		case limit:
			limits = append(limits, name)
		default:
			others = append(others, name)
		}
	}
	if len(limits) > 0 {
		others = append([]string{"bottleneck: " + strings.Join(limits, ", ")}, others...)
	}
	if len(others) == 0 {
		return ""
	}
	return b.common.Styles.Warn.Render("⚠ " + strings.Join(others, " · "))
}

// warnRows is how many rows the warning lines may take at a height: one
// on a short screen, two from 24 rows, three from 50.
func warnRows(height int) int {
	switch {
	case height >= 50:
		return 3
	case height >= 24:
		return 2
	}
	return 1
}

// warnLines wraps every finding's message to width, each finding on lines
// of its own, so that a long one is read whole rather than cut. A finding
// with a span name (spans, as findingSpans makes them) ends with it:
// "… · last 5 s".
func warnLines(st *Styles, findings []stats.Finding, spans []string, width int) []string {
	var out []string
	if width < 4 {
		return nil
	}
	for k, f := range findings {
		msg := f.Message
		if k < len(spans) && spans[k] != "" {
			msg += " · " + spans[k]
		}
		for i, l := range strings.Split(ansi.Wrap(msg, width-2, ""), "\n") {
			lead := "⚠ "
			if i > 0 {
				lead = "  "
			}
			out = append(out, st.Warn.Render(lead+l))
		}
	}
	return out
}
