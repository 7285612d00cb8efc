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
