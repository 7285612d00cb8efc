package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
)

// mooncakeRecord is one line of a Mooncake trace.
type mooncakeRecord struct {
	at, in, out int
	ids         []int64
}

// testMooncakeTrace is a trace of 8 requests over 600 ms, a burst of two
// among them, whose prompts share blocks (of 16 tokens) as hash ids say,
// each prompt of its own length so that the server's record of it tells
// which it was.
var testMooncakeTrace = []mooncakeRecord{
	{0, 20, 3, []int64{1, 2}},
	{40, 33, 5, []int64{1, 2, 3}},
	{80, 47, 4, []int64{1, 2, 4}},
	{150, 52, 6, []int64{5, 6, 7, 8}},
	{150, 61, 2, nil},
	{300, 75, 7, []int64{1, 2, 3, 9, 10}},
	{450, 88, 3, []int64{11}},
	{600, 96, 8, []int64{1, 12, 13, 14, 15, 16}},
}

func writeMooncake(t *testing.T, path string, recs []mooncakeRecord) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		ids := ""
		if r.ids != nil {
			j, _ := json.Marshal(r.ids)
			ids = `, "hash_ids": ` + string(j)
		}
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d%s}`+"\n", r.at, r.in, r.out, ids)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMooncakeReplayOverTextEndpoints replays a Mooncake trace to the
// simulator's llm model over each text endpoint and over gRPC streaming:
// the server gets every request once, each with exactly its input_length
// in prompt tokens (counted by the server with the same tokenizer), asks
// for and generates exactly its output_length (max_tokens and
// min_tokens), the run's output token count is the server's, and the
// requests arrive at their times: their lateness against the trace
// varies by less than half the trace's span.
func TestMooncakeReplayOverTextEndpoints(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mooncake.jsonl")
	writeMooncake(t, path, testMooncakeTrace)
	byPrompt := map[int]mooncakeRecord{}
	for _, r := range testMooncakeTrace {
		byPrompt[r.in] = r
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"generate", []string{"-i", "http", "--endpoint", "generate"}},
		{"generate_stream", []string{"-i", "http", "--endpoint", "generate_stream"}},
		{"chat", []string{"-i", "http", "--endpoint", "chat", "--streaming"}},
		{"chat-one-body", []string{"-i", "http", "--endpoint", "chat"}},
		{"completions", []string{"-i", "http", "--endpoint", "completions", "--streaming"}},
		{"grpc-stream", []string{"--streaming"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startSim(t)
			url := srv.HTTPAddr()
			if !slices.Contains(tc.args, "http") {
				url = srv.GRPCAddr()
			}
			runFile := filepath.Join(dir, tc.name+".jsonl")
			args := append([]string{"-m", "llm", "-u", url, "--trace", path, "--isl-block-size", "16", "--record", runFile}, tc.args...)
			code, _, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			ls, err := srv.Engine().LLMStats("llm")
			if err != nil {
				t.Fatal(err)
			}
			if len(ls.Requests) != len(testMooncakeTrace) {
				t.Fatalf("the server finished %d requests, the trace has %d", len(ls.Requests), len(testMooncakeTrace))
			}
			seen := map[int]bool{}
			tokens := 0
			first := slices.MinFunc(ls.Requests, func(a, b sim.LLMRequest) int { return int(a.Arrival - b.Arrival) }).Arrival
			var late []time.Duration
			for _, r := range ls.Requests {
				want, ok := byPrompt[r.PromptTokens]
				if !ok || seen[r.PromptTokens] {
					t.Fatalf("the server got a prompt of %d tokens: the trace has none (or it came twice)", r.PromptTokens)
				}
				seen[r.PromptTokens] = true
				if r.MaxTokens != want.out || r.Tokens != want.out {
					t.Errorf("request of %d prompt tokens: max_tokens %d, %d tokens generated; the trace says %d", r.PromptTokens, r.MaxTokens, r.Tokens, want.out)
				}
				tokens += r.Tokens
				late = append(late, r.Arrival-first-time.Duration(want.at)*time.Millisecond)
			}
			spread := slices.Max(late) - slices.Min(late)
			t.Logf("arrivals against the trace: %v (spread %v)", late, spread)
			if spread > 300*time.Millisecond {
				t.Errorf("the arrivals' lateness against the trace spreads over %v, half the trace's 600 ms span", spread)
			}
			run, err := record.ReadAll(runFile)
			if err != nil {
				t.Fatal(err)
			}
			st := run.Snapshots[len(run.Snapshots)-1].Run.Streaming
			if st == nil || st.OutputTokens != int64(tokens) || st.Requests != int64(len(testMooncakeTrace)) {
				t.Errorf("run file: streaming %+v; the server generated %d tokens in %d requests", st, tokens, len(testMooncakeTrace))
			}
		})
	}
}

// TestMooncakeBlockSizeBadInput: a block size that cannot be, or one
// without a Mooncake trace, is a usage error of one line.
func TestMooncakeBlockSizeBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mc.jsonl")
	writeMooncake(t, path, testMooncakeTrace[:2])
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace", path, "--isl-block-size", "0"}, "--isl-block-size 0 must be above 0"},
		{[]string{"--isl-block-size", "64"}, "--isl-block-size sets the prompt blocks of a Mooncake trace: add --trace FILE.jsonl"},
	} {
		code, _, stderr := runCLI(append([]string{"-m", "llm", "-u", "127.0.0.1:1"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
