package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// lateLLMRun is an open loop's run of two steps made by the real
// aggregator: at 2/s every request is sent on time (time to first
// response 20 ms from the send and from the schedule); at 4/s every
// request is sent 40 ms late (20 ms from the send, 60 ms from the
// schedule; its latency 70 ms from the send, 110 ms from the schedule).
func lateLLMRun(t *testing.T) *record.Run {
	t.Helper()
	a := stats.NewAggregator(time.Second, 10*time.Second)
	a.SetDecoupled()
	var snaps []stats.Snapshot
	for i, tc := range []struct {
		rate float64
		late time.Duration
	}{{2, 0}, {2, 0}, {4, 40 * msec}, {4, 40 * msec}} {
		var rs []driver.Result
		for range int(tc.rate) {
			r := llmResult(20*msec, 25*msec, 3)
			r.Sent = tc.late
			r.Timing.First += r.Sent
			r.Done += r.Sent
			rs = append(rs, r)
		}
		a.Add(rs)
		s := stats.Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second,
			Load: stats.Load{Mode: load.Rate, Rate: tc.rate}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	return &record.Run{Header: testHeader(), Snapshots: snaps}
}

// TestStepTablesTTFTFromSchedule: in open loop every step table (text,
// Markdown, HTML) gives the time to first response from the schedule, as
// it gives the latency; the CSV keeps perf_analyzer's columns from the
// send and adds tritontop's from the schedule; compare reads it from the
// schedule too.
func TestStepTablesTTFTFromSchedule(t *testing.T) {
	run := lateLLMRun(t)
	sum := SummarizeRun(run)
	if len(sum.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(sum.Steps))
	}
	late := sum.Steps[1].Client.Streaming
	if late.TTFTScheduled == nil || late.TTFTScheduled.P50 != 60*msec || late.TTFT.P50 != 20*msec {
		t.Fatalf("step 2 streaming %+v: want TTFT 20 ms from the send, 60 ms from the schedule", late)
	}

	var text bytes.Buffer
	if err := WriteText(&text, sum); err != nil {
		t.Fatal(err)
	}
	row := lineWith(text.String(), "  2     rate 4/s")
	if f := strings.Fields(row); len(f) < 12 || f[9] != "60.0" || f[10] != "60.0" {
		t.Errorf("text step row %q: want ttft p50 and p99 60.0 (from the schedule)", row)
	}
	if !strings.Contains(text.String(), "(latency and ttft in ms, from the schedule in open loop;") {
		t.Errorf("the step table's title does not say where ttft is from:\n%s", text.String())
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, sum); err != nil {
		t.Fatal(err)
	}
	if row := lineWith(md.String(), "| rate 4/s"); !strings.Contains(row, "| 60.0 | 60.0 |") {
		t.Errorf("Markdown step row %q: want TTFT 60.0 from the schedule", row)
	}

	var csv bytes.Buffer
	if err := WriteCSV(&csv, run); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	head, cells := strings.Split(lines[0], ","), strings.Split(lines[2], ",")
	if len(head) != len(cells) {
		t.Fatalf("CSV row has %d cells, its header %d", len(cells), len(head))
	}
	cell := func(name string) string {
		for i, h := range head {
			if h == name {
				return cells[i]
			}
		}
		t.Fatalf("CSV has no column %q: %s", name, lines[0])
		return ""
	}
	for name, want := range map[string]string{
		"p50 Time To First Response":               "20000",
		"p50 Time To First Response From Schedule": "60000",
		"Avg Time To First Response From Schedule": "60000",
		"p99 Time To First Response From Schedule": "60",
		"Avg latency":                          "70000",
		"Avg Latency From Schedule":            "110000",
		"Output Token Throughput (tokens/sec)": "12",
		"p50 Inter-Response Latency":           "25",
	} {
		if got := cell(name); !strings.HasPrefix(got, want) {
			t.Errorf("CSV %s = %s, want %s…", name, got, want)
		}
	}

	var html bytes.Buffer
	if err := WriteHTML(&html, []HTMLRun{{Label: "late", Run: run}}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "time to first response from the schedule: avg 60.00, p50 60.00") {
		t.Errorf("the HTML step table does not give TTFT from the schedule")
	}

	c, err := Compare(SummarizeRun(lateLLMRun(t)), sum, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Steps[1].Metrics {
		if m.Metric == "ttft_p50" && (m.A == nil || *m.A != 60) {
			t.Errorf("compare's TTFT p50 at %s: %+v, want 60 ms from the schedule", c.Steps[1].Level, m)
		}
	}
}
