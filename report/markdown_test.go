package report

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestMarkdownGolden writes the Markdown summary of five frozen runs: a
// sweep with an SLO (step table, search, knee), a run at one concurrency,
// an open-loop run (latency from the schedule too), and a decoupled LLM's
// run at one concurrency and over four (the responses' rows and columns).
func TestMarkdownGolden(t *testing.T) {
	for _, name := range []string{"sweep", "c16", "rate", "llm", "llm-steps"} {
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
// summary's cells, row for row, a decoupled model's responses' columns
// included.
func TestMarkdownAgreesWithText(t *testing.T) {
	for _, name := range []string{"sweep", "llm-steps"} {
		t.Run(name, func(t *testing.T) {
			sum := SummarizeRun(frozenRun(t, name))
			var md, txt bytes.Buffer
			WriteMarkdown(&md, sum)
			WriteText(&txt, sum)
			for i, st := range sum.Steps {
				row := stepRow(i, st)
				if sc := st.Client.Streaming; sc != nil {
					// Where writeSteps puts them.
					row = slices.Insert(row, 7, streamingCells(sc)...)
				} else if name == "llm-steps" {
					t.Fatalf("step %d of the LLM's run has no streaming statistics", i+1)
				}
				if !strings.Contains(md.String(), "| "+strings.Join(row, " | ")+" |") {
					t.Errorf("Markdown lacks step %d's row %q", i+1, row)
				}
			}
			for _, l := range searchLines(sum) {
				if !strings.Contains(md.String(), "- "+mdText(l)) || !strings.Contains(txt.String(), l) {
					t.Errorf("%q missing from one of the summaries", l)
				}
			}
		})
	}
}

// TestMarkdownStreaming: a decoupled model's run at one level says its
// responses, time to first response and between responses, and Triton's
// response statistics, with the numbers of the text summary.
func TestMarkdownStreaming(t *testing.T) {
	sum := SummarizeRun(frozenRun(t, "llm"))
	sc, r := sum.Client.Streaming, sum.Server.Responses
	if sc == nil || r == nil || sc.TTFT.Count == 0 || r.Success == 0 {
		t.Fatalf("the frozen LLM run: streaming %+v, server responses %+v", sc, r)
	}
	var md, txt bytes.Buffer
	WriteMarkdown(&md, sum)
	WriteText(&txt, sum)
	for _, want := range []string{
		"| Response throughput | " + g6(sc.ResponsesPerS) + " responses/s |",
		"| Time to first response avg / p50 / p90 / p95 / p99 | " + msCell(sc.TTFT.Mean) + " / " + msCell(sc.TTFT.P50) + " / ",
		"| Inter-response latency avg / p50 / p90 / p95 / p99 | " + msCell(sc.ITL.Mean) + " / " + msCell(sc.ITL.P50) + " / ",
		"| Triton responses | " + strconv.FormatInt(r.Success, 10) + " successful (empty 0, failed 0, cancelled 0) |",
		"| Triton time per response | infer " + msCell(r.ComputeInfer) + " ms (first response " + msCell(r.FirstComputeInfer),
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	// The same numbers as the text summary's, in its units.
	for _, want := range []string{
		"Response Throughput: " + g6(sc.ResponsesPerS) + " infer/sec",
		"Successful response count: " + strconv.FormatInt(r.Success, 10) + " ",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("the text summary lacks %q", want)
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
