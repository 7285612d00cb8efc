package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestSummariesSaySimulated: the text, Markdown and JSON summaries say the
// server was tritontop's simulator when the run file's header says so, and
// only then; the paused time and the retries are stated with it.
func TestSummariesSaySimulated(t *testing.T) {
	sum := record.Summary{Model: "resnet50", URL: "127.0.0.1:8001", Protocol: "gRPC", Duration: 30 * time.Second, Ticks: 30,
		Paused: 10 * time.Second,
		Client: stats.ClientStats{Duration: 20 * time.Second, Requests: 1000, Successes: 900, Errors: 100, Retries: 230}}
	writers := map[string]func(*bytes.Buffer, record.Summary) error{
		"text":     func(b *bytes.Buffer, s record.Summary) error { return WriteText(b, s) },
		"markdown": func(b *bytes.Buffer, s record.Summary) error { return WriteMarkdown(b, s) },
		"json":     func(b *bytes.Buffer, s record.Summary) error { return WriteJSON(b, s) },
	}
	for name, write := range writers {
		for _, simulated := range []bool{true, false} {
			s := sum
			s.Simulated = simulated
			var b bytes.Buffer
			if err := write(&b, s); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			says := strings.Contains(out, SimulatedNote) || strings.Contains(out, `"simulated": true`)
			if says != simulated {
				t.Errorf("%s summary, simulated %v: says simulated %v:\n%s", name, simulated, says, out)
			}
			if name == "json" {
				continue
			}
			for _, want := range []string{"paused 10s of 30s: throughput is over the 20s load was applied", "retries: 230 (23.0% more sends than requests)"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s summary lacks %q:\n%s", name, want, out)
				}
			}
		}
	}
}

// TestMissingIsMissing: a tick where every request failed shows no p50 or
// p99 rather than 0, a tick of a decoupled model without an execution no
// batch size, and a summary with no successful request no latency.
func TestMissingIsMissing(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 0, stats.DiagnoseOptions{})
	p.Add(stats.Snapshot{Seq: 1, Elapsed: time.Second, Interval: time.Second,
		Load:   stats.Load{Mode: "concurrency", Concurrency: 4},
		Tick:   stats.ClientStats{Duration: time.Second, Requests: 7, Errors: 7},
		Server: stats.ServerStats{Available: true, SuccessCount: 3, Request: time.Millisecond}})
	p.Add(stats.Snapshot{Seq: 2, Elapsed: 2 * time.Second, Interval: time.Second,
		Load:   stats.Load{Mode: "concurrency", Concurrency: 4},
		Tick:   stats.ClientStats{Duration: time.Second, Requests: 7, Errors: 7},
		Server: stats.ServerStats{Available: true, FailCount: 7}})
	line := b.String()
	for _, want := range []string{"p50 -  p99 -", "batch -", "queue -  compute -"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line lacks %q: %s", want, line)
		}
	}
	if strings.Contains(line, "0.00 ms  p99") || strings.Contains(line, "batch 0.0") {
		t.Errorf("progress line shows a missing value as 0: %s", line)
	}
	var text bytes.Buffer
	if err := WriteText(&text, record.Summary{Ticks: 1, Client: stats.ClientStats{Requests: 7, Errors: 7}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "p50 latency: 0 usec") || !strings.Contains(text.String(), "Avg latency: - (no successful request)") {
		t.Errorf("text summary of a run without success:\n%s", text.String())
	}
}
