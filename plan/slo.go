package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSLO reads an SLO as the command line gives it: "p99:100ms" (a
// percentile of the latency), "avg:20ms" (the average), "p99.9:1s".
func ParseSLO(s string) (SLO, error) {
	what, limit, ok := strings.Cut(s, ":")
	if !ok {
		return SLO{}, fmt.Errorf("bad SLO %q: use pNN:DURATION (p99:100ms) or avg:DURATION", s)
	}
	d, err := time.ParseDuration(limit)
	if err != nil || d <= 0 {
		return SLO{}, fmt.Errorf("bad SLO %q: %q is not a positive duration such as 100ms", s, limit)
	}
	slo := SLO{Threshold: d}
	switch {
	case what == "avg" || what == "mean":
	case strings.HasPrefix(what, "p"):
		p, err := strconv.ParseFloat(what[1:], 64)
		if err != nil || !(p > 0 && p < 100) {
			return SLO{}, fmt.Errorf("bad SLO %q: %q is not a percentile between p0 and p100 (p50, p90, p95, p99, p99.9)", s, what)
		}
		slo.Percentile = p
	default:
		return SLO{}, fmt.Errorf("bad SLO %q: %q is neither avg nor a percentile such as p99", s, what)
	}
	return slo, nil
}

// String writes the SLO as ParseSLO reads it.
func (s SLO) String() string {
	what := "avg"
	if s.Percentile > 0 {
		what = "p" + strconv.FormatFloat(s.Percentile, 'g', -1, 64)
	}
	return what + ":" + s.Threshold.String()
}
