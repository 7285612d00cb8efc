package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// Duration is Triton's StatisticDuration: a count and its cumulative
// nanoseconds.
type Duration struct {
	Count uint64 `json:"count"`
	NS    uint64 `json:"ns"`
}

// InferStats is the inference_stats of a model's statistics.
type InferStats struct {
	Success       Duration `json:"success"`
	Fail          Duration `json:"fail"`
	Queue         Duration `json:"queue"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
	CacheHit      Duration `json:"cache_hit"`
	CacheMiss     Duration `json:"cache_miss"`
}

// ModelStats is one model version's cumulative statistics as Triton's
// HTTP endpoint answers them.
type ModelStats struct {
	Name           string     `json:"name"`
	Version        string     `json:"version"`
	InferenceCount uint64     `json:"inference_count"`
	ExecutionCount uint64     `json:"execution_count"`
	Inference      InferStats `json:"inference_stats"`
}

// Statistics reads model's cumulative statistics (its one loaded version)
// from the server's HTTP endpoint, v2/models/NAME/stats.
func (s *Server) Statistics(t testing.TB, model string) ModelStats {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + s.HTTP + "/v2/models/" + url.PathEscape(model) + "/stats")
	if err != nil {
		t.Fatalf("interop: statistics of %s: %v", model, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("interop: statistics of %s: HTTP %d %s %v", model, resp.StatusCode, body, err)
	}
	var all struct {
		ModelStats []ModelStats `json:"model_stats"`
	}
	if err := json.Unmarshal(body, &all); err != nil {
		t.Fatalf("interop: statistics of %s: %v in %s", model, err, body)
	}
	if len(all.ModelStats) != 1 {
		t.Fatalf("interop: statistics of %s: %d versions, want 1: %s", model, len(all.ModelStats), body)
	}
	return all.ModelStats[0]
}

// Delta is end − start of every counter: what a span of load did.
func Delta(start, end ModelStats) ModelStats {
	sub := func(a, b Duration) Duration { return Duration{Count: b.Count - a.Count, NS: b.NS - a.NS} }
	s, e := start.Inference, end.Inference
	return ModelStats{
		Name: end.Name, Version: end.Version,
		InferenceCount: end.InferenceCount - start.InferenceCount,
		ExecutionCount: end.ExecutionCount - start.ExecutionCount,
		Inference: InferStats{
			Success: sub(s.Success, e.Success), Fail: sub(s.Fail, e.Fail), Queue: sub(s.Queue, e.Queue),
			ComputeInput: sub(s.ComputeInput, e.ComputeInput), ComputeInfer: sub(s.ComputeInfer, e.ComputeInfer),
			ComputeOutput: sub(s.ComputeOutput, e.ComputeOutput),
			CacheHit:      sub(s.CacheHit, e.CacheHit), CacheMiss: sub(s.CacheMiss, e.CacheMiss),
		},
	}
}

// Averages are perf_analyzer's per-request server times over a delta, in
// nanoseconds (perf_analyzer's inference_profiler and report_writer).
type Averages struct {
	Request, Queue, ComputeInput, ComputeInfer, ComputeOutput uint64
	// Compute is the three compute times' nanoseconds together over the
	// compute count: perf_analyzer's avg compute, which its CSV subtracts.
	Compute uint64
}

// OverheadUS is the overhead perf_analyzer prints, in whole microseconds:
// request − queue − compute, each in whole microseconds, 0 when negative.
func (a Averages) OverheadUS() uint64 {
	r, q, c := USec(a.Request), USec(a.Queue), USec(a.Compute)
	if r < q+c {
		return 0
	}
	return r - q - c
}

// Averages applies perf_analyzer's formulas to a delta: each average is
// Δns / Δcount with integer division, 0 when Δcount is 0. perf_analyzer
// prints them in whole microseconds (the nanoseconds divided by 1000,
// again an integer division), which USec gives.
func (d ModelStats) Averages() Averages {
	avg := func(ns, n uint64) uint64 {
		if n == 0 {
			return 0
		}
		return ns / n
	}
	in := d.Inference
	a := Averages{
		Request:       avg(in.Success.NS, in.Success.Count),
		Queue:         avg(in.Queue.NS, in.Queue.Count),
		ComputeInput:  avg(in.ComputeInput.NS, in.ComputeInput.Count),
		ComputeInfer:  avg(in.ComputeInfer.NS, in.ComputeInfer.Count),
		ComputeOutput: avg(in.ComputeOutput.NS, in.ComputeOutput.Count),
		Compute:       avg(in.ComputeInput.NS+in.ComputeInfer.NS+in.ComputeOutput.NS, in.ComputeInput.Count),
	}
	return a
}

// USec is a nanosecond average in perf_analyzer's whole microseconds.
func USec(ns uint64) uint64 { return ns / 1000 }

// String is the delta's counts and perf_analyzer's averages, for a log.
func (d ModelStats) String() string {
	a := d.Averages()
	in := d.Inference
	return fmt.Sprintf("success %d (ns %d), fail %d, inferences %d, executions %d, queue %d ns over %d, compute input/infer/output %d/%d/%d ns over %d/%d/%d; "+
		"perf_analyzer: request %d ns, queue %d ns, compute %d ns (input %d, infer %d, output %d), overhead %d µs",
		in.Success.Count, in.Success.NS, in.Fail.Count, d.InferenceCount, d.ExecutionCount, in.Queue.NS, in.Queue.Count,
		in.ComputeInput.NS, in.ComputeInfer.NS, in.ComputeOutput.NS, in.ComputeInput.Count, in.ComputeInfer.Count, in.ComputeOutput.Count,
		a.Request, a.Queue, a.Compute, a.ComputeInput, a.ComputeInfer, a.ComputeOutput, a.OverheadUS())
}
