package interop_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
)

// TestStreaming runs tritontop over gRPC streams against a real Triton's
// decoupled models, each request's input data given in perf_analyzer's
// JSON:
//
//   - repeat_int32 with IN [1 2 3 4] and DELAY [10 10 10 10] ms: the model
//     sleeps 10 ms before each of its 4 responses, so a request's first
//     response comes at least 10 ms after its send and its last at least
//     30 ms after its first;
//   - square_int32 with IN 3: 3 responses a request.
//
// Each run's counts and server times are Triton's (checkExact); every
// request got its responses (responses per request exactly 4 or 3, the
// responses 4 or 3 times the requests); the time to first response is
// the first's, not the last's (repeat: at least 10 ms; the latency, to
// the last, at least 40 ms, and on average at least 15 ms over the time
// to the first, which the server puts 30 ms apart); and the responses are
// not called tokens in the summary.
//
// The square backend reports no request statistics, only response_stats:
// Triton's inference_stats stay 0 and so do tritontop's server numbers;
// its response_stats count every response tritontop received, and the
// first of every request. The repeat backend reports request statistics
// and no response_stats, and tritontop has none.
func TestStreaming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model, data string
		responses   int64
		firstAfter  time.Duration // the server's least time to a first response
		lastAfter   time.Duration // its least time from the first to the last
		// requestStats: the backend reports request statistics
		// (inference_stats); square reports only response_stats.
		requestStats bool
	}{
		{"repeat_int32", `{"data": [{"IN": {"content": [1, 2, 3, 4], "shape": [4]}, "DELAY": {"content": [10, 10, 10, 10], "shape": [4]}, "WAIT": [0]}]}`,
			4, 10 * time.Millisecond, 30 * time.Millisecond, true},
		{"square_int32", `{"data": [{"IN": [3]}]}`, 3, 0, 0, false},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			wallTime(t)
			srv := interop.Start(t, interop.Options{Models: []string{tc.model}})
			data := filepath.Join(t.TempDir(), "data.json")
			if err := os.WriteFile(data, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			c := configFor(srv, "grpc", tc.model)
			c.Streaming, c.Concurrency, c.InputData = true, 4, data
			run, d, stdout := measure(t, srv, tc.model, c)
			sum := run.Summary
			if tc.requestStats {
				checkExact(t, "the run", sum.Client, sum.Server, d)
			} else if sv := sum.Server; d.Inference.Success.Count != 0 || sv.SuccessCount != 0 || sv.Request != 0 {
				t.Errorf("Triton counted %d requests, tritontop says it counted %d (%v each); the backend reports none",
					d.Inference.Success.Count, sv.SuccessCount, sv.Request)
			}
			checkStreaming(t, sum, tc.responses, tc.firstAfter, tc.lastAfter)
			if !strings.Contains(stdout, "Response Throughput:") || strings.Contains(strings.ToLower(stdout), "token") {
				t.Errorf("the summary of a model that generates no text speaks of tokens, or not of responses:\n%s", stdout)
			}
			checkResponseStats(t, sum, d, !tc.requestStats)
		})
	}
}

// checkStreaming holds a decoupled model's streaming numbers to what the
// model does: n responses for every request, none of them a token, the
// first at least firstAfter after the send, the last at least lastAfter
// after the first.
func checkStreaming(t *testing.T, sum *record.Summary, n int64, firstAfter, lastAfter time.Duration) {
	t.Helper()
	c, sc := sum.Client, sum.Client.Streaming
	if sc == nil {
		t.Fatal("no streaming statistics")
	}
	t.Logf("streaming: %d requests, %d responses, %+v a request; TTFT %+v; latency %+v", sc.Requests, sc.Responses, sc.PerRequest, sc.TTFT, c.Latency)
	if sc.Requests != c.Successes || sc.Responses != n*c.Successes || sc.PerRequest.Min != n || sc.PerRequest.Max != n || sc.OutputTokens != 0 {
		t.Errorf("%d requests timed of %d, %d responses, %+v a request, %d tokens; want %d responses each and no token",
			sc.Requests, c.Successes, sc.Responses, sc.PerRequest, sc.OutputTokens, n)
	}
	if sc.TTFT.Count != c.Successes || sc.TTFT.Min < firstAfter || sc.TTFT.Max > c.Latency.Max {
		t.Errorf("time to first response %+v over %d requests, want each at least %v", sc.TTFT, c.Successes, firstAfter)
	}
	// The server's sleeps bound each request's own times from below; a
	// busy client may receive any response late, so the first's lead over
	// the last is held on average, with room for that.
	if c.Latency.Min < firstAfter+lastAfter || c.Latency.Mean-sc.TTFT.Mean < lastAfter/2 {
		t.Errorf("latency %+v, time to first response %+v: the last response comes at least %v after the first",
			c.Latency, sc.TTFT, lastAfter)
	}
	if sc.ITL.Count != (n-1)*c.Successes {
		t.Errorf("%d times between responses, want %d for %d requests of %d responses", sc.ITL.Count, (n-1)*c.Successes, c.Successes, n)
	}
}

// checkResponseStats holds tritontop's account of Triton's response_stats
// against their deltas: none where the model reports none, else the same
// counts, and (want) every response tritontop received counted by Triton,
// the first of each request under index 0.
func checkResponseStats(t *testing.T, sum *record.Summary, d interop.ModelStats, want bool) {
	t.Helper()
	var success, empty int64
	for _, r := range d.Responses {
		success += int64(r.Success.Count)
		empty += int64(r.EmptyResponse.Count)
	}
	r := sum.Server.Responses
	t.Logf("Triton's response_stats deltas: %d indexes, %d successful responses, %d empty; tritontop: %+v", len(d.Responses), success, empty, r)
	switch {
	case len(d.Responses) == 0 && want:
		t.Errorf("Triton reported no response_stats")
	case len(d.Responses) == 0 && r != nil:
		t.Errorf("tritontop has response statistics %+v; Triton reported none", r)
	case len(d.Responses) == 0:
	case r == nil || r.Success != success || r.Empty != empty || r.FirstCount != int64(d.Responses["0"].ComputeInfer.Count):
		t.Errorf("tritontop's response statistics %+v; Triton's deltas: %d successful, %d empty, %d first", r, success, empty, d.Responses["0"].ComputeInfer.Count)
	case success != sum.Client.Streaming.Responses || int64(d.Responses["0"].Success.Count) != sum.Client.Successes:
		t.Errorf("Triton sent %d responses, %d of them first ones; tritontop received %d for %d requests",
			success, d.Responses["0"].Success.Count, sum.Client.Streaming.Responses, sum.Client.Successes)
	}
}
