// Package gate turns a run's numbers into a verdict a CI job can act on:
// thresholds (--threshold 'p99<100ms') parsed and checked over a run's
// summary, its steps or a window of ticks, and the JUnit XML file that CI
// systems show as tests. It reads record's types and writes
// record.ThresholdResult; the command decides what a breach does (exit
// code 99, ending the run early).
package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// Kind is what a threshold's metric measures, which decides its unit.
type Kind int

// The kinds of metric.
const (
	// Time is a latency or a server average, compared in milliseconds.
	Time Kind = iota
	// Rate is a per-second figure (throughput), compared as given.
	Rate
	// Share is a percentage of requests (errors<1%).
	Share
	// Count is a number of requests (errors<5).
	Count
)

// Threshold is one parsed --threshold expression: METRIC OP LIMIT.
type Threshold struct {
	// Expr is the expression as given, which names it in summaries.
	Expr string
	// Metric is the metric's canonical name ("p99", "ttft-p99", "queue").
	Metric string
	// Op is one of <, <=, >, >=.
	Op string
	// Limit is the bound in the metric's unit: milliseconds for a Time,
	// per second for a Rate, percent for a Share.
	Limit float64
	Kind  Kind
}

// Unit is how the limit and the values are written.
func (t Threshold) Unit() string {
	switch t.Kind {
	case Time:
		return "ms"
	case Share:
		return "%"
	case Rate:
		if t.Metric == "requests" {
			return "req/s"
		}
		return "infer/s"
	}
	return "requests"
}

// Holds reports whether value v meets the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Limit
	case "<=":
		return v <= t.Limit
	case ">":
		return v > t.Limit
	}
	return v >= t.Limit
}

// latencyStats are the statistics a latency metric can name, after an
// optional prefix (ttft-, itl-, send-).
var latencyStats = []string{"avg", "min", "max", "p50", "p90", "p95", "p99", "p99.9"}

// serverMetrics are Triton's per-request averages a threshold can name.
var serverMetrics = []string{"queue", "compute", "compute-infer", "request"}

// MetricNames lists every metric a threshold can name, for help and errors.
func MetricNames() string {
	var names []string
	names = append(names, latencyStats...)
	for _, p := range []string{"send-", "ttft-", "itl-"} {
		names = append(names, p+"p99")
	}
	names = append(names, serverMetrics...)
	names = append(names, "errors", "throughput", "requests")
	return strings.Join(names, ", ")
}

// metricKind is the kind of a metric name, false for a name it does not
// know. Latency statistics may carry the prefixes send- (latency from the
// send even in open loop), ttft- and itl- (a decoupled model's time to the
// first response and between responses).
func metricKind(name string) (Kind, bool) {
	switch name {
	case "errors":
		return Share, true
	case "throughput", "requests":
		return Rate, true
	}
	for _, s := range serverMetrics {
		if name == s {
			return Time, true
		}
	}
	stat := name
	for _, p := range []string{"send-", "ttft-", "itl-"} {
		stat = strings.TrimPrefix(stat, p)
	}
	for _, s := range latencyStats {
		if stat == s {
			return Time, true
		}
	}
	return 0, false
}

// aliases are other spellings users of k6, perf_analyzer and genai-perf
// write for a metric.
var aliases = map[string]string{
	"mean": "avg", "p999": "p99.9", "tput": "throughput", "rps": "requests",
	"error": "errors", "queue-time": "queue", "ttft": "ttft-avg", "itl": "itl-avg",
}

// Parse reads one threshold expression: a metric, a comparison (<, <=, >,
// >=) and a limit with its unit, "p99<100ms", "errors<1%",
// "throughput>500". A malformed expression is refused with an error that
// names the bad part.
func Parse(expr string) (Threshold, error) {
	s := strings.TrimSpace(expr)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("bad threshold %s: %s", textsafe.Quote(expr), fmt.Sprintf(format, a...))
	}
	i := strings.IndexAny(s, "<>=")
	if i < 0 {
		return Threshold{}, bad("no comparison: write METRIC<LIMIT or METRIC>LIMIT, e.g. p99<100ms")
	}
	name := strings.ToLower(strings.TrimSpace(s[:i]))
	rest := s[i:]
	var op string
	switch {
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, ">="):
		op, rest = rest[:2], rest[2:]
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, ">"):
		op, rest = rest[:1], rest[1:]
	default:
		return Threshold{}, bad("%q is not a comparison: use <, <=, > or >=", rest[:min(2, len(rest))])
	}
	if strings.ContainsAny(rest, "<>=") {
		return Threshold{}, bad("more than one comparison: one threshold per --threshold")
	}
	if name == "" {
		return Threshold{}, bad("no metric before %q: one of %s", op, MetricNames())
	}
	if a, ok := aliases[name]; ok {
		name = a
	}
	kind, ok := metricKind(name)
	if !ok {
		return Threshold{}, bad("unknown metric %q: use one of %s", name, MetricNames())
	}
	t := Threshold{Expr: s, Metric: name, Op: op, Kind: kind}
	lim := strings.TrimSpace(rest)
	if lim == "" {
		return Threshold{}, bad("no limit after %q", op)
	}
	var err error
	switch kind {
	case Time:
		t.Limit, err = parseMillis(lim)
	case Rate:
		t.Limit, err = parseNumber(strings.TrimSuffix(lim, "/s"))
	case Share:
		if strings.HasSuffix(lim, "%") {
			t.Limit, err = parseNumber(strings.TrimSuffix(lim, "%"))
			if err == nil && t.Limit > 100 {
				err = fmt.Errorf("%s is over 100%%", textsafe.Quote(lim))
			}
		} else {
			t.Kind = Count
			t.Limit, err = parseNumber(lim)
		}
	}
	if err != nil {
		return Threshold{}, bad("%v", err)
	}
	return t, nil
}

// parseNumber reads a finite, non-negative number.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("limit %s is not a number", textsafe.Quote(s))
	}
	return v, nil
}

// parseMillis reads a duration with its unit (100ms, 1.5s, 250us) as
// milliseconds; a bare number is refused, as its unit would be a guess.
func parseMillis(s string) (float64, error) {
	d, err := time.ParseDuration(strings.ReplaceAll(s, "µ", "u"))
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return 0, fmt.Errorf("limit %s has no unit: write %sms (or s, us)", textsafe.Quote(s), s)
		}
		return 0, fmt.Errorf("limit %s is not a duration (e.g. 100ms, 1.5s)", textsafe.Quote(s))
	}
	if d < 0 {
		return 0, fmt.Errorf("limit %s is negative", textsafe.Quote(s))
	}
	return float64(d) / float64(time.Millisecond), nil
}

// ParseAll parses every expression, stopping at the first bad one.
func ParseAll(exprs []string) ([]Threshold, error) {
	out := make([]Threshold, 0, len(exprs))
	for _, e := range exprs {
		t, err := Parse(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
