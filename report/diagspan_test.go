package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// TestStepLineNamesItsDiagnosisSpan: a step's headless line says that its
// finding was read at the step's end.
func TestStepLineNamesItsDiagnosisSpan(t *testing.T) {
	b0 := NewStepBuilder(stats.Load{})
	for _, s := range steppedRun(t).Snapshots[:2] {
		b0.Add(s)
	}
	st := b0.Step()
	st.Diagnosis = []stats.Finding{{Verdict: stats.Failing, Message: "errors: 5% of requests fail"}}
	var b bytes.Buffer
	WriteStepLine(&b, 1, 2, time.Second, st)
	if line := b.String(); !strings.Contains(line, "⚠ errors: 5% of requests fail · at the step's end") {
		t.Errorf("step line %q does not name its finding's span", line)
	}
}

// TestDiagnosisSpansWords: the spans of a run at one level, after a change
// of load, of the last tick's verdicts and of queueing (its ticks with
// server statistics), live and in a summary's words.
func TestDiagnosisSpansWords(t *testing.T) {
	tick := func(seq, conc int, withServer bool) stats.Snapshot {
		s := stats.Snapshot{Seq: seq, Interval: 500 * time.Millisecond, Load: stats.Load{Mode: load.Concurrency, Concurrency: conc}}
		s.Server = stats.ServerStats{Available: withServer, SuccessCount: 10}
		return s
	}
	var ticks []stats.Snapshot
	for i := 1; i <= 8; i++ {
		ticks = append(ticks, tick(i, 4, i != 7))
	}
	fs := []stats.Finding{{Verdict: stats.Stalled}, {Verdict: stats.Failing}, {Verdict: stats.Queueing, Message: "server queueing: ..."}}
	got := DiagnosisSpans(fs, ticks, false)
	// 5 ticks of 500 ms; queueing skips tick 7, which has no statistics.
	if want := []string{"", "last 2.5 s", "last 2.5 s"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("live spans %q, want %q", got, want)
	}
	ticks[6].Load.Concurrency, ticks[7].Load.Concurrency = 8, 8
	got = DiagnosisSpans(fs, ticks, true)
	if want := []string{"last tick of load", "last 1 s of load, at its last level", "last 2.5 s of load"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("summary spans %q, want %q", got, want)
	}
}
