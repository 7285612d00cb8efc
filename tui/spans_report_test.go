package tui

import (
	"slices"
	"testing"

	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// The dashboard's footer and the headless progress line name a finding's
// span in the same words over the same ticks: findingSpans (the footer) and
// report.DiagnosisSpans (the progress line) agree for a run at one level, a
// run whose last level is two ticks old, and for the queueing verdict.
func TestFindingSpansAgreeWithProgressLine(t *testing.T) {
	atOne := spanRun(t)
	changed := spanRun(t)
	for i := len(changed) - 2; i < len(changed); i++ {
		changed[i].Load.Concurrency, changed[i].Load.Step = 8, 1
	}
	queueing := spanRun(t)
	for i := range queueing {
		queueing[i].Server.Queue = 3 * queueing[i].Server.Compute()
	}
	for name, snaps := range map[string][]stats.Snapshot{"one level": atOne, "changed": changed, "queueing": queueing} {
		fs := stats.Diagnose(snaps, stats.DiagnoseOptions{})
		if len(fs) == 0 {
			t.Fatalf("%s: no finding to name", name)
		}
		if name == "queueing" && !slices.ContainsFunc(fs, func(f stats.Finding) bool { return f.Verdict == stats.Queueing }) {
			t.Fatalf("queueing: no queueing finding in %+v", fs)
		}
		tui, line := findingSpans(fs, snaps), report.DiagnosisSpans(fs, snaps, false)
		if !slices.Equal(tui, line) {
			t.Errorf("%s: the dashboard names %q, the progress line %q, for %+v", name, tui, line, fs)
		}
	}
}
