package session

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/plan"
)

// maxQuoted bounds, in bytes, a value from a file quoted in an error
// message: a 10 MB line is cut, with its length said.
const maxQuoted = 240

// maxStartAhead bounds how far ahead --start-at may be: workers are
// started together for a test about to run, not scheduled for next year.
const maxStartAhead = 24 * time.Hour

// minRate is the least request rate, in requests per second, of
// --request-rate, a --request-rate-range level or a model's rate: one
// request every 1000 s, already longer than any measurement window.
const minRate = 1e-3

// wholeRange refuses a concurrency range with a fractional START, END or
// STEP, which would otherwise be truncated to levels the user did not ask
// for.
func wholeRange(flag, text string, vals ...float64) error {
	for _, v := range vals {
		if v != math.Trunc(v) {
			return fmt.Errorf("bad %s %s: %v is not a whole number; concurrency levels are counts of requests", flag, textsafe.Quote(text), v)
		}
	}
	return nil
}

// checkSLOsAgree refuses two --slo on one statistic with different
// thresholds (--slo p99:10ms --slo p99:20ms): one of them would be
// meaningless, and which the user meant cannot be told.
func checkSLOsAgree(slos []string) error {
	seen := map[string]string{}
	for _, text := range slos {
		stat, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(text)), ":")
		if prev, ok := seen[stat]; ok && prev != text {
			return fmt.Errorf("--slo %s and --slo %s both bound %s: give one threshold per statistic", textsafe.Bound(prev), textsafe.Bound(text), textsafe.Bound(stat))
		}
		seen[stat] = text
	}
	return nil
}

// optionOnce refuses a -m MODEL@... option given twice
// (simple@concurrency=2,concurrency=3): the run would take one silently.
// Aliases count as one option.
func optionOnce(given map[string]bool, k string) error {
	canon := map[string]string{"c": "concurrency", "request-rate": "rate", "poisson": "distribution", "constant": "distribution"}[k]
	if canon == "" {
		canon = k
	}
	if canon == "" {
		return nil
	}
	if given[canon] {
		return fmt.Errorf("%s given twice", canon)
	}
	given[canon] = true
	return nil
}

// loadFileHasOneDocument refuses a --load-file with a second YAML document
// (after ---), whose models the run would otherwise leave out silently.
func loadFileHasOneDocument(dec *yaml.Decoder) error {
	var extra any
	if err := dec.Decode(&extra); errors.Is(err, io.EOF) {
		return nil
	}
	return errors.New("holds a second YAML document (after ---): list every model under the first one's models:")
}

// quotable cuts the string arguments of an error message to maxQuoted
// bytes each (textsafe.Excerpt), so that a huge value from a file is
// quoted as an excerpt with its length.
func quotable(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		if s, ok := v.(string); ok {
			v = textsafe.Excerpt(s, maxQuoted)
		}
		out[i] = v
	}
	return out
}

// checkSLOsForModel refuses, right after connecting and before any load,
// a plan's time-to-first-token or inter-token SLO on a model that is not
// decoupled: it sends one response per request, so the SLO could never be
// measured, and the plan would run its probes first.
func checkSLOsForModel(f *Config, t *target) error {
	if f.Plan == nil || t.config == nil || t.decoupled() {
		return nil
	}
	for _, slo := range append([]plan.SLO{f.Plan.parsed}, f.Plan.more...) {
		if slo.Metric == plan.MetricTTFT || slo.Metric == plan.MetricITL {
			return fmt.Errorf("--slo %s needs a decoupled (streaming) model, and %s is not: give an SLO on its request latency, such as p99:100ms", slo, textsafe.Quote(f.Model))
		}
	}
	return nil
}
