package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// endpointConfig is a headless run of model on srv over HTTP's endpoint
// (--endpoint), in the way of quickConfig.
func endpointConfig(srv *sim.Server, model, endpoint string) session.Config {
	c := quickConfig(srv, model)
	c.URL, c.Protocol, c.Endpoint.Name = srv.HTTPAddr(), "http", endpoint
	return c
}

// TestEndpointChatHeadless runs the simulator's LLM over the
// OpenAI-compatible chat endpoint, streaming, and checks that the run file
// counts every token the model generated, and that the header names the
// endpoint.
func TestEndpointChatHeadless(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	c := endpointConfig(srv, "llm", "chat")
	c.Streaming, c.Concurrency, c.LLM.PromptTokens = true, 4, 24
	c.LLM.RequestParameters = []string{"max_tokens:10:int"}
	c.Record, c.CSV = filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	stdout, _ := runOK(t, c)
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
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatal(err)
	}
	st := run.Snapshots[len(run.Snapshots)-1].Run.Streaming
	if st == nil || st.Responses != int64(tokens) || st.TTFT.Count != int64(len(ls.Requests)) {
		t.Errorf("run file: streaming %+v; the server generated %d tokens in %d requests", st, tokens, len(ls.Requests))
	}
	if _, err := os.Stat(c.CSV); err != nil {
		t.Error(err)
	}
}

// TestEndpointBadInput: an endpoint that does not go with the protocol,
// streaming or the model is a usage error of one line.
func TestEndpointBadInput(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, tc := range []struct {
		set  func(*session.Config)
		want string
	}{
		{func(c *session.Config) { c.Endpoint.Name = "bogus" }, `unknown endpoint "bogus": use infer, generate, generate_stream, chat, completions`},
		{func(c *session.Config) { c.Endpoint.Name, c.Protocol = "chat", "grpc" }, "--endpoint chat is Triton's HTTP API: add -i http"},
		{func(c *session.Config) { c.Endpoint.Name, c.Streaming = "generate", true }, "use --endpoint generate_stream to stream"},
		{func(c *session.Config) { c.Endpoint.URL = "localhost:9000" }, "add --endpoint chat or completions"},
		{func(c *session.Config) { c.Endpoint.Name, c.Endpoint.URL = "generate", "localhost:9000" }, "--endpoint-url is for chat and completions"},
		{func(c *session.Config) { c.Streaming = true }, "--streaming needs gRPC"},
	} {
		c := endpointConfig(srv, "llm", "infer")
		tc.set(&c)
		err, _, _ := runConfig(t, c)
		wantRefused(t, err, tc.want)
	}
	err, _, _ := runConfig(t, endpointConfig(srv, "simple", "generate"))
	wantRefused(t, err, `model "simple" has no BYTES input "text_input"`)
}

// TestEndpointTokenLengths asks for prompts and outputs of fixed token
// lengths over generate_stream and checks what the model counted: every
// prompt of exactly the tokens asked (the simulator counts with the same
// tokenizer), every output of exactly the tokens asked; and refuses
// lengths that cannot be.
func TestEndpointTokenLengths(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := endpointConfig(srv, "llm", "generate_stream")
	c.Concurrency, c.Endpoint.InputTokensMean, c.Endpoint.OutputTokensMean = 2, 40, 12
	runOK(t, c)
	ls, err := srv.Engine().LLMStats("llm")
	if err != nil || len(ls.Requests) < 2 {
		t.Fatalf("LLMStats: %d requests, %v", len(ls.Requests), err)
	}
	for _, r := range ls.Requests {
		if r.PromptTokens != 40 || r.Tokens != 12 || r.MaxTokens != 12 || !r.Stream {
			t.Fatalf("the model got %+v; want 40 prompt tokens, 12 output tokens, streaming", r)
		}
	}
	for _, tc := range []struct {
		set  func(*session.Config)
		want string
	}{
		{func(c *session.Config) { c.Endpoint.OutputTokensStdDev = 3 }, "--output-tokens-stddev needs --output-tokens-mean"},
		{func(c *session.Config) { c.Endpoint.InputTokensMean, c.LLM.PromptTokens = 10, 10 }, "give one"},
		{func(c *session.Config) { c.Endpoint.NumPrompts = -1 }, "--num-prompts must not be negative"},
		{func(c *session.Config) { c.Endpoint.NumPrompts, c.Endpoint.InputTokensMean = 1000, 4000 },
			"1000 prompts of about 4000 tokens make 4000000 tokens to build: at most 2000000"},
	} {
		c := endpointConfig(srv, "llm", "chat")
		tc.set(&c)
		err, _, _ := runConfig(t, c)
		wantRefused(t, err, tc.want)
	}
}
