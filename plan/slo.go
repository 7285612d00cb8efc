package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// What an SLO's latency is (SLO.Metric).
const (
	// MetricLatency is the request latency: to the response, or to the
	// final response of a decoupled model.
	MetricLatency = ""
	// MetricTTFT is a decoupled model's time to first response (time to
	// first token).
	MetricTTFT = "ttft"
	// MetricITL is a decoupled model's inter-response latency, per gap
	// between consecutive responses (inter-token latency).
	MetricITL = "itl"
)

// ParseSLO parses an objective of the form [METRIC-]STAT:THRESHOLD, the
// value of `--slo`:
//
//	p99:100ms        request latency p99 under 100 ms
//	avg:20ms         average request latency under 20 ms
//	ttft-p99:500ms   time to first response p99 under 500 ms
//	itl-p99:50ms     inter-response latency p99 under 50 ms
//
// METRIC is ttft, itl or latency (the default); STAT is avg or pN with N in
// (0, 100], e.g. p50, p99, p99.9; THRESHOLD is a duration with its unit.
func ParseSLO(s string) (SLO, error) {
	spec, threshold, ok := strings.Cut(s, ":")
	if !ok {
		return SLO{}, fmt.Errorf("bad SLO %s: use [ttft-|itl-]STAT:THRESHOLD, e.g. p99:100ms or ttft-p99:500ms", textsafe.Quote(s))
	}
	var slo SLO
	stat := spec
	if metric, rest, found := strings.Cut(spec, "-"); found {
		switch metric {
		case "latency":
			slo.Metric = MetricLatency
		case MetricTTFT, MetricITL:
			slo.Metric = metric
		default:
			return SLO{}, fmt.Errorf("bad SLO %s: %s is not a metric; use ttft, itl or latency", textsafe.Quote(s), textsafe.Quote(metric))
		}
		stat = rest
	}
	switch {
	case stat == "avg":
	case strings.HasPrefix(stat, "p"):
		p, err := strconv.ParseFloat(stat[1:], 64)
		if err != nil || !(p > 0 && p <= 100) {
			return SLO{}, fmt.Errorf("bad SLO %s: %s is not a percentile; use p50, p90, p95, p99 or p99.9", textsafe.Quote(s), textsafe.Quote(stat))
		}
		slo.Percentile = p
	default:
		return SLO{}, fmt.Errorf("bad SLO %s: %s is not a statistic; use avg or a percentile such as p99", textsafe.Quote(s), textsafe.Quote(stat))
	}
	d, err := time.ParseDuration(threshold)
	if err != nil && durationOverflows(threshold) {
		return SLO{}, fmt.Errorf("bad SLO %s: threshold %s is longer than the longest duration (about 2562047h); an SLO is at most minutes", textsafe.Quote(s), textsafe.Quote(threshold))
	}
	if err != nil || d <= 0 {
		return SLO{}, fmt.Errorf("bad SLO %s: threshold %s is not a positive duration; give its unit, e.g. 500ms", textsafe.Quote(s), textsafe.Quote(threshold))
	}
	slo.Threshold = d
	return slo, nil
}

// String is the SLO in ParseSLO's form.
func (o SLO) String() string {
	stat := "avg"
	if o.Percentile > 0 {
		stat = "p" + strconv.FormatFloat(o.Percentile, 'g', -1, 64)
	}
	if o.Metric != MetricLatency {
		stat = o.Metric + "-" + stat
	}
	return stat + ":" + o.Threshold.String()
}

// distribution is the step's distribution an SLO is on, and whether it
// was measured from the scheduled send: the request latency (from the
// schedule in open loop), or a decoupled model's time to first response or
// inter-response latency. A step without the model's streaming
// measurements has an empty distribution for TTFT and ITL.
func distribution(st record.Step, metric string) (stats.Latency, bool) {
	switch metric {
	case MetricTTFT, MetricITL:
		sc := st.Client.Streaming
		if sc == nil {
			return stats.Latency{}, false
		}
		if metric == MetricTTFT {
			return sc.TTFT, false
		}
		return sc.ITL, false
	}
	if s := st.Client.Scheduled; s != nil && s.Count > 0 {
		return *s, true
	}
	return st.Client.Latency, false
}

// pick is the statistic an SLO reads from a distribution: the percentile
// asked for, rounded up to one the summary keeps, or the average.
func pick(l stats.Latency, percentile float64) time.Duration {
	switch p := percentile; {
	case p == 0:
		return l.Mean
	case p <= 50:
		return l.P50
	case p <= 90:
		return l.P90
	case p <= 95:
		return l.P95
	case p <= 99:
		return l.P99
	}
	return l.P999
}

// durationOverflows reports whether s is a well-formed duration too long
// for time.Duration (ParseDuration says only "invalid duration").
func durationOverflows(s string) bool {
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i <= 0 {
		return false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return false
	}
	unit := map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[s[i:]]
	return unit > 0 && v*unit > float64(math.MaxInt64)
}
