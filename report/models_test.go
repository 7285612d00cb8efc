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

// modelsRun is six one-second ticks of a run over two models sharing one
// GPU: "a" at concurrency 4 answers 100 requests a tick at 2 ms; "b" at
// 50/s answers 50 at 8 ms, then from tick 4 on runs at 100/s and answers
// 100. Each model's entry comes from its own aggregator, the top from one
// over every result, as the collector makes them.
func modelsRun(t *testing.T) (record.Header, []stats.Snapshot) {
	t.Helper()
	all := stats.NewAggregator(time.Second, 10*time.Second)
	aggs := []*stats.Aggregator{stats.NewAggregator(time.Second, 10*time.Second), stats.NewAggregator(time.Second, 10*time.Second)}
	var snaps []stats.Snapshot
	for seq := 1; seq <= 6; seq++ {
		base := time.Duration(seq) * time.Second
		rateB := 50.0
		if seq >= 4 {
			rateB = 100
		}
		batches := [2][]driver.Result{}
		for range 100 {
			batches[0] = append(batches[0], driver.Result{Scheduled: base, Sent: base, Done: base + 2*time.Millisecond, Inferences: 1})
		}
		for range int(rateB) {
			batches[1] = append(batches[1], driver.Result{Scheduled: base - time.Millisecond, Sent: base, Done: base + 8*time.Millisecond, Inferences: 1})
		}
		s := stats.Snapshot{Seq: seq, Elapsed: base, Interval: time.Second}
		s.Models = make([]stats.Model, 2)
		loads := []stats.Load{
			{Mode: load.Concurrency, Concurrency: 4, InFlight: 4},
			{Mode: load.Rate, Rate: rateB, Distribution: load.Constant, InFlight: 1},
		}
		for i, name := range []string{"a", "b"} {
			all.Add(batches[i])
			aggs[i].Add(batches[i])
			var ms stats.Snapshot
			if err := aggs[i].Tick(time.Second, i == 1, &ms); err != nil {
				t.Fatal(err)
			}
			n := int64(len(batches[i]))
			s.Models[i] = stats.Model{Name: name, Load: loads[i], Tick: ms.Tick, Window: ms.Window, Run: ms.Run,
				Histogram: ms.Histogram, ScheduledHistogram: ms.ScheduledHistogram,
				Server: stats.ServerStats{Available: true, Model: name, SuccessCount: n, InferenceCount: n, ExecutionCount: n / 2,
					AvgBatch: 2, Request: time.Duration(i+1) * time.Millisecond, Queue: time.Duration(i+1) * 500 * time.Microsecond}}
		}
		if err := all.Tick(time.Second, true, &s); err != nil {
			t.Fatal(err)
		}
		s.Load = stats.AggregateLoad(loads)
		srv := stats.AggregateServer([]stats.ServerStats{s.Models[0].Server, s.Models[1].Server})
		srv.Model = ""
		s.Server = srv
		s.Metrics = stats.ServerMetrics{Available: true, GPUs: []stats.GPU{{UUID: "GPU-0", Utilization: 0.5, HasUtilization: true}}}
		s.System = stats.SystemStats{ProcessCPU: 0.2, NumCPU: 4}
		snaps = append(snaps, s)
	}
	la, lb := snaps[0].Models[0].Load, snaps[0].Models[1].Load
	h := record.Header{Server: record.ServerInfo{URL: "127.0.0.1:8001", Protocol: "gRPC"},
		Model:  record.ModelInfo{Name: "a,b"},
		Models: []record.ModelInfo{{Name: "a", Load: &la}, {Name: "b", Load: &lb}},
		Load:   snaps[0].Load, Interval: time.Second, Window: 10 * time.Second}
	return h, snaps
}

// TestModelsSummary: the summary has a block per model whose counts add up
// to the whole run's; a model's steps are its own levels, the run's steps
// end when any model's level changes; the text, Markdown and progress line
// name each model.
func TestModelsSummary(t *testing.T) {
	h, snaps := modelsRun(t)
	sum := Summarize(h, snaps)
	if len(sum.Models) != 2 || sum.Model != "a,b" {
		t.Fatalf("models %+v of %q", sum.Models, sum.Model)
	}
	a, b := sum.Models[0], sum.Models[1]
	if a.Client.Requests != 600 || b.Client.Requests != 450 || a.Client.Requests+b.Client.Requests != sum.Client.Requests {
		t.Errorf("requests %d + %d, whole run %d", a.Client.Requests, b.Client.Requests, sum.Client.Requests)
	}
	if a.Server.SuccessCount+b.Server.SuccessCount != sum.Server.SuccessCount {
		t.Errorf("server successes %d + %d, whole run %d", a.Server.SuccessCount, b.Server.SuccessCount, sum.Server.SuccessCount)
	}
	if a.Client.Latency.P99 > 3*time.Millisecond || b.Client.Latency.P50 < 7*time.Millisecond {
		t.Errorf("a's p99 %v, b's p50 %v: each model's latency is its own", a.Client.Latency.P99, b.Client.Latency.P50)
	}
	// b's queue is its own: 1 ms a request, where a's is 0.5 ms.
	if a.Server.Queue != 500*time.Microsecond || b.Server.Queue != time.Millisecond {
		t.Errorf("queue a %v, b %v", a.Server.Queue, b.Server.Queue)
	}
	if len(a.Steps) != 1 || len(b.Steps) != 2 || b.Steps[0].Load.Rate != 50 || b.Steps[1].Load.Rate != 100 ||
		b.Steps[1].Client.Requests != 300 || b.Load.Rate != 100 {
		t.Errorf("a's steps %d, b's %+v, b ends at %v", len(a.Steps), b.Steps, b.Load)
	}
	if b.Steps[0].ClientCPU != (record.ClientCPU{}) {
		t.Errorf("a model's step has the process's CPU: %+v", b.Steps[0].ClientCPU)
	}
	// The run's steps: the two levels of the models together.
	if len(sum.Steps) != 2 || sum.Steps[0].Load.Mode != load.Mixed || sum.Steps[1].Load.Rate != 100 {
		t.Errorf("the run's steps: %+v", sum.Steps)
	}

	var text strings.Builder
	if err := WriteText(&text, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"All 2 models together (a concurrency 4, b rate 100/s):",
		"Models; latency in ms",
		"b steps (latency in ms",
		"Avg GPU Utilization", // the GPUs once, in the block of all the models
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, text.String())
		}
	}
	row := lineWith(text.String(), "  a ")
	for _, want := range []string{"concurrency 4", "600", "57.1%", "100.0"} {
		if !strings.Contains(row, want) {
			t.Errorf("model a's row %q lacks %q", row, want)
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**All 2 models together (a concurrency 4, b rate 100/s)**", "| a | concurrency 4 | 600 |", "**b steps**"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown summary lacks %q:\n%s", want, md.String())
		}
	}
	var progress bytes.Buffer
	p := NewProgress(&progress, 0, stats.DiagnoseOptions{})
	p.Add(snaps[4])
	for _, want := range []string{"concurrency 4 + rate 100/s", "│ a concurrency 4: 100.0 infer/s p99 2.00 ms", "│ b rate 100/s: 100.0 infer/s p99 9.00 ms queue 1.00 ms"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress line lacks %q: %s", want, progress.String())
		}
	}
}

// lineWith is the first line of text that contains s.
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestCompareModels compares a run over two models with a run of one of
// them alone: the models are matched by name, then their levels; the model
// only one run had is named; runs without a model in common are refused.
func TestCompareModels(t *testing.T) {
	h, snaps := modelsRun(t)
	two := Summarize(h, snaps)
	solo := ModelRun(two, 0)
	c, err := Compare(solo, two, "alone", "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 1 || c.Models[0].Model != "a" || len(c.Models[0].Steps) != 1 ||
		c.Models[0].Steps[0].Level != "concurrency 4" || len(c.OnlyBModels) != 1 || c.OnlyBModels[0] != "b" {
		t.Fatalf("comparison %+v", c)
	}
	var text strings.Builder
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Model a\n", "All models\n", "Models only in shared: b"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, text.String())
		}
	}
	// Two runs of two models: b's two levels are matched level by level.
	c, err = Compare(two, two, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 2 || len(c.Models[1].Steps) != 2 || c.Models[1].Steps[1].Level != "rate 100/s" {
		t.Errorf("two models against themselves: %+v", c.Models)
	}
	other := solo
	other.Model = "c"
	if _, err := Compare(other, two, "c.jsonl", "two.jsonl"); err == nil || !strings.Contains(err.Error(), "no model in common") {
		t.Errorf("runs without a model in common: %v", err)
	}
}

// TestHTMLOfModels: a run over two models is drawn as two runs, one per
// model under its name, with the GPU they share drawn once.
func TestHTMLOfModels(t *testing.T) {
	h, snaps := modelsRun(t)
	var page bytes.Buffer
	if err := WriteHTML(&page, []HTMLRun{{Label: "two.jsonl", File: "two.jsonl", Run: &record.Run{Header: h, Snapshots: snaps}}}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	charts := readCharts(t, page.String())
	tp := charts["throughput"]
	if len(tp.legend) != 2 || tp.legend[0] != "a" || tp.legend[1] != "b" {
		t.Errorf("throughput series %v, want a and b", tp.legend)
	}
	checkDrawn(t, tp)
	if g := charts["gpu-utilization"]; len(g.legend) != 1 || g.legend[0] != "GPU 0" {
		t.Errorf("GPU series %v, want the shared GPU once", g.legend)
	}
	if _, ok := charts["server-time-2"]; !ok {
		t.Error("no Triton time chart of the second model")
	}
	for _, want := range []string{"tritontop report: a, b", "1 run file.", "One of the 2 models of this run"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestModelStepsDiagnosed: each model's steps carry the diagnosis of its
// own ticks: b's 8 ms against Triton's 2 ms, a's 2 ms against 1 ms, at
// each of b's two levels.
func TestModelStepsDiagnosed(t *testing.T) {
	h, snaps := modelsRun(t)
	sum := Summarize(h, snaps)
	for i, c := range []struct {
		model, words string
	}{
		{"a", "of the 2.00 ms client latency (50%) is network and client; the server takes 1.00 ms"},
		{"b", "6.00 ms of the 8.00 ms client latency (75%) is network and client; the server takes 2.00 ms"},
	} {
		m := sum.Models[i]
		if m.Name != c.model {
			t.Fatalf("model %d is %s, want %s", i, m.Name, c.model)
		}
		for j, st := range m.Steps {
			found := false
			for _, f := range st.Diagnosis {
				found = found || f.Verdict == stats.OutsideTriton && strings.Contains(f.Message, c.words)
			}
			if !found {
				t.Errorf("model %s step %d diagnosed %+v, want time outside Triton with %q", c.model, j+1, st.Diagnosis, c.words)
			}
		}
	}
}
