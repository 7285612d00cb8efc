package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/trace"
)

// traceWriteBursty writes a tritontop trace of n requests to simple over
// about n/1000 s: bursts of 10 at once every 20 ms, 10 more spread between.
func traceWriteBursty(t *testing.T, path string, n int, stretch time.Duration) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w, err := trace.NewWriter(f, trace.Header{StartTime: start, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	in := []trace.Input{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Bytes: 64},
		{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Bytes: 64}}
	for i := range n {
		at := time.Duration(i/20) * 20 * time.Millisecond
		if k := i % 20; k >= 10 {
			at += time.Duration(k-9) * 1800 * time.Microsecond
		}
		if err := w.Write(trace.Request{Model: "simple", Inputs: in}, start.Add(at*stretch)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// traceActiveSpan is the time from the first tick with requests to the
// last: those the schedule planned (planned, the trace's own times), or
// those that finished. slack is the length of those two ticks: the span
// is known to within it.
func traceActiveSpan(run *record.Run, planned bool) (span, slack time.Duration) {
	var first, last time.Duration = -1, 0
	var firstTick, lastTick time.Duration
	for _, s := range run.Snapshots {
		if planned && s.Load.Planned == 0 || !planned && s.Tick.Requests+s.Tick.Cancelled == 0 {
			continue
		}
		if first < 0 {
			first, firstTick = s.Elapsed-s.Interval, s.Interval
		}
		last, lastTick = s.Elapsed, s.Interval
	}
	return last - first, firstTick + lastTick
}

// traceConfig is a headless replay of the trace at path against srv's
// simple model over gRPC (the trace names the model).
func traceConfig(t *testing.T, url, path string) session.Config {
	t.Helper()
	c := session.Defaults()
	c.URL, c.Shape.Trace = url, path
	c.Tick, c.Headless = quickTick, true
	return c
}

// TestTraceReplay replays a trace of 1000 requests with bursts: every
// request is sent and the simulator counts each; the header says what was
// replayed; TraceSpeed 2 (--trace-speed 2) halves the span. The two speeds
// run at once, each against its own simulator, with a 25 ms tick so that
// the spans' ratio is not lost in the ticks' rounding.
func TestTraceReplay(t *testing.T) {
	t.Parallel()
	const n = 1000
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	// About 1 s; under the race detector, which slows client and
	// simulator several times, 4 s.
	stretch := time.Duration(1)
	if testenv.Race {
		stretch = 4
	}
	traceWriteBursty(t, tracePath, n, stretch)
	speeds := []float64{1, 2}
	spans, slack := make([]time.Duration, len(speeds)), make([]time.Duration, len(speeds))
	achieved := make([]time.Duration, len(speeds))
	t.Run("speeds", func(t *testing.T) {
		for i, speed := range speeds {
			t.Run(fmt.Sprint(speed), func(t *testing.T) {
				t.Parallel()
				srv := startSim(t)
				c := traceConfig(t, srv.GRPCAddr(), tracePath)
				c.Shape.TraceSpeed, c.Tick = speed, 25*time.Millisecond
				run, stderr := recordRun(t, c)
				var sent int64
				for _, s := range run.Snapshots {
					sent += s.Tick.Requests + s.Tick.Cancelled
				}
				if served := traceServed(t, srv, "simple"); sent != n || served != n {
					t.Errorf("speed %v: sent %d, the simulator served %d; the trace has %d\n%s", speed, sent, served, n, stderr)
				}
				p := run.Header.Plan
				if p == nil || p.Trace == nil || p.Trace.Format != "tritontop" || p.Planned != n || run.Header.Model.Name != "simple" {
					t.Errorf("header plan %+v, model %q", p, run.Header.Model.Name)
				}
				spans[i], slack[i] = traceActiveSpan(run, true)
				achieved[i], _ = traceActiveSpan(run, false)
			})
		}
	})
	if t.Failed() {
		return
	}
	// The schedule's span halves; what a busy machine achieves is logged.
	// Each span is known to within its end ticks, which a loaded host
	// stretches: the ratio holds when a ratio within what the ticks allow
	// is 0.5 give or take 0.1.
	t.Logf("scheduled spans %v and %v (to within %v and %v), achieved %v and %v",
		spans[0], spans[1], slack[0], slack[1], achieved[0], achieved[1])
	low := float64(spans[1]-slack[1]) / float64(spans[0])
	high := float64(spans[1]) / float64(spans[0]-slack[0])
	if high < 0.4 || low > 0.6 {
		t.Errorf("scheduled spans %v at speed 1 and %v at speed 2 (to within %v and %v): ratio %.2f to %.2f, want 0.5",
			spans[0], spans[1], slack[0], slack[1], low, high)
	}
}

// TestTraceBadInput: bad traces and settings are usage errors of one line,
// refused before the server is dialled.
func TestTraceBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mooncake := writeFile(t, dir, "mooncake.jsonl", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 4}\n")
	broken := writeFile(t, dir, "broken.jsonl", "{\"tritontop_trace\":1}\n{\"t_us\": \"soon\"}\n")
	intervals := writeFile(t, dir, "iv.txt", "abc\n")
	for _, tc := range []struct {
		name string
		set  func(*session.Config)
		want string
	}{
		{"no model", func(c *session.Config) { c.Shape.Trace = mooncake }, "does not name the model of its requests (a mooncake trace): give -m MODEL"},
		{"broken", func(c *session.Config) { c.Shape.Trace = broken }, "line 2"},
		{"missing", func(c *session.Config) { c.Shape.Trace = filepath.Join(dir, "none") }, "cannot read trace"},
		{"speed 0", func(c *session.Config) {
			c.ModelArgs, c.Shape.Trace, c.Shape.TraceSpeed = []string{"llm"}, mooncake, 0
			c.Given = traceGiven("u", "m", "trace", "trace-speed")
		}, "--trace-speed 0 must be above 0"},
		{"rate", func(c *session.Config) {
			c.ModelArgs, c.Shape.Trace, c.RequestRate = []string{"llm"}, mooncake, 5
		}, "drop --concurrency, --request-rate"},
		{"speed without trace", func(c *session.Config) {
			c.ModelArgs, c.Shape.TraceSpeed = []string{"simple"}, 2
		}, "add --trace FILE"},
		{"intervals", func(c *session.Config) {
			c.ModelArgs, c.Shape.RequestIntervals = []string{"simple"}, intervals
		}, "is not an interval in microseconds"},
	} {
		c := session.Defaults()
		c.URL, c.Headless = "127.0.0.1:1", true
		tc.set(&c)
		err, stdout, _ := runConfig(t, c)
		wantRefused(t, err, tc.want)
		if stdout != "" {
			t.Errorf("%s: a refused run printed %q", tc.name, stdout)
		}
	}
}

// TestTraceReplaysSequences: a trace's requests to a stateful model carry
// their own sequence ids, starts and ends; the replay sends them as they
// are, and the simulator's sequence batcher sees each sequence start and
// end with every request in order. The replay sends one request at a time
// (MaxInflight 1, --max-inflight 1): a client that falls behind on a
// loaded host sends the requests that came due at once, and two of one
// sequence sent at once may reach the server in either order.
func TestTraceReplaysSequences(t *testing.T) {
	t.Parallel()
	srv := seqExampleSim(t)
	path := filepath.Join(t.TempDir(), "seq.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w, err := trace.NewWriter(f, trace.Header{StartTime: start})
	if err != nil {
		t.Fatal(err)
	}
	in := []trace.Input{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}, Bytes: 4}}
	const sequences, length = 3, 6
	for i := range length {
		for s := range sequences {
			r := trace.Request{Model: "simple_sequence", Inputs: in, Parameters: map[string]any{
				"sequence_id": int64(100 + s), "sequence_start": i == 0, "sequence_end": i == length-1}}
			if err := w.Write(r, start.Add(time.Duration(i*sequences+s)*20*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c := traceConfig(t, srv.GRPCAddr(), path)
	c.MaxInflight = 1
	runOK(t, c)
	st, err := srv.Engine().SequenceStats("simple_sequence")
	if err != nil {
		t.Fatal(err)
	}
	if st.Started != sequences || st.Ended != sequences || st.OutOfOrder != 0 || st.Active != 0 {
		t.Errorf("sequence stats %+v, want %d started and ended in order", st, sequences)
	}
	for _, rec := range st.Sequences {
		if rec.Requests != length {
			t.Errorf("sequence %s: %d requests, the trace has %d", rec.CorrelationID, rec.Requests, length)
		}
	}
}

// TestTraceFormats replays each foreign format end to end: perf_analyzer
// input data with timestamps (each data set sent at its time), a Mooncake
// trace to the LLM, and a Triton trace file; the simulator counts every
// request and the header names the format.
func TestTraceFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var sets []string
	for i := range 30 {
		sets = append(sets, fmt.Sprintf(`{"INPUT0": [%d,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15], "INPUT1": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15], "timestamp": [%d]}`, i, 10*i))
	}
	pa := writeFile(t, dir, "pa.json", `{"data": [`+strings.Join(sets, ",")+`]}`)
	mooncake := writeFile(t, dir, "mc.jsonl", "{\"timestamp\": 0, \"input_length\": 20, \"output_length\": 3}\n{\"timestamp\": 50, \"input_length\": 40, \"output_length\": 2}\n")
	tritonTrace := writeFile(t, dir, "triton.json", `[{"id": 1, "model_name": "simple", "model_version": 1},
 {"id": 1, "timestamps": [{"name": "GRPC_WAITREAD_END", "ns": 5000000000}, {"name": "REQUEST_START", "ns": 5000010000}]},
 {"id": 2, "model_name": "simple", "model_version": 1},
 {"id": 2, "timestamps": [{"name": "GRPC_WAITREAD_END", "ns": 5100000000}]}]`)
	for _, tc := range []struct {
		name, model, format, path string
		set                       func(*session.Config)
		want                      int64
	}{
		{"perf_analyzer", "simple", "perf_analyzer", pa, func(c *session.Config) { c.ModelArgs = []string{"simple"} }, 30},
		{"mooncake", "llm", "mooncake", mooncake, func(c *session.Config) { c.ModelArgs, c.Streaming = []string{"llm"}, true }, 2},
		{"triton", "simple", "triton", tritonTrace, func(*session.Config) {}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t)
			c := traceConfig(t, srv.GRPCAddr(), tc.path)
			tc.set(&c)
			run, _ := recordRun(t, c)
			if got := traceServed(t, srv, tc.model); got != tc.want {
				t.Errorf("the simulator served %d, the trace has %d", got, tc.want)
			}
			if p := run.Header.Plan; p == nil || p.Trace == nil || p.Trace.Format != tc.format || p.Planned != float64(tc.want) {
				t.Errorf("header plan %+v", p)
			}
		})
	}
}
