package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// TestLLMHeadless runs the simulator's LLM headless with a generated
// prompt and max_tokens as a request parameter, and checks what the model
// received and what the summary, the run file and the CSV say of its
// responses.
func TestLLMHeadless(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	runFile, csvFile := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	code, stdout, stderr := runCLI("-m", "llm", "-u", srv.GRPCAddr(), "--metrics-url", "http://"+srv.MetricsAddr()+"/metrics",
		"--streaming", "--concurrency", "4", "--duration", "3s", "--prompt-tokens", "32",
		"--request-parameter", "max_tokens:12:int", "--record", runFile, "-f", csvFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
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
	run, err := record.ReadAll(runFile)
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
	csv, err := os.ReadFile(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	if header := strings.SplitN(string(csv), "\n", 2)[0]; !strings.HasPrefix(header, "Concurrency,Inferences/Second,Response Throughput,") ||
		!strings.HasSuffix(header, ",Avg Responses Per Request,Output Token Throughput (tokens/sec),Avg Output Sequence Length (tokens)") {
		t.Errorf("CSV header %q", header)
	}
}

func TestLLMBadInput(t *testing.T) {
	srv := startSim(t)
	url := srv.GRPCAddr()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-m", "llm", "-u", url, "--duration", "1s"}, "add --streaming"},
		{[]string{"-m", "llm", "-u", url, "--streaming", "--request-parameter", "max_tokens:many:int", "--duration", "1s"}, `"many" is not an integer`},
		{[]string{"-m", "llm", "-u", url, "--streaming", "--request-parameter", "max_tokens", "--duration", "1s"}, "NAME:VALUE:TYPE"},
		{[]string{"-m", "simple", "-u", url, "--prompt-tokens", "10", "--duration", "1s"}, `"text_input", which model "simple" does not have`},
		{[]string{"-m", "llm", "-u", url, "--streaming", "--prompt-tokens", "-1", "--duration", "1s"}, "must not be negative"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
