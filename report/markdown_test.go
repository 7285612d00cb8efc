package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestMarkdownGolden writes the Markdown summary of three frozen runs: a
// sweep with an SLO (step table, search, knee), a run at one concurrency,
// and an open-loop run (latency from the schedule too).
func TestMarkdownGolden(t *testing.T) {
	for _, name := range []string{"sweep", "c16", "rate"} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteMarkdown(&b, SummarizeRun(frozenRun(t, name))); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name+".md.golden", b.Bytes())
		})
	}
}

// TestMarkdownAgreesWithText: the Markdown step table has the text
// summary's cells, row for row.
func TestMarkdownAgreesWithText(t *testing.T) {
	sum := SummarizeRun(frozenRun(t, "sweep"))
	var md, txt bytes.Buffer
	WriteMarkdown(&md, sum)
	WriteText(&txt, sum)
	for i, st := range sum.Steps {
		row := stepRow(i, st)
		if !strings.Contains(md.String(), "| "+strings.Join(row, " | ")+" |") {
			t.Errorf("Markdown lacks step %d's row %q", i+1, row)
		}
	}
	for _, l := range searchLines(sum) {
		if !strings.Contains(md.String(), "- "+mdText(l)) || !strings.Contains(txt.String(), l) {
			t.Errorf("%q missing from one of the summaries", l)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	sum := record.Summary{Model: "my_model*", URL: "h:1", Protocol: "gRPC", Ticks: 1,
		Load:  stats.Load{Mode: load.Concurrency, Concurrency: 1},
		Steps: []record.Step{{Load: stats.Load{Mode: load.Concurrency, Concurrency: 1}}},
		Client: stats.ClientStats{Requests: 2, Errors: 2, ErrorsByCode: []stats.ErrorCount{
			{Code: "INVALID_ARGUMENT", Count: 2, Message: "bad | input <shape>"},
		}},
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sum); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`### my\_model\* on h:1 (gRPC)`, `| INVALID\_ARGUMENT | 2 | bad \| input &lt;shape&gt; |`, "2 errors (100% of requests)"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}
}
