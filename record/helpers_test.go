package record

import (
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/stats"
)

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// testHeader is a header as the CLI would build it.
func testHeader() Header {
	return Header{
		TritontopVersion: "0.0.0-test",
		Args:             []string{"-m", "resnet50", "-H", "Authorization: Bearer abc123", "--concurrency-range", "1:2"},
		StartTime:        t0,
		Server: ServerInfo{
			URL:       "127.0.0.1:8001",
			Protocol:  "grpc",
			Metadata:  []byte(`{"name":"triton","version":"2.73.0","extensions":["classification","statistics"]}`),
			Simulated: true,
		},
		Model: ModelInfo{
			Name:     "resnet50",
			Version:  "1",
			Metadata: []byte(`{"name":"resnet50","versions":["1"],"platform":"onnxruntime_onnx"}`),
			Config:   []byte(`{"name":"resnet50","max_batch_size":32,"dynamic_batching":{}}`),
		},
		Load:     stats.Load{Mode: "concurrency", Concurrency: 1},
		Interval: time.Second,
		Window:   10 * time.Second,
	}
}

// encodeLatencies returns a histogram of latencies (µs) in the encoding a
// Snapshot carries, and their exact summary.
func encodeLatencies(t testing.TB, us ...int64) (string, stats.Latency) {
	helper(t)
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	var sum int64
	for _, v := range us {
		if err := h.RecordValue(v); err != nil {
			fatal(t, err)
		}
		sum += v
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		fatal(t, err)
	}
	// Like the live aggregator: exact min, max and mean, percentiles from
	// the histogram clamped into [min, max].
	l := stats.LatencyFromHistogram(h)
	lo, hi := slices.Min(us), slices.Max(us)
	l.Min = time.Duration(lo) * time.Microsecond
	l.Max = time.Duration(hi) * time.Microsecond
	l.Mean = time.Duration(sum) * time.Microsecond / time.Duration(len(us))
	for _, p := range []*time.Duration{&l.P50, &l.P90, &l.P95, &l.P99, &l.P999} {
		*p = min(max(*p, l.Min), l.Max)
	}
	return string(b), l
}

// repeat returns n copies of v.
func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// tick builds the seq-th one-second snapshot at a concurrency, with n
// successful requests of latency us each and the server breakdown given in
// µs (request, queue, compute input, infer, output).
func tick(t testing.TB, seq, concurrency, n int, us int64, server [5]int64) stats.Snapshot {
	helper(t)
	hist, lat := encodeLatencies(t, repeat(us, n)...)
	s := stats.Snapshot{
		Seq:      seq,
		Time:     t0.Add(time.Duration(seq) * time.Second),
		Elapsed:  time.Duration(seq) * time.Second,
		Interval: time.Second,
		Load:     stats.Load{Mode: "concurrency", Concurrency: concurrency, InFlight: concurrency},
		Tick: stats.ClientStats{
			Duration:     time.Second,
			Requests:     int64(n),
			Successes:    int64(n),
			Inferences:   int64(n),
			RequestsPerS: float64(n),
			InferPerS:    float64(n),
			Latency:      lat,
		},
		Server: stats.ServerStats{
			Available:      true,
			Model:          "resnet50",
			SuccessCount:   int64(n),
			InferenceCount: int64(n),
			ExecutionCount: int64(n),
			Request:        time.Duration(server[0]) * time.Microsecond,
			Queue:          time.Duration(server[1]) * time.Microsecond,
			ComputeInput:   time.Duration(server[2]) * time.Microsecond,
			ComputeInfer:   time.Duration(server[3]) * time.Microsecond,
			ComputeOutput:  time.Duration(server[4]) * time.Microsecond,
			AvgBatch:       1,
			Batches:        []stats.BatchCount{{Size: 1, Count: int64(n)}},
		},
		System:    stats.SystemStats{ProcessCPU: 0.5, NumCPU: 4, HostCPU: 0.25},
		Histogram: hist,
	}
	s.Server.Overhead = s.Server.Request - s.Server.Queue - s.Server.ComputeInput - s.Server.ComputeInfer - s.Server.ComputeOutput
	return s
}

// withRun fills each snapshot's Run with the running totals, as the
// aggregator does.
func withRun(snaps []stats.Snapshot) []stats.Snapshot {
	var run stats.ClientStats
	for i := range snaps {
		tk := snaps[i].Tick
		run.Duration += tk.Duration
		run.Requests += tk.Requests
		run.Successes += tk.Successes
		run.Inferences += tk.Inferences
		run.Errors += tk.Errors
		run.InferPerS = float64(run.Inferences) / run.Duration.Seconds()
		run.RequestsPerS = float64(run.Requests) / run.Duration.Seconds()
		run.Latency = tk.Latency
		snaps[i].Run = run
	}
	return snaps
}

// helper and fatal accept a nil testing.TB for the re-executed child of the
// kill test, which runs outside any test.
func helper(t testing.TB) {
	if t != nil {
		t.Helper()
	}
}

func fatal(t testing.TB, err error) {
	if t == nil {
		panic(err)
	}
	t.Helper()
	t.Fatal(err)
}
