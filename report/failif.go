package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// FailIf is one compare --fail-if bound: METRIC:+N% fails when the metric
// grew by more than N% from A to B, METRIC:-N% when it fell by more than
// N%, in either case only when the change is significant (Change.Noise):
// a CI job fails on a regression, not on a busy runner. With BeyondNoise
// the change must also be past the bound by more than the noise
// (Change.PastBound), which fails on fewer changes near the bound.
type FailIf struct {
	// Expr is the bound as given ("p99:+10%").
	Expr string `json:"expr"`
	// Metric is the Change.Metric it reads ("p99_latency").
	Metric string `json:"metric"`
	// Percent is the bound, signed: +10 fails above +10%, −5 below −5%.
	Percent float64 `json:"percent"`
	// BeyondNoise asks for the change to be past the bound by more than
	// the noise, not only past it and significant.
	BeyondNoise bool `json:"beyond_noise,omitempty"`
}

// failIfNames are the short names --fail-if takes for the compared
// metrics, besides their JSON names.
var failIfNames = map[string]string{
	"p50": "p50_latency", "p99": "p99_latency", "throughput": "throughput", "queue": "queue",
	"compute": "compute", "batch": "batch_size", "gpu": "gpu_utilization", "cpu": "client_cpu_per_request",
	"ttft-p50": "ttft_p50", "ttft-p99": "ttft_p99", "itl-p50": "itl_p50", "itl-p99": "itl_p99",
	"responses": "responses_per_s", "sequences": "sequences_per_s",
	"sequence-p50": "sequence_latency_p50", "sequence-p99": "sequence_latency_p99",
}

// failIfMetricList names the metrics for an error.
const failIfMetricList = "p50, p99, throughput, queue, compute, batch, gpu, cpu, ttft-p50, ttft-p99, itl-p50, itl-p99, responses, sequences, sequence-p50, sequence-p99"

// ParseFailIf reads METRIC:+N% or METRIC:-N%, refusing a malformed bound
// with an error naming the bad part.
func ParseFailIf(expr string) (FailIf, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("bad --fail-if %s: %s", textsafe.Quote(expr), fmt.Sprintf(format, a...))
	}
	name, bound, ok := strings.Cut(strings.TrimSpace(expr), ":")
	if !ok {
		return FailIf{}, bad("write METRIC:+N%% or METRIC:-N%%, e.g. p99:+10%% or throughput:-5%%")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	metric, known := failIfNames[name]
	if !known {
		for _, m := range metricsFor(true, true) {
			if m.metric == name {
				metric, known = name, true
			}
		}
	}
	if !known {
		return FailIf{}, bad("unknown metric %q: use one of %s", name, failIfMetricList)
	}
	bound = strings.TrimSpace(bound)
	if bound == "" || (bound[0] != '+' && bound[0] != '-') {
		return FailIf{}, bad("%q has no direction: +N%% fails when the metric grows by more than N%%, -N%% when it falls", bound)
	}
	if !strings.HasSuffix(bound, "%") {
		return FailIf{}, bad("%q is not a percentage: write %s%%", bound, bound)
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(bound, "%"), 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p == 0 {
		return FailIf{}, bad("%q is not a non-zero percentage", bound)
	}
	return FailIf{Expr: strings.TrimSpace(expr), Metric: metric, Percent: p}, nil
}

// FailIfResult is one bound checked at one level of a comparison.
type FailIfResult struct {
	FailIf
	// Level is the level it was checked at ("whole run", "concurrency 8").
	Level  string   `json:"level"`
	Change *float64 `json:"change_percent"`
	// Past is set when the change is past the bound; Significant when the
	// change is more than noise; PastBeyondNoise when it is past the bound
	// by more than the noise. The bound fails when the first two are (and
	// the third, with FailIf.BeyondNoise).
	Past            bool   `json:"past_bound"`
	Significant     bool   `json:"significant"`
	PastBeyondNoise bool   `json:"past_bound_beyond_noise"`
	Test            string `json:"test,omitempty"`
	Failed          bool   `json:"failed"`
	// Note says why a bound could not be checked or did not fail.
	Note string `json:"note,omitempty"`
}

// CheckFailIf checks each bound at every level of c (its matched levels
// when the runs had several, and the whole run), recording the results in
// c.FailIf. It returns those that failed.
func (c *Comparison) CheckFailIf(bounds []FailIf) []FailIfResult {
	var levels []LevelComparison
	if len(c.Steps) > 1 {
		levels = append(levels, c.Steps...)
	}
	levels = append(levels, c.Overall)
	var failed []FailIfResult
	for _, f := range bounds {
		for _, lc := range levels {
			r := FailIfResult{FailIf: f, Level: lc.Level}
			var ch *Change
			for i := range lc.Metrics {
				if lc.Metrics[i].Metric == f.Metric {
					ch = &lc.Metrics[i]
				}
			}
			switch {
			case ch == nil:
				r.Note = "not compared: the runs did not both measure it"
			case ch.Percent == nil:
				r.Note = "no change to compute: a side did not measure it"
			default:
				r.Change = ch.Percent
				r.Past = f.Percent > 0 && *ch.Percent > f.Percent || f.Percent < 0 && *ch.Percent < f.Percent
				if ch.Noise != nil {
					r.Significant, r.Test = ch.Noise.Significant, ch.Noise.Test
				} else {
					r.Note = "untested: a side had too few samples for a test of its noise"
				}
				r.PastBeyondNoise = r.Past && r.Significant && ch.PastBound(f.Percent, c.alpha())
				r.Failed = r.Past && r.Significant && (r.PastBeyondNoise || !f.BeyondNoise)
				switch {
				case r.Note != "":
				case r.Past && !r.Significant:
					r.Note = "past the bound, but within noise"
				case r.Past && !r.PastBeyondNoise && f.BeyondNoise:
					r.Note = "significant, but the noise reaches inside the bound"
				}
			}
			c.FailIf = append(c.FailIf, r)
			if r.Failed {
				failed = append(failed, r)
			}
		}
	}
	return failed
}

// Describe is the result in words: "p99:+10% at whole run: +23.4%,
// significant (mann-whitney): FAIL".
func (r FailIfResult) Describe() string {
	if r.Change == nil {
		return fmt.Sprintf("%s at %s: %s", r.Expr, r.Level, r.Note)
	}
	verdict := "pass"
	if r.Failed {
		verdict = "FAIL"
	}
	noise := "within noise"
	if r.Significant {
		noise = "significant"
	}
	if r.Test == "" {
		noise = "untested"
	} else {
		noise += " (" + r.Test + ")"
	}
	if r.Past && r.Significant && !r.PastBeyondNoise && r.BeyondNoise {
		noise += ", the noise reaches inside the bound"
	}
	return fmt.Sprintf("%s at %s: %s, %s: %s", r.Expr, r.Level, signedPercent(*r.Change), noise, verdict)
}

// writeFailIf lists the bounds' results after a comparison's table.
func (c *Comparison) writeFailIf(b *strings.Builder, markdown bool) {
	if len(c.FailIf) == 0 {
		return
	}
	n := 0
	for _, r := range c.FailIf {
		if r.Failed {
			n++
		}
	}
	if markdown {
		fmt.Fprintf(b, "\n**--fail-if: %d of %d failed**\n\n", n, len(c.FailIf))
		for _, r := range c.FailIf {
			fmt.Fprintf(b, "- %s\n", mdText(r.Describe()))
		}
		return
	}
	fmt.Fprintf(b, "\n--fail-if: %d of %d failed\n", n, len(c.FailIf))
	for _, r := range c.FailIf {
		fmt.Fprintf(b, "  %s\n", r.Describe())
	}
}
