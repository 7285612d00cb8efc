package report

import (
	"fmt"
	"strings"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// writeGoodput writes a decoupled model's goodput, when the run counted
// one (--slo): the requests per second that met every objective at once.
func writeGoodput(b *strings.Builder, sc *stats.StreamingStats) {
	g := sc.Goodput
	if g == nil {
		return
	}
	share := 0.0
	if sc.Requests > 0 {
		share = 100 * float64(g.Requests) / float64(sc.Requests)
	}
	fmt.Fprintf(b, "    Goodput: %s requests/sec (%d of %d requests, %s%%, met every --slo at once)\n", g6(g.PerS), g.Requests, sc.Requests, g6(share))
}

// csvGoodputColumn is genai-perf's goodput, after the other LLM columns
// of a run that counted one.
const csvGoodputColumn = "Request Goodput (requests/sec)"

// hasGoodput reports whether st counted a goodput.
func hasGoodput(sc *stats.StreamingStats) bool { return sc != nil && sc.Goodput != nil }

// goodputCSVCell is a step's cell under csvGoodputColumn.
func goodputCSVCell(sc *stats.StreamingStats) string {
	if !hasGoodput(sc) {
		return ""
	}
	return g6(sc.Goodput.PerS)
}

// jointGoodput is what a search's best level says of its goodput: under
// several SLOs, the requests per second that met them all at once where
// the run counted them (--slo), else good, the goodput of the first SLO.
func jointGoodput(sr *record.Search, st record.Step, good string) string {
	if len(sr.SLOs) < 2 || !hasGoodput(st.Client.Streaming) {
		return good
	}
	return fmt.Sprintf(", goodput %s req/s meeting every SLO at once", fixed(st.Client.Streaming.Goodput.PerS, 1))
}
