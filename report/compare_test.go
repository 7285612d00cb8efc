package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestCompareGolden compares the frozen gRPC and HTTP sweeps (concurrency
// 1, 6, 11 and 16 each) as text, JSON and Markdown.
func TestCompareGolden(t *testing.T) {
	a, b := SummarizeRun(frozenRun(t, "grpc")), SummarizeRun(frozenRun(t, "http"))
	c, err := Compare(a, b, "grpc", "http")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 4 || len(c.OnlyA) != 0 || len(c.OnlyB) != 0 {
		t.Fatalf("matched %d levels (only A %v, only B %v), want the 4 both ran", len(c.Steps), c.OnlyA, c.OnlyB)
	}
	// The table's numbers are the steps' own: concurrency 6 in A.
	st := a.Steps[1]
	tp := c.Steps[1].Metrics[0]
	if c.Steps[1].Level != "concurrency 6" || tp.Metric != "throughput" || *tp.A != st.Client.InferPerS || *tp.B != b.Steps[1].Client.InferPerS {
		t.Errorf("concurrency 6 throughput: %+v, want A %v B %v", tp, st.Client.InferPerS, b.Steps[1].Client.InferPerS)
	}
	if want := (b.Steps[1].Client.InferPerS - st.Client.InferPerS) / st.Client.InferPerS * 100; math.Abs(*tp.Percent-want) > 1e-9 {
		t.Errorf("change %v%%, want %v%%", *tp.Percent, want)
	}

	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"compare.txt.golden", func(b *bytes.Buffer) error { return c.WriteText(b) }},
		{"compare.md.golden", func(b *bytes.Buffer) error { return c.WriteMarkdown(b) }},
		{"compare.json.golden", func(b *bytes.Buffer) error { return c.WriteJSON(b) }},
	} {
		t.Run(f.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.write(&buf); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, f.name, buf.Bytes())
		})
	}

	var back Comparison
	var buf bytes.Buffer
	c.WriteJSON(&buf)
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Steps) != 4 || back.Overall.Level != "whole run" {
		t.Errorf("JSON does not read back: %v, %+v", err, back)
	}
}

// compareStep is a step at a concurrency with the given throughput, p99
// and server queue (0 for no server statistics).
func compareStep(concurrency int, inferPerS float64, p99, queue time.Duration) record.Step {
	st := record.Step{Load: stats.Load{Mode: load.Concurrency, Concurrency: concurrency}}
	st.Client = stats.ClientStats{Duration: time.Second, InferPerS: inferPerS, Latency: stats.Latency{Count: 10, P50: p99 / 2, P99: p99}}
	if queue > 0 {
		st.Server.Available = true
		st.Server.Queue = queue
		st.Server.ComputeInfer = time.Millisecond
		st.Server.ExecutionCount, st.Server.AvgBatch = 5, 2
	}
	return st
}

func TestCompareMatchesLevels(t *testing.T) {
	// A ran 1, 2, then 1 again; B ran 1, 1 and 4. Concurrency 1 matches
	// twice, in order; 2 and 4 are only in one run each.
	a := record.Summary{Steps: []record.Step{
		compareStep(1, 100, 10*time.Millisecond, time.Millisecond),
		compareStep(2, 180, 12*time.Millisecond, time.Millisecond),
		compareStep(1, 90, 11*time.Millisecond, time.Millisecond),
	}}
	b := record.Summary{Steps: []record.Step{
		compareStep(1, 150, 8*time.Millisecond, 0),
		compareStep(1, 120, 22*time.Millisecond, 2*time.Millisecond),
		compareStep(4, 300, 30*time.Millisecond, 0),
	}}
	c, err := Compare(a, b, "before", "after")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || strings.Join(c.OnlyA, ",") != "concurrency 2" || strings.Join(c.OnlyB, ",") != "concurrency 4" {
		t.Fatalf("steps %d, only A %v, only B %v", len(c.Steps), c.OnlyA, c.OnlyB)
	}
	get := func(lc LevelComparison, metric string) Change {
		for _, m := range lc.Metrics {
			if m.Metric == metric {
				return m
			}
		}
		t.Fatalf("no metric %s", metric)
		return Change{}
	}
	// First match: 100 → 150 infer/s is +50%; B had no server statistics,
	// so its queue and the change are missing, not zero.
	if m := get(c.Steps[0], "throughput"); *m.A != 100 || *m.B != 150 || *m.Percent != 50 {
		t.Errorf("first concurrency 1 throughput: %v → %v (%v%%), want 100 → 150 (+50%%)", *m.A, *m.B, *m.Percent)
	}
	if m := get(c.Steps[0], "queue"); m.A == nil || m.B != nil || m.Percent != nil || m.cell(m.B) != "-" || m.percentCell() != "-" {
		t.Errorf("queue without B's statistics: %+v", m)
	}
	// Second match: A's third step with B's second, p99 11 → 22 ms: +100%.
	if m := get(c.Steps[1], "p99_latency"); *m.A != 11 || *m.B != 22 || m.percentCell() != "+100.0%" {
		t.Errorf("second concurrency 1 p99: %v → %v (%s), want 11 → 22 (+100.0%%)", *m.A, *m.B, m.percentCell())
	}
	if m := get(c.Steps[1], "throughput"); m.percentCell() != "+33.3%" {
		t.Errorf("90 → 120 infer/s shows %s, want +33.3%%", m.percentCell())
	}
	// A sweep's overall adds the highest step throughput: 180 → 300.
	if m := get(c.Overall, "peak_throughput"); *m.A != 180 || *m.B != 300 {
		t.Errorf("peak throughput %v → %v, want 180 → 300", *m.A, *m.B)
	}
}

func TestCompareRejects(t *testing.T) {
	closed := SummarizeRun(frozenRun(t, "c1"))
	open := SummarizeRun(frozenRun(t, "rate"))
	if _, err := Compare(closed, open, "c1", "rate"); err == nil ||
		!strings.Contains(err.Error(), "same load mode") || !strings.Contains(err.Error(), "rate") {
		t.Errorf("closed against open loop: %v, want an error naming the modes", err)
	}
	if _, err := Compare(closed, record.Summary{}, "c1", "empty"); err == nil || !strings.Contains(err.Error(), "empty has no load steps") {
		t.Errorf("against a run without steps: %v", err)
	}
	// Open loop against open loop compares: same rate, same level.
	c, err := Compare(open, open, "x", "y")
	if err != nil || len(c.Steps) != 1 || *c.Steps[0].Metrics[0].Percent != 0 {
		t.Errorf("a rate run against itself: %v, %+v", err, c)
	}
}

// TestCompareStreaming compares the frozen LLM runs with prompts of 550
// and 2000 words (concurrency 2, 6, 10 and 14 each): every level adds
// responses per second, TTFT and ITL p50 and p99, with the steps' own
// numbers; the text, Markdown and JSON are golden. A run of a model that
// is not decoupled has no such rows.
func TestCompareStreaming(t *testing.T) {
	a, b := SummarizeRun(frozenRun(t, "llm-steps")), SummarizeRun(frozenRun(t, "llm-long"))
	c, err := Compare(a, b, "prompt 550", "prompt 2000")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 4 || len(c.OnlyA)+len(c.OnlyB) != 0 {
		t.Fatalf("matched %d levels (only A %v, only B %v), want the 4 both ran", len(c.Steps), c.OnlyA, c.OnlyB)
	}
	var names []string
	for _, m := range c.Steps[0].Metrics {
		names = append(names, m.Metric)
	}
	want := []string{"throughput", "p50_latency", "p99_latency", "responses_per_s", "output_tokens_per_s", "ttft_p50", "ttft_p99", "itl_p50", "itl_p99",
		"queue", "compute", "batch_size", "gpu_utilization", "client_cpu_per_request"}
	if !slices.Equal(names, want) {
		t.Errorf("metrics %v, want %v", names, want)
	}
	get := func(lc LevelComparison, metric string) Change {
		for _, m := range lc.Metrics {
			if m.Metric == metric {
				return m
			}
		}
		t.Fatalf("no metric %s at %s", metric, lc.Level)
		return Change{}
	}
	for i, lc := range c.Steps {
		sa, sb := a.Steps[i].Client.Streaming, b.Steps[i].Client.Streaming
		for _, w := range []struct {
			metric string
			a, b   float64
		}{
			{"responses_per_s", sa.ResponsesPerS, sb.ResponsesPerS},
			{"ttft_p50", millis(sa.TTFT.P50), millis(sb.TTFT.P50)},
			{"ttft_p99", millis(sa.TTFT.P99), millis(sb.TTFT.P99)},
			{"itl_p50", millis(sa.ITL.P50), millis(sb.ITL.P50)},
			{"itl_p99", millis(sa.ITL.P99), millis(sb.ITL.P99)},
		} {
			m := get(lc, w.metric)
			if m.A == nil || m.B == nil || *m.A != w.a || *m.B != w.b || m.Percent == nil {
				t.Errorf("%s %s: %+v, want A %v B %v", lc.Level, w.metric, m, w.a, w.b)
			}
		}
	}
	// The frozen runs were recorded before output tokens were counted:
	// the row is there, its values missing rather than 0.
	for _, lc := range c.Steps {
		if m := get(lc, "output_tokens_per_s"); m.A != nil || m.B != nil {
			t.Errorf("%s: output tokens %+v from runs that counted none", lc.Level, m)
		}
	}
	// The longer prompt takes longer to the first token at every level:
	// the prefill grows with the prompt.
	for _, lc := range c.Steps {
		if m := get(lc, "ttft_p50"); *m.Percent <= 0 {
			t.Errorf("%s: TTFT p50 %v → %v ms with the longer prompt", lc.Level, *m.A, *m.B)
		}
	}
	if m := get(c.Overall, "ttft_p99"); m.A == nil || *m.A != millis(a.Client.Streaming.TTFT.P99) {
		t.Errorf("whole run TTFT p99: %+v", m)
	}
	if m := get(c.Steps[0], "responses_per_s"); m.cell(m.A) != fixed(a.Steps[0].Client.Streaming.ResponsesPerS, 1) {
		t.Errorf("responses per second cell %q", m.cell(m.A))
	}

	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"compare-llm.txt.golden", func(b *bytes.Buffer) error { return c.WriteText(b) }},
		{"compare-llm.md.golden", func(b *bytes.Buffer) error { return c.WriteMarkdown(b) }},
		{"compare-llm.json.golden", func(b *bytes.Buffer) error { return c.WriteJSON(b) }},
	} {
		t.Run(f.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.write(&buf); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, f.name, buf.Bytes())
		})
	}

	// One run of a decoupled model, one not: nothing to compare them by.
	mixed, err := Compare(a, SummarizeRun(frozenRun(t, "grpc")), "llm", "grpc")
	if err != nil {
		t.Fatal(err)
	}
	for _, lc := range append(mixed.Steps, mixed.Overall) {
		for _, m := range lc.Metrics {
			if strings.HasPrefix(m.Metric, "ttft") || strings.HasPrefix(m.Metric, "itl") || m.Metric == "responses_per_s" {
				t.Errorf("%s: a streaming row %s when one run is not streaming", lc.Level, m.Metric)
			}
		}
	}
}
