package gate

import (
	"fmt"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Numbers are the figures of a span a threshold is checked over: the
// client's statistics and Triton's own.
type Numbers struct {
	Client stats.ClientStats
	Server stats.ServerStats
}

// OfSummary are a whole run's numbers.
func OfSummary(s record.Summary) Numbers { return Numbers{s.Client, s.Server.ServerStats} }

// OfStep are one step's numbers.
func OfStep(st record.Step) Numbers { return Numbers{st.Client, st.Server.ServerStats} }

// OfWindow are a tick's sliding-window numbers: the client over the last
// window, Triton's over the tick (the server's counters are per tick).
func OfWindow(s stats.Snapshot) Numbers { return Numbers{s.Window, s.Server} }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pick reads one statistic of a latency summary.
func pick(l stats.Latency, stat string) time.Duration {
	switch stat {
	case "avg":
		return l.Mean
	case "min":
		return l.Min
	case "max":
		return l.Max
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p95":
		return l.P95
	case "p99":
		return l.P99
	}
	return l.P999
}

// Value is the threshold's metric over n, and false with the reason when n
// did not measure it. Latency is judged from the schedule in open loop (what
// a user of the service waits, coordinated omission included) unless the
// metric says send-.
func (t Threshold) Value(n Numbers) (float64, string) {
	c := n.Client
	switch t.Metric {
	case "errors":
		if t.Kind == Count {
			return float64(c.Errors), ""
		}
		if c.Requests == 0 {
			return 0, "no requests"
		}
		return 100 * float64(c.Errors) / float64(c.Requests), ""
	case "throughput":
		if c.Duration <= 0 {
			return 0, "no time measured"
		}
		return c.InferPerS, ""
	case "requests":
		if c.Duration <= 0 {
			return 0, "no time measured"
		}
		return c.RequestsPerS, ""
	case "queue", "compute", "compute-infer", "request":
		s := n.Server
		if !s.Available || s.SuccessCount == 0 {
			return 0, "no server statistics"
		}
		switch t.Metric {
		case "queue":
			return millis(s.Queue), ""
		case "compute":
			return millis(s.ComputeInput + s.ComputeInfer + s.ComputeOutput), ""
		case "compute-infer":
			return millis(s.ComputeInfer), ""
		}
		return millis(s.Request), ""
	}
	stat, l := t.Metric, c.Latency
	switch {
	case strings.HasPrefix(stat, "ttft-"), strings.HasPrefix(stat, "itl-"):
		if c.Streaming == nil {
			return 0, "not a decoupled model: no responses were timed"
		}
		l = c.Streaming.TTFT
		if strings.HasPrefix(stat, "itl-") {
			l = c.Streaming.ITL
		}
		stat = stat[strings.IndexByte(stat, '-')+1:]
	case strings.HasPrefix(stat, "send-"):
		stat = strings.TrimPrefix(stat, "send-")
	default:
		if c.Scheduled != nil && c.Scheduled.Count > 0 {
			l = *c.Scheduled
		}
	}
	if l.Count == 0 {
		return 0, "no successful request"
	}
	return millis(pick(l, stat)), ""
}

// Check checks every threshold over n, naming the span scope.
func Check(ts []Threshold, scope string, n Numbers) []record.ThresholdResult {
	out := make([]record.ThresholdResult, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.check(scope, n))
	}
	return out
}

func (t Threshold) check(scope string, n Numbers) record.ThresholdResult {
	r := record.ThresholdResult{Threshold: t.Expr, Scope: scope, Limit: t.Limit, Unit: t.Unit()}
	v, missing := t.Value(n)
	if missing != "" {
		r.Reason = missing
		return r
	}
	r.Value = &v
	r.Pass = t.Holds(v)
	return r
}

// Failed are the results that did not hold.
func Failed(rs []record.ThresholdResult) []record.ThresholdResult {
	var out []record.ThresholdResult
	for _, r := range rs {
		if !r.Pass {
			out = append(out, r)
		}
	}
	return out
}

// Describe is a result in words: "p99<100ms over run: 123.4 ms (limit 100
// ms)".
func Describe(r record.ThresholdResult) string {
	if r.Value == nil {
		return fmt.Sprintf("%s over %s: not measured (%s)", r.Threshold, r.Scope, r.Reason)
	}
	return fmt.Sprintf("%s over %s: %s (limit %s)", r.Threshold, r.Scope, WithUnit(*r.Value, r.Unit), WithUnit(r.Limit, r.Unit))
}

// WithUnit writes a value and its unit: "12.31 ms", "0.50%".
func WithUnit(v float64, unit string) string {
	switch unit {
	case "":
		return FormatValue(v, unit)
	case "%":
		return FormatValue(v, unit) + "%"
	}
	return FormatValue(v, unit) + " " + unit
}

// FormatValue writes a value with the precision its unit deserves.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "ms":
		switch {
		case v >= 100:
			return fmt.Sprintf("%.0f", v)
		case v >= 1:
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.3f", v)
	case "%":
		return fmt.Sprintf("%.2f", v)
	case "requests":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
