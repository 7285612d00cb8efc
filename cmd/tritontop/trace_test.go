package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/trace"
)

// writeBurstyTrace writes a tritontop trace of n requests to simple over
// about n/1000 s: bursts of 10 at once every 20 ms, 10 more spread between.
func writeBurstyTrace(t *testing.T, path string, n int, stretch time.Duration) {
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

// activeSpan is the time from the first tick with requests to the last:
// those the schedule planned (planned, the trace's own times), or those
// that finished.
func activeSpan(run *record.Run, planned bool) time.Duration {
	var first, last time.Duration = -1, 0
	for _, s := range run.Snapshots {
		if planned && s.Load.Planned == 0 || !planned && s.Tick.Requests+s.Tick.Cancelled == 0 {
			continue
		}
		if first < 0 {
			first = s.Elapsed - s.Interval
		}
		last = s.Elapsed
	}
	return last - first
}

// TestTraceReplayCLI replays a trace of 2000 requests with bursts: every
// request is sent and the simulator counts each; the header says what was
// replayed; --trace-speed 2 halves the span.
func TestTraceReplayCLI(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "trace.jsonl")
	// About 2 s; under the race detector, which slows client and
	// simulator several times, 8 s.
	stretch := time.Duration(1)
	if raceEnabled {
		stretch = 4
	}
	writeBurstyTrace(t, tracePath, 2000, stretch)
	spans, achieved := map[string]time.Duration{}, map[string]time.Duration{}
	for _, speed := range []string{"1", "2"} {
		runFile := filepath.Join(dir, "run"+speed+".jsonl")
		before := simCount(t, srv, "simple")
		code, _, stderr := runCLI("-u", srv.GRPCAddr(), "--trace", tracePath, "--trace-speed", speed,
			"--tick", "100ms", "--record", runFile)
		if code != 0 {
			t.Fatalf("speed %s: exit %d: %s", speed, code, stderr)
		}
		run, err := record.ReadAll(runFile)
		if err != nil {
			t.Fatal(err)
		}
		var sent int64
		for _, s := range run.Snapshots {
			sent += s.Tick.Requests + s.Tick.Cancelled
		}
		if served := simCount(t, srv, "simple") - before; sent != 2000 || served != 2000 {
			t.Errorf("speed %s: sent %d, the simulator served %d; the trace has 2000", speed, sent, served)
		}
		p := run.Header.Plan
		if p == nil || p.Trace == nil || p.Trace.Format != "tritontop" || p.Planned != 2000 || run.Header.Model.Name != "simple" {
			t.Errorf("header plan %+v, model %q", p, run.Header.Model.Name)
		}
		spans[speed], achieved[speed] = activeSpan(run, true), activeSpan(run, false)
	}
	// The schedule's span halves; what a busy machine achieves is logged.
	t.Logf("scheduled spans %v and %v, achieved %v and %v", spans["1"], spans["2"], achieved["1"], achieved["2"])
	if r := float64(spans["2"]) / float64(spans["1"]); r < 0.4 || r > 0.6 {
		t.Errorf("scheduled spans %v at speed 1 and %v at speed 2: ratio %.2f, want 0.5", spans["1"], spans["2"], r)
	}
}

// TestTraceBadInput: bad traces and flags are usage errors of one line.
func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mooncake := write("mooncake.jsonl", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 4}\n")
	broken := write("broken.jsonl", "{\"tritontop_trace\":1}\n{\"t_us\": \"soon\"}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace", mooncake}, "does not name the model of its requests (a mooncake trace): give -m MODEL"},
		{[]string{"--trace", broken}, "line 2"},
		{[]string{"--trace", filepath.Join(dir, "none")}, "cannot read trace"},
		{[]string{"-m", "llm", "--trace", mooncake, "--trace-speed", "0"}, "--trace-speed 0 must be above 0"},
		{[]string{"-m", "llm", "--trace", mooncake, "--request-rate", "5"}, "drop --concurrency, --request-rate"},
		{[]string{"-m", "simple", "--trace-speed", "2"}, "add --trace FILE"},
		{[]string{"-m", "simple", "--request-intervals", write("iv.txt", "abc\n")}, "is not an interval in microseconds"},
	} {
		code, _, stderr := runCLI(append([]string{"-u", "127.0.0.1:1"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestTraceReplaysSequences: a trace's requests to a stateful model carry
// their own sequence ids, starts and ends; the replay sends them as they
// are, and the simulator's sequence batcher sees each sequence start and
// end with every request in order.
func TestTraceReplaysSequences(t *testing.T) {
	srv := startExampleSim(t)
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
	if code, _, stderr := runCLI("-u", srv.GRPCAddr(), "--trace", path, "--headless"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
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

// TestTraceFormatsCLI replays each foreign format end to end: perf_analyzer
// input data with timestamps (each data set sent at its time), a Mooncake
// trace to the LLM, and a Triton trace file; the simulator counts every
// request and the header names the format.
func TestTraceFormatsCLI(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var sets []string
	for i := range 30 {
		sets = append(sets, fmt.Sprintf(`{"INPUT0": [%d,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15], "INPUT1": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15], "timestamp": [%d]}`, i, 10*i))
	}
	pa := write("pa.json", `{"data": [`+strings.Join(sets, ",")+`]}`)
	mooncake := write("mc.jsonl", "{\"timestamp\": 0, \"input_length\": 20, \"output_length\": 3}\n{\"timestamp\": 50, \"input_length\": 40, \"output_length\": 2}\n")
	tritonTrace := write("triton.json", `[{"id": 1, "model_name": "simple", "model_version": 1},
 {"id": 1, "timestamps": [{"name": "GRPC_WAITREAD_END", "ns": 5000000000}, {"name": "REQUEST_START", "ns": 5000010000}]},
 {"id": 2, "model_name": "simple", "model_version": 1},
 {"id": 2, "timestamps": [{"name": "GRPC_WAITREAD_END", "ns": 5100000000}]}]`)
	for _, tc := range []struct {
		name, model, format string
		args                []string
		want                int64
	}{
		{"perf_analyzer", "simple", "perf_analyzer", []string{"-m", "simple", "--trace", pa}, 30},
		{"mooncake", "llm", "mooncake", []string{"-m", "llm", "--streaming", "--trace", mooncake}, 2},
		{"triton", "simple", "triton", []string{"--trace", tritonTrace}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runFile := filepath.Join(dir, tc.name+".jsonl")
			before := simCount(t, srv, tc.model)
			code, _, stderr := runCLI(append([]string{"-u", srv.GRPCAddr(), "--record", runFile}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := simCount(t, srv, tc.model) - before; got != tc.want {
				t.Errorf("the simulator served %d, the trace has %d", got, tc.want)
			}
			run, err := record.ReadAll(runFile)
			if err != nil {
				t.Fatal(err)
			}
			if p := run.Header.Plan; p == nil || p.Trace == nil || p.Trace.Format != tc.format || p.Planned != float64(tc.want) {
				t.Errorf("header plan %+v", p)
			}
		})
	}
}
