package gate

import (
	"strings"
	"testing"
)

// TestParse reads the expressions users write, each into its metric,
// comparison, limit and unit.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		metric string
		op     string
		limit  float64
		unit   string
	}{
		{"p99<100ms", "p99", "<", 100, "ms"},
		{"avg<20ms", "avg", "<", 20, "ms"},
		{" p95 <= 1.5s ", "p95", "<=", 1500, "ms"},   // spaces, seconds
		{"p50<250us", "p50", "<", 0.25, "ms"},        // microseconds
		{"p50<250µs", "p50", "<", 0.25, "ms"},        // the µ sign
		{"P99.9<1s", "p99.9", "<", 1000, "ms"},       // upper case
		{"p999<1s", "p99.9", "<", 1000, "ms"},        // alias
		{"mean<5ms", "avg", "<", 5, "ms"},            // k6's word
		{"errors<1%", "errors", "<", 1, "%"},         // a share
		{"errors<=5", "errors", "<=", 5, "requests"}, // a count
		{"throughput>500", "throughput", ">", 500, "infer/s"},
		{"throughput>=500/s", "throughput", ">=", 500, "infer/s"},
		{"requests>100", "requests", ">", 100, "req/s"},
		{"ttft-p99<500ms", "ttft-p99", "<", 500, "ms"},
		{"itl-p50<20ms", "itl-p50", "<", 20, "ms"},
		{"ttft<300ms", "ttft-avg", "<", 300, "ms"}, // a bare ttft is its average
		{"send-p99<10ms", "send-p99", "<", 10, "ms"},
		{"queue<5ms", "queue", "<", 5, "ms"},
		{"compute<2ms", "compute", "<", 2, "ms"},
	} {
		th, err := Parse(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if th.Metric != tc.metric || th.Op != tc.op || th.Limit != tc.limit || th.Unit() != tc.unit {
			t.Errorf("%q: got %s %s %g %s, want %s %s %g %s", tc.expr, th.Metric, th.Op, th.Limit, th.Unit(),
				tc.metric, tc.op, tc.limit, tc.unit)
		}
	}
}

// TestParseRefuses: each malformed expression is refused with one line
// that names the bad part.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ expr, names string }{
		{"p99 100ms", "no comparison"},
		{"p99=100ms", `"=1" is not a comparison`},
		{"<100ms", "no metric"},
		{"p98<100ms", `unknown metric "p98"`},
		{"latency<100ms", `unknown metric "latency"`},
		{"p99<", "no limit"},
		{"p99<100", `limit "100" has no unit`},
		{"p99<fast", `limit "fast" is not a duration`},
		{"p99<-5ms", `"-5ms"`},
		{"errors<150%", "over 100%"},
		{"errors<lots", `limit "lots" is not a number`},
		{"throughput>NaN", `limit "NaN" is not a number`},
		{"throughput>-1", `limit "-1" is not a number`},
		{"p99<1ms<2ms", "more than one comparison"},
		{"p99>>1ms", "more than one comparison"},
	} {
		_, err := Parse(tc.expr)
		if err == nil {
			t.Errorf("%q: accepted", tc.expr)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.names) || !strings.Contains(msg, tc.expr) || strings.Contains(msg, "\n") {
			t.Errorf("%q: %q does not name %q (and the expression) in one line", tc.expr, msg, tc.names)
		}
	}
}

// TestHolds: each comparison, at and either side of its limit.
func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		expr            string
		below, at, over bool
	}{
		{"p99<10ms", true, false, false},
		{"p99<=10ms", true, true, false},
		{"throughput>10", false, false, true},
		{"throughput>=10", false, true, true},
	} {
		th, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := [3]bool{th.Holds(9.99), th.Holds(10), th.Holds(10.01)}; got != [3]bool{tc.below, tc.at, tc.over} {
			t.Errorf("%s at 9.99, 10, 10.01: %v", tc.expr, got)
		}
	}
}
