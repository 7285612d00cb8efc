package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// TestEndpointChatHeadless runs the simulator's LLM over the
// OpenAI-compatible chat endpoint, streaming, and checks that the run file
// counts every token the model generated, and that the header names the
// endpoint.
func TestEndpointChatHeadless(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	runFile, csvFile := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	code, stdout, stderr := runCLI("-m", "llm", "-u", srv.HTTPAddr(), "-i", "http", "--endpoint", "chat", "--streaming",
		"--metrics-url", "http://"+srv.MetricsAddr()+"/metrics", "--concurrency", "4", "--duration", "3s",
		"--prompt-tokens", "24", "--request-parameter", "max_tokens:10:int", "--record", runFile, "-f", csvFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "(HTTP chat stream, tokenizer tiktoken cl100k_base)") || !strings.Contains(stdout, "Avg time to first response:") {
		t.Errorf("summary:\n%s", stdout)
	}
	ls, err := srv.Engine().LLMStats("llm")
	if err != nil || len(ls.Requests) < 4 {
		t.Fatalf("LLMStats: %d requests, %v", len(ls.Requests), err)
	}
	tokens := 0
	for _, r := range ls.Requests {
		if r.PromptTokens != 24 || r.MaxTokens != 10 || !r.Stream {
			t.Fatalf("the model got %+v; want a 24-word prompt, max_tokens 10, streaming", r)
		}
		tokens += r.Tokens
	}
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	st := run.Snapshots[len(run.Snapshots)-1].Run.Streaming
	if st == nil || st.Responses != int64(tokens) || st.TTFT.Count != int64(len(ls.Requests)) {
		t.Errorf("run file: streaming %+v; the server generated %d tokens in %d requests", st, tokens, len(ls.Requests))
	}
	if _, err := os.Stat(csvFile); err != nil {
		t.Error(err)
	}
}

func TestEndpointBadInput(t *testing.T) {
	srv := startSim(t)
	url := srv.HTTPAddr()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint", "bogus"}, `unknown endpoint "bogus": use infer, generate, generate_stream, chat, completions`},
		{[]string{"--endpoint", "chat", "-i", "grpc"}, "--endpoint chat is Triton's HTTP API: add -i http"},
		{[]string{"--endpoint", "generate", "--streaming"}, "use --endpoint generate_stream to stream"},
		{[]string{"--endpoint-url", "localhost:9000"}, "add --endpoint chat or completions"},
		{[]string{"--endpoint", "generate", "--endpoint-url", "localhost:9000"}, "--endpoint-url is for chat and completions"},
		{[]string{"--streaming"}, "--streaming needs gRPC"},
	} {
		args := append([]string{"-m", "llm", "-u", url, "-i", "http", "--duration", "1s"}, c.args...)
		code, _, stderr := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	code, _, stderr := runCLI("-m", "simple", "-u", url, "-i", "http", "--endpoint", "generate", "--duration", "1s")
	if code != 2 || !strings.Contains(stderr, `model "simple" has no BYTES input "text_input"`) {
		t.Errorf("a model without text: exit %d, %q", code, stderr)
	}
}

// TestEndpointTokenLengths asks for prompts and outputs of fixed token
// lengths over generate_stream and checks what the model counted: every
// prompt of exactly the tokens asked (the simulator counts with the same
// tokenizer), every output of exactly the tokens asked.
func TestEndpointTokenLengths(t *testing.T) {
	srv := startSim(t)
	code, _, stderr := runCLI("-m", "llm", "-u", srv.HTTPAddr(), "-i", "http", "--endpoint", "generate_stream",
		"--concurrency", "2", "--duration", "2s", "--synthetic-input-tokens-mean", "40", "--output-tokens-mean", "12")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ls, err := srv.Engine().LLMStats("llm")
	if err != nil || len(ls.Requests) < 2 {
		t.Fatalf("LLMStats: %d requests, %v", len(ls.Requests), err)
	}
	for _, r := range ls.Requests {
		if r.PromptTokens != 40 || r.Tokens != 12 || r.MaxTokens != 12 || !r.Stream {
			t.Fatalf("the model got %+v; want 40 prompt tokens, 12 output tokens, streaming", r)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--output-tokens-stddev", "3"}, "--output-tokens-stddev needs --output-tokens-mean"},
		{[]string{"--synthetic-input-tokens-mean", "10", "--prompt-tokens", "10"}, "give one"},
		{[]string{"--num-prompts", "-1"}, "--num-prompts must not be negative"},
		{[]string{"--num-prompts", "1000", "--synthetic-input-tokens-mean", "4000"}, "1000 prompts of about 4000 tokens make 4000000 tokens to build: at most 2000000"},
	} {
		args := append([]string{"-m", "llm", "-u", srv.HTTPAddr(), "-i", "http", "--endpoint", "chat", "--duration", "1s"}, c.args...)
		code, _, stderr := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
