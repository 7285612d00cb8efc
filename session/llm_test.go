package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
)

// TestLLMHeadless runs the simulator's LLM headless with a generated
// prompt and max_tokens as a request parameter, and checks what the model
// received and what the summary, the run file and the CSV say of its
// responses.
func TestLLMHeadless(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	c := quickConfig(srv, "llm")
	c.Streaming, c.Concurrency, c.LLM.PromptTokens = true, 4, 32
	c.LLM.RequestParameters = []string{"max_tokens:12:int"}
	c.Record, c.CSV = filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	stdout, _ := runOK(t, c)
	for _, want := range []string{"Response Throughput:", "Avg time to first response:", "p99 inter-response latency:",
		"Successful response count:", "Avg response compute: infer"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	ls, err := srv.Engine().LLMStats("llm")
	if err != nil || len(ls.Requests) < 4 {
		t.Fatalf("LLMStats: %d requests, %v", len(ls.Requests), err)
	}
	tokens := 0
	for _, r := range ls.Requests {
		if r.PromptTokens != 32 || r.MaxTokens != 12 || r.Tokens > 12 || !r.Stream {
			t.Fatalf("the model got %+v; want a 32-word prompt, max_tokens 12, streaming", r)
		}
		tokens += r.Responses
	}
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatal(err)
	}
	last := run.Snapshots[len(run.Snapshots)-1]
	st := last.Run.Streaming
	if st == nil || st.Responses != int64(tokens) || st.TTFT.Count == 0 || st.ITL.Count == 0 {
		t.Errorf("run file: streaming %+v; the server sent %d tokens", st, tokens)
	}
	for _, s := range run.Snapshots {
		if s.Tick.Streaming == nil {
			t.Errorf("tick %d has no streaming statistics", s.Seq)
		}
	}
	csv, err := os.ReadFile(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	if header := strings.SplitN(string(csv), "\n", 2)[0]; !strings.HasPrefix(header, "Concurrency,Inferences/Second,Response Throughput,") ||
		!strings.HasSuffix(header, ",Avg Responses Per Request,Output Token Throughput (tokens/sec),Avg Output Sequence Length (tokens)") {
		t.Errorf("CSV header %q", header)
	}
}

// TestLLMBadInput: what an LLM's settings get wrong, once the server says
// what the model is, is a usage error of one line.
func TestLLMBadInput(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, tc := range []struct {
		model string
		set   func(*session.Config)
		want  string
	}{
		{"llm", func(*session.Config) {}, "add --streaming"},
		{"llm", func(c *session.Config) {
			c.Streaming, c.LLM.RequestParameters = true, []string{"max_tokens:many:int"}
		}, `"many" is not an integer`},
		{"llm", func(c *session.Config) { c.Streaming, c.LLM.RequestParameters = true, []string{"max_tokens"} }, "NAME:VALUE:TYPE"},
		{"simple", func(c *session.Config) { c.LLM.PromptTokens = 10 }, `"text_input", which model "simple" does not have`},
		{"llm", func(c *session.Config) { c.Streaming, c.LLM.PromptTokens = true, -1 }, "must not be negative"},
	} {
		c := quickConfig(srv, tc.model)
		tc.set(&c)
		err, _, _ := runConfig(t, c)
		wantRefused(t, err, tc.want)
	}
}
