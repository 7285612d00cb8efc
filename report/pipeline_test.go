package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats/statstest"
)

// pipelineRun is steppedRun against a pipeline of cls and pre: the
// pipeline's own entry has 5 µs of queue and its compute; its steps' have
// the time: cls queues 400 µs per request in the first tick and 800 in
// the second (then 2000 at concurrency 2), computing 300; pre queues 50
// and computes 100.
func pipelineRun(t *testing.T) *record.Run {
	run := steppedRun(t)
	clsQ := []int64{400, 800, 2000, 2000, 600}
	for i := range run.Snapshots {
		s := &run.Snapshots[i]
		n := int(s.Server.SuccessCount)
		s.Server.Request = 4 * time.Millisecond
		s.Server.Queue = 5 * time.Microsecond
		*s = statstest.WithSteps(*s, statstest.Step("cls", n, clsQ[i], 300, 2), statstest.Step("pre", n, 50, 100, 1))
	}
	run.Header.Model.Name = "pipe"
	return run
}

// TestPipelineStepsOverSpans: a load step's composing models are each
// Σ Δns / Σ Δcount of its ticks, the pipeline's queue and compute their
// sums, its own times weighted as the others.
func TestPipelineStepsOverSpans(t *testing.T) {
	sum := SummarizeRun(pipelineRun(t))
	st := sum.Steps[0].Server
	if len(st.Steps) != 2 || st.Steps[0].Model != "cls" || st.Steps[0].SuccessCount != 400 {
		t.Fatalf("step 1's composing models %+v", st.Steps)
	}
	// cls: (100·400 + 300·800)/400 = 700 µs; with pre's 50: 750.
	if st.Steps[0].Queue != 700*time.Microsecond || st.Queue != 750*time.Microsecond || st.Compute() != 400*time.Microsecond ||
		st.Overhead != 4*time.Millisecond-1150*time.Microsecond || st.Own == nil || st.Own.Queue != 5*time.Microsecond {
		t.Errorf("step 1: queue %v compute %v overhead %v own %+v", st.Queue, st.Compute(), st.Overhead, st.Own)
	}
	if w := sum.Server; len(w.Steps) != 2 || w.Steps[1].SuccessCount != 950 {
		t.Errorf("whole run's steps %+v", w.Steps)
	}
	// The JSON summary carries them under server.steps.
	b, err := json.Marshal(sum)
	if err != nil || !strings.Contains(string(b), `"steps":[{"available":true,"model":"cls","version":"1"`) ||
		!strings.Contains(string(b), `"own":{"queue_ns":5000`) {
		t.Errorf("JSON summary: %v\n%s", err, b)
	}
}

// TestPipelineSummaryText: a run at one level prints perf_analyzer's
// Composing models block; a sweep a table of the composing models per
// step; Markdown a row per composing model.
func TestPipelineSummaryText(t *testing.T) {
	run := pipelineRun(t)
	one := &record.Run{Header: run.Header, Snapshots: run.Snapshots[:2]}
	var b bytes.Buffer
	if err := WriteText(&b, SummarizeRun(one)); err != nil {
		t.Fatal(err)
	}
	want := `  Server: 
    Inference count: 400
    Execution count: 400
    Successful request count: 400
    Avg request latency: 4000 usec (overhead 2850 usec + queue 750 usec + compute 400 usec)

  Composing models: 
  cls, version: 1
      Inference count: 400
      Execution count: 200
      Successful request count: 400
      Avg request latency: 1000 usec (overhead 0 usec + queue 700 usec + compute input 0 usec + compute infer 300 usec + compute output 0 usec)
      Avg batch size: 2.00
  pre, version: 1
      Inference count: 400
      Execution count: 400
      Successful request count: 400
      Avg request latency: 150 usec (overhead 0 usec + queue 50 usec + compute input 0 usec + compute infer 100 usec + compute output 0 usec)
      Avg batch size: 1.00
`
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks\n%s\ngot\n%s", want, b.String())
	}
	b.Reset()
	if err := WriteText(&b, SummarizeRun(run)); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"  Composing models (queue and compute in ms per request of each):\n", "    1     cls         400   0.70     0.30    2.0\n", "    2     cls         500   2.00     0.30    2.0\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("sweep summary lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := WriteMarkdown(&b, SummarizeRun(one)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| Composing model cls v1 | 400 requests: queue 0.70 + compute 0.30 ms, batch 2.0 |") {
		t.Errorf("Markdown:\n%s", b.String())
	}
	b.Reset()
	if err := WriteMarkdown(&b, SummarizeRun(run)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 1 | cls | 400 | 0.70 | 0.30 | 2.0 |") {
		t.Errorf("Markdown sweep:\n%s", b.String())
	}
}

// TestPipelineCSV: the pipeline's row has its own entry's times, as
// perf_analyzer's; each composing model's file has perf_analyzer's
// columns: throughput by the share of requests, the model's overhead,
// queue and compute, and 0 for the client's parts.
func TestPipelineCSV(t *testing.T) {
	sum := SummarizeRun(pipelineRun(t))
	var b bytes.Buffer
	if err := WriteCSVSteps(&b, sum.Steps, CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	// Step 1: own queue 5 µs, own compute (steppedRun's) 50 + 700 + 20.
	if rows := strings.Split(b.String(), "\n"); !strings.HasPrefix(rows[1], "1,200,0,1725,5,50,700,20,0,") {
		t.Errorf("pipeline's row %q", rows[1])
	}
	models := ComposingModels(sum.Steps)
	if len(models) != 2 || models[0] != (ComposingModel{"cls", "1"}) || ComposingCSVName("cls", "1", "out.csv") != "cls_v1.out.csv" {
		t.Fatalf("composing models %v", models)
	}
	b.Reset()
	if err := WriteComposingCSV(&b, sum.Steps, "cls"); err != nil {
		t.Fatal(err)
	}
	want := "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv\n" +
		"1,200,0,0,700,0,300,0,0\n" +
		"2,250,0,0,2000,0,300,0,0\n" +
		"1,50,0,0,600,0,300,0,0\n"
	if b.String() != want {
		t.Errorf("cls's CSV\n got %s\nwant %s", b.String(), want)
	}
	if ComposingModels(SummarizeRun(steppedRun(t)).Steps) != nil {
		t.Error("a model that is no pipeline has composing models")
	}
}

// TestPipelineHTMLAndCompare: the HTML report has the table of the
// composing models; compare sets each composing model's queue, compute
// and batch side by side.
func TestPipelineHTMLAndCompare(t *testing.T) {
	run := pipelineRun(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, []HTMLRun{{Label: "pipe", Run: run}}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<table class="composing-table">`) || !strings.Contains(b.String(), `<td class="l">cls</td>`) {
		t.Errorf("HTML report lacks the composing models' table")
	}
	faster := pipelineRun(t)
	for i := range faster.Snapshots {
		s := &faster.Snapshots[i]
		s.Server.Steps[0].Queue /= 2
		s.Server.Decompose()
	}
	c, err := Compare(SummarizeRun(run), SummarizeRun(faster), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	var got *Change
	for i, m := range c.Steps[0].Metrics {
		if m.Metric == "queue:cls" {
			got = &c.Steps[0].Metrics[i]
		}
	}
	if got == nil || got.Name != "queue in cls" || *got.A != 0.7 || *got.B != 0.35 || *got.Percent != -50 {
		t.Fatalf("compare's metrics %+v", c.Steps[0].Metrics)
	}
	b.Reset()
	if err := c.WriteText(&b); err != nil || !strings.Contains(b.String(), "queue in cls") || !strings.Contains(b.String(), "compute in pre") {
		t.Errorf("compare's table: %v\n%s", err, b.String())
	}
}
