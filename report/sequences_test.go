package report

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// seqTick is one tick of a stateful model's run: its concurrency (as many
// sequences active at its end) and the latencies of the sequences that
// ended in it.
type seqTick struct {
	conc int
	lats []time.Duration
}

// seqRunOf is a stateful model's run of one-second ticks made by the real
// aggregator.
func seqRunOf(t *testing.T, ticks ...seqTick) *record.Run {
	t.Helper()
	a := stats.NewAggregator(time.Second, 10*time.Second)
	var snaps []stats.Snapshot
	for i, tk := range ticks {
		batch := []driver.Result{{Done: msec, Inferences: 1}}
		for _, l := range tk.lats {
			batch = append(batch, driver.Result{Done: 2 * msec, Inferences: 1, Timing: &driver.ResponseTiming{Sequence: l}})
		}
		a.Add(batch)
		s := stats.Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second,
			Load: stats.Load{Mode: load.Concurrency, Concurrency: tk.conc, InFlight: tk.conc, Sequences: tk.conc}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	return &record.Run{Header: testHeader(), Snapshots: snaps}
}

// seqRun is a stateful model's run at concurrency 4: sequences ending
// after 100 and 300 ms in the first tick, none in the second, one after
// 200 ms in the third.
func seqRun(t *testing.T) *record.Run {
	return seqRunOf(t, seqTick{4, []time.Duration{100 * msec, 300 * msec}}, seqTick{4, nil}, seqTick{4, []time.Duration{200 * msec}})
}

// seqSweep is seqRun's ticks at concurrency 4, 8 and 12: three steps, the
// second ending no sequence.
func seqSweep(t *testing.T) *record.Run {
	return seqRunOf(t, seqTick{4, []time.Duration{100 * msec, 300 * msec}}, seqTick{8, nil}, seqTick{12, []time.Duration{200 * msec}})
}

// TestStepBuilderSequences: a step adds up its ticks' sequences, their
// latency merged exactly from the ticks' histograms.
func TestStepBuilderSequences(t *testing.T) {
	b := NewStepBuilder(stats.Load{})
	for _, s := range seqRun(t).Snapshots {
		b.Add(s)
	}
	st := b.Step()
	sq := st.Client.Sequences
	if st.Approximate || sq == nil {
		t.Fatalf("step = %+v", st)
	}
	if sq.Ended != 3 || sq.EndedPerS != 1 || sq.Latency.Count != 3 || sq.Latency.Min != 100*msec ||
		sq.Latency.Max != 300*msec || sq.Latency.Mean != 200*msec || sq.Latency.P50 < 199*msec || sq.Latency.P50 > 201*msec {
		t.Errorf("step sequences = %+v", sq)
	}
}

// TestWriteTextSequences: the summary of a stateful model's run counts its
// sequences and gives their latency in perf_analyzer's words.
func TestWriteTextSequences(t *testing.T) {
	run := seqRun(t)
	var b bytes.Buffer
	if err := WriteText(&b, Summarize(run.Header, run.Snapshots)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Sequence count: 3 (1 seq/sec)\n",
		"Avg sequence latency: 200000 usec\n",
		"p50 sequence latency: 200",
		"p99 sequence latency: 300",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	// Other models' summaries have no such lines.
	var other bytes.Buffer
	if err := WriteText(&other, Summarize(levelRun(t).Header, levelRun(t).Snapshots)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(other.String(), "equence") {
		t.Errorf("a run without sequences mentions them:\n%s", other.String())
	}
}

// TestMarkdownSequences: the Markdown summary of a stateful model's run
// has the text summary's sequence count, rate and latency, and a sweep's
// step table their columns, in the text table's cells.
func TestMarkdownSequences(t *testing.T) {
	sum := SummarizeRun(seqRun(t))
	sq := sum.Client.Sequences
	// 3 sequences in 3 s: 100, 200 and 300 ms.
	if sq == nil || sq.Ended != 3 || sq.EndedPerS != 1 || msCell(sq.Latency.Mean) != "200" ||
		msCell(sq.Latency.P50) != "200" || msCell(sq.Latency.P99) != "300" {
		t.Fatalf("seqRun's sequences: %+v", sq)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Sequences ended | 3 (1 seq/s) |\n",
		"| Sequence latency avg / p50 / p90 / p95 / p99 | 200 / 200 / 300 / 300 / 300 ms |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}

	// A sweep: step 1 ends 2 sequences in 1 s (100 and 300 ms), step 2
	// none, step 3 one (200 ms).
	sw := SummarizeRun(seqSweep(t))
	var swMD, swText bytes.Buffer
	if err := WriteMarkdown(&swMD, sw); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&swText, sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(swMD.String(), "| p99 ms | seq/s | seq p50 ms | seq p99 ms | queue ms |") ||
		!strings.Contains(swText.String(), "p99  seq/s  seq p50  seq p99  queue") {
		t.Errorf("a sweep's step tables lack the sequence columns after the latency:\n%s\n%s", swMD.String(), swText.String())
	}
	cols := stepColumnsOf(sw.Steps)
	want := [][]string{{"2.0", "100", "300"}, {"0.0", "-", "-"}, {"1.0", "200", "200"}}
	if len(sw.Steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(sw.Steps), len(want))
	}
	for i, st := range sw.Steps {
		row := cols.row(i, st)
		if got := row[7:10]; !slices.Equal(got, want[i]) {
			t.Errorf("step %d: sequence cells %q, want %q", i+1, got, want[i])
		}
		if !strings.Contains(swMD.String(), "| "+strings.Join(row, " | ")+" |") {
			t.Errorf("Markdown lacks step %d's row %q", i+1, row)
		}
		if !regexp.MustCompile(strings.Join(row[:10], `\s+`)).MatchString(swText.String()) {
			t.Errorf("the text step table lacks step %d's cells %q", i+1, row[:10])
		}
	}

	// Other models' summaries have none of it.
	for _, run := range []*record.Run{levelRun(t), steppedRun(t)} {
		var other bytes.Buffer
		if err := WriteMarkdown(&other, SummarizeRun(run)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(other.String(), "equence") || strings.Contains(other.String(), "seq") {
			t.Errorf("a run without sequences mentions them:\n%s", other.String())
		}
	}
}

// TestHTMLOfSequences: the report of a stateful model's sweep charts the
// sequences active and their latency (p50 and p99) over time, with the
// load changes and hover titles, and adds the sequence columns to the step
// table and the sequences to the run's header; a run without sequences
// has none of it, also beside one with them.
func TestHTMLOfSequences(t *testing.T) {
	page := renderHTML(t, HTMLRun{Label: "seq", File: "seq.jsonl", Run: seqSweep(t)})
	selfContained(t, page)
	charts := readCharts(t, page)
	active, latency := charts["sequences"], charts["sequence-latency"]
	checkDrawn(t, active)
	checkDrawn(t, latency)
	if !slices.Equal(active.legend, []string{"active"}) || !slices.Equal(latency.legend, []string{"p50", "p99"}) {
		t.Errorf("legends %q and %q", active.legend, latency.legend)
	}
	for _, c := range []htmlChartView{active, latency} {
		if !slices.Equal(c.markers, []string{"c=4", "c=8", "c=12"}) {
			t.Errorf("chart %s: markers %q", c.id, c.markers)
		}
	}
	// Ticks 1 and 3 ended sequences, tick 2 none: two dots, no line
	// through the tick without any.
	for _, name := range latency.legend {
		if d := latency.paths[name]; strings.Count(d, "M") != 2 {
			t.Errorf("sequence latency %s: path %q, want two separate points", name, d)
		}
	}
	for _, want := range []string{
		"<title>1s · active 4</title>", "<title>3s · active 12</title>",
		"<title>1s · p99 300 ms</title>", "<title>3s · p50 200 ms</title>",
		"<th>p99 ms</th><th>seq/s</th><th>seq p50 ms</th><th>seq p99 ms</th><th>queue ms</th>",
		`<td title="2 sequences ended in 1s">2.0</td>`,
		`<td title="no sequence ended in 1s">0.0</td><td>-</td><td>-</td>`,
		`">100.03</td><td title="sequence latency: avg 200.00, p50 100.03, p90 300.00, p95 300.00, p99 300.00 ms over 2 sequences">300.00</td>`,
		"<dt>sequences</dt><dd>3 ended, 1.0 per second; sequence latency avg 200.00, p50 200.06",
		"seq/s is sequences ended per second",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	plain := renderHTML(t, HTMLRun{Label: "plain", Run: steppedRun(t)})
	pc := readCharts(t, plain)
	if _, ok := pc["sequences"]; ok {
		t.Error("a run without sequences has an active sequences chart")
	}
	if _, ok := pc["sequence-latency"]; ok {
		t.Error("a run without sequences has a sequence latency chart")
	}
	if strings.Contains(plain, "seq/s") || strings.Contains(plain, "equence") {
		t.Error("the page of a run without sequences mentions them")
	}

	// Beside a run without sequences, only the stateful run's series.
	both := readCharts(t, renderHTML(t, HTMLRun{Label: "seq", Run: seqRun(t)}, HTMLRun{Label: "plain", Run: levelRun(t)}))
	if got := both["sequences"].legend; !slices.Equal(got, []string{"seq active"}) {
		t.Errorf("two runs: active sequences legend %q", got)
	}
	if got := both["sequence-latency"].legend; !slices.Equal(got, []string{"seq p50", "seq p99"}) {
		t.Errorf("two runs: sequence latency legend %q", got)
	}
}

// TestCompareSequences sets a stateful model's run beside one whose
// sequences took twice as long, a third more of them ending: the
// sequences per second and the sequence latency's p50 and p99, level by
// level and overall, in text, Markdown and JSON.
func TestCompareSequences(t *testing.T) {
	a := SummarizeRun(seqRun(t))
	b := SummarizeRun(seqRunOf(t, seqTick{4, []time.Duration{200 * msec, 600 * msec}}, seqTick{4, []time.Duration{400 * msec}},
		seqTick{4, []time.Duration{400 * msec}}))
	c, err := Compare(a, b, "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	levels := c.levels()
	if len(levels) != 2 {
		t.Fatalf("levels %+v, want concurrency 4 and the whole run", levels)
	}
	for _, lc := range levels {
		var names []string
		got := map[string]Change{}
		for _, m := range lc.Metrics {
			names = append(names, m.Metric)
			got[m.Metric] = m
		}
		if i := slices.Index(names, "sequences_per_s"); i < 0 || names[i-1] != "p99_latency" ||
			names[i+1] != "sequence_latency_p50" || names[i+2] != "sequence_latency_p99" {
			t.Fatalf("%s: metrics %q, want the sequences' after p99", lc.Level, names)
		}
		// 3 then 4 sequences in 3 s; p50 200 → 400 ms, p99 300 → 600 ms.
		for metric, w := range map[string]struct{ a, b, pct, tol float64 }{
			"sequences_per_s":      {1, 4.0 / 3, 100.0 / 3, 1e-9},
			"sequence_latency_p50": {200, 400, 100, 0.5},
			"sequence_latency_p99": {300, 600, 100, 1e-9},
		} {
			m := got[metric]
			if m.A == nil || m.B == nil || m.Percent == nil ||
				math.Abs(*m.A-w.a) > w.a*0.001 || math.Abs(*m.B-w.b) > w.b*0.001 || math.Abs(*m.Percent-w.pct) > w.tol {
				t.Errorf("%s %s = %s", lc.Level, metric, changeString(m))
			}
		}
	}

	var txt, md, js bytes.Buffer
	if err := c.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`sequence p99 \(ms\)\s+300\.00\s+600\.00\s+\+100\.0%\s+untested\n`).FindAllString(txt.String(), -1)); n != 2 {
		t.Errorf("text has %d sequence p99 rows, want 2 (the level and the whole run):\n%s", n, txt.String())
	}
	if n := len(regexp.MustCompile(`sequences \(seq/s\)\s+1\.0\s+1\.3\s+\+33\.3%\s+untested\n`).FindAllString(txt.String(), -1)); n != 2 {
		t.Errorf("text has %d sequences per second rows, want 2:\n%s", n, txt.String())
	}
	for _, want := range []string{"|  | sequences (seq/s) | 1.0 | 1.3 | +33.3% | untested |\n", "|  | sequence p99 (ms) | 300.00 | 600.00 | +100.0% | untested |\n"} {
		if strings.Count(md.String(), want) != 2 {
			t.Errorf("Markdown lacks two rows %q:\n%s", want, md.String())
		}
	}
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range back.Overall.Metrics {
		if m.Metric == "sequence_latency_p99" {
			found = m.Percent != nil && math.Abs(*m.Percent-100) < 1e-9 && *m.A == 300 && *m.B == 600
		}
	}
	if !found {
		t.Errorf("JSON has no sequence_latency_p99 of 300 → 600 ms (+100%%):\n%s", js.String())
	}

	// Against a run without sequences, no sequence rows.
	other, err := Compare(a, SummarizeRun(levelRun(t)), "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	var otherTxt bytes.Buffer
	if err := other.WriteText(&otherTxt); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(otherTxt.String(), "sequence") {
		t.Errorf("a comparison with a run without sequences has sequence rows:\n%s", otherTxt.String())
	}
}

func changeString(m Change) string {
	f := func(v *float64) string {
		if v == nil {
			return "nil"
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	return f(m.A) + " → " + f(m.B) + " (" + f(m.Percent) + "%)"
}

// TestWriteCSVSequences: with CSVOptions.Verbose a stateful model's sweep
// gets the sequence columns at the end of each row; without it the CSV is
// perf_analyzer's, as it is for other models either way.
func TestWriteCSVSequences(t *testing.T) {
	sw := SummarizeRun(seqSweep(t))
	var b bytes.Buffer
	if err := WriteCSVSteps(&b, sw.Steps, CSVOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	wantHeader := csvHeader + ",Sequence Count,Sequences/Second,Avg Sequence Latency,p50 Sequence Latency," +
		"p90 Sequence Latency,p95 Sequence Latency,p99 Sequence Latency"
	if len(lines) != 4 || lines[0] != wantHeader {
		t.Fatalf("CSV\n%s\nwant the header\n%s", b.String(), wantHeader)
	}
	cols := strings.Split(lines[0], ",")
	// The p50 of 100 and 300 ms, as the histogram gives it.
	p50 := usec(sw.Steps[0].Client.Sequences.Latency.P50)
	if p50 < 100000 || p50 > 100100 {
		t.Fatalf("step 1's p50 sequence latency %d µs, want 100 ms", p50)
	}
	for i, want := range []string{
		// Step 1: 2 sequences in 1 s, 100 and 300 ms.
		"4,2,2,200000," + strconv.FormatInt(p50, 10) + ",300000,300000,300000",
		// Step 2 ended none.
		"8,0,0,,,,,",
		// Step 3: one of 200 ms.
		"12,1,1,200000,200000,200000,200000,200000",
	} {
		row := strings.Split(lines[i+1], ",")
		if len(row) != len(cols) {
			t.Fatalf("row %d has %d cells, the header %d", i+1, len(row), len(cols))
		}
		if got := row[0] + "," + strings.Join(row[len(row)-7:], ","); got != want {
			t.Errorf("row %d: concurrency and sequence cells %s, want %s", i+1, got, want)
		}
	}

	// Without --verbose-csv: perf_analyzer's columns only, the same CSV
	// as WriteCSV's.
	var plain, viaRun bytes.Buffer
	if err := WriteCSVSteps(&plain, sw.Steps, CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&viaRun, seqSweep(t)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Sequence") || !strings.HasPrefix(plain.String(), csvHeader+"\n") || plain.String() != viaRun.String() {
		t.Errorf("CSV without Verbose:\n%s", plain.String())
	}
	// Another model's verbose CSV is perf_analyzer's.
	var other bytes.Buffer
	if err := WriteCSVSteps(&other, SummarizeRun(steppedRun(t)).Steps, CSVOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(other.String(), csvHeader+"\n") {
		t.Errorf("verbose CSV of a run without sequences:\n%s", other.String())
	}
}
