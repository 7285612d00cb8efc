// Package statstest builds stats.Snapshots for tests of the packages that
// read them (record, report, plan): ticks with known latencies, server times
// and histograms in the encoding a live run writes.
package statstest

import (
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// T0 is the wall-clock start of the runs built here.
var T0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// TB is the part of testing.TB the builders use; a nil TB panics on error,
// for code that runs outside a test (a re-executed child process).
type TB interface {
	Helper()
	Fatal(args ...any)
}

func helper(t TB) {
	if t != nil {
		t.Helper()
	}
}

func fatal(t TB, err error) {
	if t == nil {
		panic(err)
	}
	t.Helper()
	t.Fatal(err)
}

// EncodeLatencies returns a histogram of latencies (µs) in the encoding a
// Snapshot carries, and their summary as the live aggregator makes it: exact
// min, max and mean, percentiles from the histogram clamped into [min, max].
func EncodeLatencies(t TB, us ...int64) (string, stats.Latency) {
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
	l := stats.LatencyFromHistogram(h)
	l.Min = time.Duration(slices.Min(us)) * time.Microsecond
	l.Max = time.Duration(slices.Max(us)) * time.Microsecond
	l.Mean = time.Duration(sum) * time.Microsecond / time.Duration(len(us))
	l.Clamp()
	return string(b), l
}

// Repeat returns n copies of v.
func Repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// Tick builds the seq-th one-second snapshot at a concurrency, with n
// successful requests of latency us each and the server breakdown given in
// µs (request, queue, compute input, infer, output).
func Tick(t TB, seq, concurrency, n int, us int64, server [5]int64) stats.Snapshot {
	helper(t)
	hist, lat := EncodeLatencies(t, Repeat(us, n)...)
	s := stats.Snapshot{
		Seq:      seq,
		Time:     T0.Add(time.Duration(seq) * time.Second),
		Elapsed:  time.Duration(seq) * time.Second,
		Interval: time.Second,
		Load:     stats.Load{Mode: load.Concurrency, Concurrency: concurrency, InFlight: concurrency},
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
	s.Server.Overhead = s.Server.Request - s.Server.Queue - s.Server.Compute()
	return s
}

// WithRun fills each snapshot's Run with the running totals, as the
// aggregator does (latency: the last tick's, which is enough for readers
// that recompute it from the histograms).
func WithRun(snaps []stats.Snapshot) []stats.Snapshot {
	var run stats.ClientStats
	for i := range snaps {
		tk := snaps[i].Tick
		run.Add(&tk)
		run.SetRates()
		run.Latency = tk.Latency
		snaps[i].Run = run
	}
	return snaps
}

// Step is a composing model's statistics for a pipeline's tick: n
// requests of it, each queueing queueUS and computing computeUS (all of
// it infer), in batches of batch.
func Step(name string, n int, queueUS, computeUS int64, batch int) stats.ServerStats {
	execs := int64(n / max(batch, 1))
	q, c := time.Duration(queueUS)*time.Microsecond, time.Duration(computeUS)*time.Microsecond
	return stats.ServerStats{Available: true, Model: name, Version: "1",
		SuccessCount: int64(n), InferenceCount: int64(n), ExecutionCount: execs,
		Request: q + c, Queue: q, ComputeInfer: c, AvgBatch: float64(n) / float64(max(execs, 1)),
		Batches: []stats.BatchCount{{Size: batch, Count: execs}}}
}

// WithSteps makes s's server statistics a pipeline's over steps: its own
// queue and compute kept in Own, its times decomposed over the steps'.
func WithSteps(s stats.Snapshot, steps ...stats.ServerStats) stats.Snapshot {
	sv := &s.Server
	sv.Own = &stats.OwnTimes{Queue: sv.Queue, ComputeInput: sv.ComputeInput, ComputeInfer: sv.ComputeInfer, ComputeOutput: sv.ComputeOutput}
	sv.Steps = steps
	sv.Decompose()
	return s
}
