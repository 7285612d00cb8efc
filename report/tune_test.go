package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
)

// tuneFixture is a tune run's record: the baseline, a better
// configuration (the best), one that did not load, one that missed.
func tuneFixture() *record.Tune {
	cfg := func(i, b, d int) record.TuneConfig {
		return record.TuneConfig{Instances: i, MaxBatchSize: b, QueueDelayUS: d, Preferred: "max"}
	}
	trial := func(c record.TuneConfig, conc, step int, x float64, p99 time.Duration, pass bool) record.TuneTrial {
		return record.TuneTrial{Config: c, Concurrency: conc, Step: step, Throughput: x, P99: p99, Latency: p99, Stable: true, Pass: pass,
			Objective: x, Elapsed: 3 * time.Second}
	}
	return &record.Tune{Objective: "throughput", SLOs: []string{"p99:100ms"}, Search: "climb", Best: 1, Baseline: 0, Configurations: 4,
		Grid: record.TuneGrid{Instances: []int{1, 2}, MaxBatchSizes: []int{8, 16, 256}, QueueDelaysUS: []int{100},
			Preferred: []string{"max"}, Concurrencies: []int{32, 64, 128}, Configurations: 6, Points: 18},
		Trials: []record.TuneTrial{
			trial(cfg(1, 8, 100), 32, 0, 1200, 40*time.Millisecond, true),
			trial(cfg(1, 16, 100), 64, 1, 2100, 70*time.Millisecond, true),
			{Config: cfg(1, 256, 100), Concurrency: 64, Step: -1, LoadError: "load failed for model 'm': version 1 is at UNAVAILABLE state"},
			trial(cfg(2, 16, 100), 128, 2, 2300, 180*time.Millisecond, false),
		},
		Frontier: []int{0, 1, 3}, Stopped: "converged: no neighbor of the best configuration did better", Elapsed: 9 * time.Second,
		BestConfig: "name: \"m\"\nmax_batch_size: 16\n", Output: "config.pbtxt", Restored: true}
}

// TestWriteTune: the text names the best against the original, the
// share of the grid measured, every trial (a refused one with its error)
// and the frontier.
func TestWriteTune(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteTune(&b, tuneFixture())
	out := b.String()
	for _, want := range []string{
		"4 trials over 4 configurations (22.2% of the grid's 18 points)",
		"best:     1 inst · batch 16 · delay 100µs at concurrency 64: 2100.0 infer/s, p99 70.00 ms",
		"original: 1 inst · batch 8 · delay 100µs at concurrency 32: 1200.0 infer/s",
		"config.pbtxt: config.pbtxt", "the original configuration was loaded back",
		"not loaded: load failed for model 'm'", "  miss", "frontier",
		"p99  180.00 ms       2300.0 infer/s  2 inst · batch 16 · delay 100µs at concurrency 128  (misses the SLO)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, " *  2  1 inst · batch 16") {
		t.Errorf("the best trial is not marked:\n%s", out)
	}
}

// TestHTMLOfTune: a tune run's report has the tune section: the search in
// words, the frontier chart (the trials as points, the frontier drawn, the
// best ringed, the SLO line), the trials table and the config.pbtxt.
func TestHTMLOfTune(t *testing.T) {
	t.Parallel()
	run := frozenRun(t, "sweep")
	run.Summary.Tune = tuneFixture()
	page := renderHTML(t, HTMLRun{Label: "tune", File: "tune.jsonl", Run: run})
	selfContained(t, page)
	c, ok := readCharts(t, page)["tune-1"]
	if !ok {
		t.Fatal("no tune chart")
	}
	if d := c.paths["frontier"]; !strings.HasPrefix(d, "M") || len(strings.Fields(strings.ReplaceAll(d, "L", " "))) != 6 { // three x y pairs
		t.Errorf("frontier path %q: want the three frontier trials joined", d)
	}
	if _, joined := c.paths["trials"]; joined {
		t.Error("the trials are joined by a line: they are points in no order")
	}
	if len(c.highlights) != 1 || !strings.Contains(c.highlights[0], "best 1 inst · batch 16") || len(c.refs) != 1 {
		t.Errorf("highlights %v, refs %v", c.highlights, c.refs)
	}
	for _, want := range []string{"Tune: model configurations", "4 trials over 4 configurations, 22.2% of the grid",
		"1 inst · batch 16 · delay 100µs at concurrency 64: 2100.0 infer/s", "not loaded", "max_batch_size: 16",
		"the original configuration was loaded back", `<tr class="best">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
