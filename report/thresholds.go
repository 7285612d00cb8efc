package report

import (
	"fmt"
	"strings"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/record"
)

// writeThresholds lists a run's --threshold checks, each with its value
// and verdict, and the count that failed.
func writeThresholds(b *strings.Builder, rs []record.ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	failed := len(gate.Failed(rs))
	fmt.Fprintf(b, "Thresholds: %d of %d passed\n", len(rs)-failed, len(rs))
	for _, r := range rs {
		mark := "  ok  "
		if !r.Pass {
			mark = "  FAIL"
		}
		fmt.Fprintf(b, "%s %s\n", mark, thresholdLine(r))
	}
}

// thresholdLine is one check: "p99<100ms over run: 12.31 ms (limit 100 ms)".
func thresholdLine(r record.ThresholdResult) string {
	return gate.Describe(r)
}

// mdThresholds is the checks as a Markdown table, for a CI job's summary
// ($GITHUB_STEP_SUMMARY).
func mdThresholds(b *strings.Builder, rs []record.ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	failed := len(gate.Failed(rs))
	fmt.Fprintf(b, "\n**Thresholds: %d of %d passed**\n\n", len(rs)-failed, len(rs))
	b.WriteString("| threshold | over | value | limit | result |\n|---|---|---:|---:|---|\n")
	for _, r := range rs {
		value := "not measured (" + r.Reason + ")"
		if r.Value != nil {
			value = gate.WithUnit(*r.Value, r.Unit)
		}
		verdict := "pass"
		if !r.Pass {
			verdict = "**FAIL**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdText(r.Threshold), mdText(r.Scope), mdText(value),
			mdText(gate.WithUnit(r.Limit, r.Unit)), verdict)
	}
}
