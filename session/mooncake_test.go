package session_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// mooncakeRecord is one line of a Mooncake trace.
type mooncakeRecord struct {
	at, in, out int
	ids         []int64
}

// mooncakeTestTrace is a trace of 8 requests over 600 ms, a burst of two
// among them, whose prompts share blocks (of 16 tokens) as hash ids say,
// each prompt of its own length so that the server's record of it tells
// which it was.
var mooncakeTestTrace = []mooncakeRecord{
	{0, 20, 3, []int64{1, 2}},
	{40, 33, 5, []int64{1, 2, 3}},
	{80, 47, 4, []int64{1, 2, 4}},
	{150, 52, 6, []int64{5, 6, 7, 8}},
	{150, 61, 2, nil},
	{300, 75, 7, []int64{1, 2, 3, 9, 10}},
	{450, 88, 3, []int64{11}},
	{600, 96, 8, []int64{1, 12, 13, 14, 15, 16}},
}

// mooncakeWrite writes recs as a Mooncake JSONL trace in dir.
func mooncakeWrite(t *testing.T, dir string, recs []mooncakeRecord) string {
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
	return writeFile(t, dir, "mooncake.jsonl", b.String())
}

// mooncakeEndpoint is a way TestMooncakeReplayOverTextEndpoints sends the
// trace: an HTTP text endpoint ("": gRPC), streaming or not.
type mooncakeEndpoint struct {
	name      string
	endpoint  string
	streaming bool
}

// TestMooncakeReplayOverTextEndpoints replays a Mooncake trace to the
// simulator's llm model over each text endpoint and over gRPC streaming,
// each against its own simulator: the server gets every request once,
// each with exactly its input_length in prompt tokens (counted by the
// server with the same tokenizer), asks for and generates exactly its
// output_length (max_tokens and min_tokens), the run's output token count
// is the server's, and the requests arrive at their times: the server
// holds the trace's overlapping requests at once, and their lateness
// against the trace varies by less than half the trace's span. A busy
// host can stall the client past that for a moment, so the replay is made
// up to three times, against a fresh simulator, and the lateness holds
// when one replay meets it; everything else holds in every replay.
func TestMooncakeReplayOverTextEndpoints(t *testing.T) {
	t.Parallel()
	path := mooncakeWrite(t, t.TempDir(), mooncakeTestTrace)
	for _, tc := range []mooncakeEndpoint{
		{"generate", "generate", false},
		{"generate_stream", "generate_stream", false},
		{"chat", "chat", true},
		{"chat-one-body", "chat", false},
		{"completions", "completions", true},
		{"grpc-stream", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var spreads []time.Duration
			for range 3 {
				spread := mooncakeReplay(t, tc, path)
				if spread <= 300*time.Millisecond {
					return
				}
				spreads = append(spreads, spread)
			}
			t.Errorf("the arrivals' lateness against the trace spreads over %v in three replays: more than half the trace's 600 ms span", spreads)
		})
	}
}

// mooncakeReplay replays the trace at path over e against a fresh
// simulator, checks what the server and the run file counted, and returns
// how far the requests' lateness against the trace spreads.
func mooncakeReplay(t *testing.T, e mooncakeEndpoint, path string) time.Duration {
	t.Helper()
	byPrompt := map[int]mooncakeRecord{}
	for _, r := range mooncakeTestTrace {
		byPrompt[r.in] = r
	}
	srv := startSim(t)
	c := session.Defaults()
	c.ModelArgs, c.URL, c.Streaming = []string{"llm"}, srv.GRPCAddr(), e.streaming
	if e.endpoint != "" {
		c.URL, c.Protocol, c.Endpoint.Name = srv.HTTPAddr(), "http", e.endpoint
	}
	c.Shape.Trace, c.Mooncake.BlockTokens = path, 16
	c.Tick, c.Headless = quickTick, true
	run, _ := recordRun(t, c)
	ls, err := srv.Engine().LLMStats("llm")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Requests) != len(mooncakeTestTrace) {
		t.Fatalf("the server finished %d requests, the trace has %d", len(ls.Requests), len(mooncakeTestTrace))
	}
	seen := map[int]bool{}
	tokens, together := 0, 0
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
		together = max(together, r.InFlightAtArrival)
		late = append(late, r.Arrival-first-time.Duration(want.at)*time.Millisecond)
	}
	spread := slices.Max(late) - slices.Min(late)
	t.Logf("arrivals against the trace: %v (spread %v); at most %d in flight", late, spread, together)
	// The trace's requests overlap (two are due at once): sent at their
	// times, not one after the other, the server holds several at once
	// however late a busy host makes them.
	if together < 2 {
		t.Errorf("the server never held two requests at once: the replay sent them one after the other")
	}
	st := run.Snapshots[len(run.Snapshots)-1].Run.Streaming
	if st == nil || st.OutputTokens != int64(tokens) || st.Requests != int64(len(mooncakeTestTrace)) {
		t.Errorf("run file: streaming %+v; the server generated %d tokens in %d requests", st, tokens, len(mooncakeTestTrace))
	}
	return spread
}

// TestMooncakeBlockSizeBadInput: a block size that cannot be, or one
// without a Mooncake trace, is a usage error of one line, as the command
// line gives it (Given) and as a program does (Given nil: a block size
// other than the default counts as given).
func TestMooncakeBlockSizeBadInput(t *testing.T) {
	t.Parallel()
	path := mooncakeWrite(t, t.TempDir(), mooncakeTestTrace[:2])
	for _, tc := range []struct {
		name string
		set  func(*session.Config)
		want string
	}{
		{"zero", func(c *session.Config) {
			c.Shape.Trace, c.Mooncake.BlockTokens = path, 0
			c.Given = traceGiven("m", "u", "trace", "isl-block-size")
		}, "--isl-block-size 0 must be above 0"},
		{"without a trace", func(c *session.Config) {
			c.Mooncake.BlockTokens = 64
			c.Given = traceGiven("m", "u", "isl-block-size")
		}, "--isl-block-size sets the prompt blocks of a Mooncake trace: add --trace FILE.jsonl"},
		{"without a trace, Given nil", func(c *session.Config) { c.Mooncake.BlockTokens = 64 },
			"--isl-block-size sets the prompt blocks of a Mooncake trace: add --trace FILE.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := session.Defaults()
			c.ModelArgs, c.URL, c.Headless = []string{"llm"}, "127.0.0.1:1", true
			c.ConnectTimeout = 100 * time.Millisecond
			tc.set(&c)
			err, _, _ := runConfig(t, c)
			wantRefused(t, err, tc.want)
		})
	}
}
