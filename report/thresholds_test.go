package report

import (
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// TestSummaryListsThresholds: the text and Markdown summaries list every
// check with its value, limit and verdict; a check without a value says
// why.
func TestSummaryListsThresholds(t *testing.T) {
	v, w := 12.5, 0.4
	sum := record.Summary{Model: "m", Thresholds: []record.ThresholdResult{
		{Threshold: "p99<100ms", Scope: "run", Value: &v, Limit: 100, Unit: "ms", Pass: true},
		{Threshold: "errors<0.1%", Scope: "model m", Value: &w, Limit: 0.1, Unit: "%"},
		{Threshold: "ttft-p99<1s", Scope: "run", Limit: 1000, Unit: "ms", Reason: "not a decoupled model"},
	}}
	var txt, md strings.Builder
	if err := WriteText(&txt, sum); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Thresholds: 1 of 3 passed\n",
		"  ok   p99<100ms over run: 12.50 ms (limit 100 ms)\n",
		"  FAIL errors<0.1% over model m: 0.40% (limit 0.10%)\n",
		"  FAIL ttft-p99<1s over run: not measured (not a decoupled model)\n",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	for _, want := range []string{
		"**Thresholds: 1 of 3 passed**",
		"| p99&lt;100ms | run | 12.50 ms | 100 ms | pass |",
		"| errors&lt;0.1% | model m | 0.40% | 0.10% | **FAIL** |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// TestRepeatSpread: each figure's median, least, greatest and spread over
// the repeats, and the summary's table of them.
func TestRepeatSpread(t *testing.T) {
	run := repeatedRun(4, func(i int) float64 { return []float64{0, 100, 110, 90, 120}[i] }, func(int) float64 { return 10 })
	rs := Repeats(run)
	fs := RepeatSpread(rs)
	var tput *record.RepeatFigure
	for i := range fs {
		if fs[i].Figure == "throughput" {
			tput = &fs[i]
		}
	}
	if tput == nil || len(tput.Values) != 4 || tput.Median != 105 || tput.Min != 90 || tput.Max != 120 ||
		tput.SpreadPercent < 28.57 || tput.SpreadPercent > 28.58 {
		t.Fatalf("throughput over repeats: %+v", tput)
	}
	var txt strings.Builder
	if err := WriteText(&txt, record.Summary{Repeats: fs}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "Over 4 repeats:") || !strings.Contains(txt.String(), "28.6%") {
		t.Errorf("summary:\n%s", txt.String())
	}
}
