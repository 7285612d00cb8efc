package driver

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// meanOf is the mean of ds, 0 for none.
func meanOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// within reports whether got is within frac of want.
func within(got, want time.Duration, frac float64) bool {
	d := float64(got - want)
	return d <= frac*float64(want) && -d <= frac*float64(want)
}

// TestTextEndpointsAgreeWithTheSimulator drives the simulator's LLM over
// each HTTP text endpoint in closed loop and holds the client's account of
// every request to the server's own (sim.LLMStats): the output tokens of
// each request, counted by the client from the stream (and from OpenAI's
// usage, which must agree), or without streaming from the usage or the
// answer's text tokenized, equal the tokens the model generated; the
// client's mean time to first token and mean inter-token latency are
// within 10% of the server's (from each request's arrival), and without
// streaming its time to the one answer within 10% of the server's time to
// the final response.
func TestTextEndpointsAgreeWithTheSimulator(t *testing.T) {
	for _, c := range []struct {
		endpoint triton.Endpoint
		stream   bool
	}{
		{triton.EndpointGenerateStream, true},
		{triton.EndpointChat, true},
		{triton.EndpointCompletions, true},
		{triton.EndpointGenerate, false},
		{triton.EndpointChat, false},
		{triton.EndpointCompletions, false},
	} {
		name := string(c.endpoint)
		if !c.stream {
			name += "-no-stream"
		}
		t.Run(name, func(t *testing.T) {
			// Slow enough that the loopback's and the HTTP stack's
			// share of a time stays far under 10%.
			s := startLLMSim(t, sim.LLMSpec{PrefillUS: 40000, PrefillPerTokenUS: 100, TokenUS: 15000,
				MaxSequences: 64, OutputTokens: sim.LengthSpec{Mean: 8, StdDev: 3, Min: 2, Max: 14}})
			cl, err := triton.Dial(context.Background(), s.HTTPAddr(), triton.Options{Protocol: "http", Endpoint: c.endpoint, Stream: c.stream})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Close() })
			reqs := requests(t, cl, "llm", triton.InputOptions{PromptTokens: 30, Parameters: map[string]any{"max_tokens": int64(12)}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			results := startFor(t, ctx, 1500*time.Millisecond, Options{Client: cl, Requests: reqs,
				Streaming: true, Streams: 2, Decoupled: true,
				Load: load.Target{Mode: load.Concurrency, Concurrency: 4}}).wait(t)

			ls, err := s.Engine().LLMStats("llm")
			if err != nil {
				t.Fatal(err)
			}
			var simTokens []int
			var simFirst, simGaps, simFinal []time.Duration
			for _, r := range ls.Requests {
				if r.Outcome != sim.LLMDone {
					t.Fatalf("server request %+v did not end well", r)
				}
				if r.Stream != c.stream || r.PromptTokens != 30 {
					t.Fatalf("server request %+v: stream %t and 30 prompt tokens expected", r, c.stream)
				}
				simTokens = append(simTokens, r.Tokens)
				simFirst = append(simFirst, r.FirstResponse)
				simGaps = append(simGaps, r.Gaps...)
				simFinal = append(simFinal, r.Final)
			}
			var cliTokens []int
			var cliFirst, cliGaps, cliLatency []time.Duration
			for _, r := range results {
				if !r.OK() {
					t.Fatalf("result %+v: %v", r, r.Err)
				}
				cliLatency = append(cliLatency, r.Done-r.Sent)
				checkStreamPhases(t, r)
				if r.Timing == nil || len(r.Timing.Gaps) != int(r.Responses)-1 {
					t.Fatalf("result %+v: timing %+v", r, r.Timing)
				}
				if !c.stream {
					if r.Responses != 1 {
						t.Fatalf("an answer in one body came as %d responses", r.Responses)
					}
					cliTokens = append(cliTokens, int(r.Timing.Tokens))
					cliFirst = append(cliFirst, r.Timing.First-r.Sent)
					continue
				}
				if c.endpoint != triton.EndpointGenerateStream && int(r.Timing.Tokens) != int(r.Responses) {
					t.Fatalf("usage says %d tokens, the stream had %d", r.Timing.Tokens, r.Responses)
				}
				cliTokens = append(cliTokens, int(r.Responses))
				cliFirst = append(cliFirst, r.Timing.First-r.Sent)
				cliGaps = append(cliGaps, r.Timing.Gaps...)
			}
			if len(results) < 12 || len(results) != len(ls.Requests) {
				t.Fatalf("%d results, %d requests at the server", len(results), len(ls.Requests))
			}
			slices.Sort(cliTokens)
			slices.Sort(simTokens)
			if !slices.Equal(cliTokens, simTokens) {
				t.Errorf("tokens per request: client %v, server %v", cliTokens, simTokens)
			}
			if !c.stream {
				if got, want := meanOf(cliFirst), meanOf(simFinal); !within(got, want, 0.10) {
					t.Errorf("mean time to the answer: client %v, server %v", got, want)
				}
				if got, want := meanOf(cliLatency), meanOf(simFinal); !within(got, want, 0.10) {
					t.Errorf("mean latency: client %v, server %v", got, want)
				}
				return
			}
			if got, want := meanOf(cliFirst), meanOf(simFirst); !within(got, want, 0.10) {
				t.Errorf("mean time to first token: client %v, server %v", got, want)
			}
			if got, want := meanOf(cliGaps), meanOf(simGaps); !within(got, want, 0.10) {
				t.Errorf("mean inter-token latency: client %v, server %v", got, want)
			}
			t.Logf("%d requests; TTFT client %v server %v; ITL client %v server %v", len(results),
				meanOf(cliFirst), meanOf(simFirst), meanOf(cliGaps), meanOf(simGaps))
		})
	}
}

// checkStreamPhases: a successful request over a stream has its Client
// Send and Client Recv measured, and they fit in its latency together
// (perf_analyzer's decomposition: send, then the wait, then the receive
// of the final response).
func checkStreamPhases(t *testing.T, r Result) {
	t.Helper()
	send, recv := time.Duration(r.ClientSend), time.Duration(r.ClientRecv)
	if send <= 0 || recv <= 0 || send+recv > r.Done-r.Sent {
		t.Errorf("result sent at %v done at %v: client send %v, recv %v", r.Sent, r.Done, send, recv)
	}
}
