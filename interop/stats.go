package interop

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
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

// BatchStats is one entry of a model's batch_stats: the executions of one
// batch size (every one of its durations has the same count).
type BatchStats struct {
	BatchSize     uint64   `json:"batch_size"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
}

// ResponseStats is one entry of a decoupled model's response_stats: the
// responses sent with one index within their request.
type ResponseStats struct {
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
	Success       Duration `json:"success"`
	Fail          Duration `json:"fail"`
	EmptyResponse Duration `json:"empty_response"`
	Cancel        Duration `json:"cancel"`
}

// ModelStats is one model version's cumulative statistics as Triton's
// HTTP endpoint answers them.
type ModelStats struct {
	Name           string     `json:"name"`
	Version        string     `json:"version"`
	InferenceCount uint64     `json:"inference_count"`
	ExecutionCount uint64     `json:"execution_count"`
	Inference      InferStats `json:"inference_stats"`
	// Batches are the batch_stats, by ascending batch size.
	Batches []BatchStats `json:"batch_stats"`
	// Responses are the response_stats, by response index ("0", "1", ...).
	Responses map[string]ResponseStats `json:"response_stats"`
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

// Delta is end − start of every counter: what a span of load did. Its
// Batches keep the batch sizes that ran in the span, its Responses the
// response indexes that were sent.
func Delta(start, end ModelStats) ModelStats {
	sub := func(a, b Duration) Duration { return Duration{Count: b.Count - a.Count, NS: b.NS - a.NS} }
	s, e := start.Inference, end.Inference
	d := ModelStats{
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
	for _, b := range end.Batches {
		a := BatchStats{BatchSize: b.BatchSize}
		for _, x := range start.Batches {
			if x.BatchSize == b.BatchSize {
				a = x
			}
		}
		if b.ComputeInfer.Count > a.ComputeInfer.Count {
			d.Batches = append(d.Batches, BatchStats{BatchSize: b.BatchSize, ComputeInput: sub(a.ComputeInput, b.ComputeInput),
				ComputeInfer: sub(a.ComputeInfer, b.ComputeInfer), ComputeOutput: sub(a.ComputeOutput, b.ComputeOutput)})
		}
	}
	slices.SortFunc(d.Batches, func(a, b BatchStats) int { return cmp.Compare(a.BatchSize, b.BatchSize) })
	for k, r := range end.Responses {
		a := start.Responses[k]
		if r.Success.Count+r.Fail.Count+r.EmptyResponse.Count+r.Cancel.Count >
			a.Success.Count+a.Fail.Count+a.EmptyResponse.Count+a.Cancel.Count {
			if d.Responses == nil {
				d.Responses = map[string]ResponseStats{}
			}
			d.Responses[k] = ResponseStats{ComputeInfer: sub(a.ComputeInfer, r.ComputeInfer), ComputeOutput: sub(a.ComputeOutput, r.ComputeOutput),
				Success: sub(a.Success, r.Success), Fail: sub(a.Fail, r.Fail), EmptyResponse: sub(a.EmptyResponse, r.EmptyResponse), Cancel: sub(a.Cancel, r.Cancel)}
		}
	}
	return d
}

// AvgBatch is the span's average batch: Δinference_count /
// Δexecution_count, 0 without executions.
func (d ModelStats) AvgBatch() float64 {
	if d.ExecutionCount == 0 {
		return 0
	}
	return float64(d.InferenceCount) / float64(d.ExecutionCount)
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

// Sum adds deltas of one model on several servers (replicas): what they
// did together, as one server's delta would say it.
func Sum(ds ...ModelStats) ModelStats {
	add := func(a, b Duration) Duration { return Duration{Count: a.Count + b.Count, NS: a.NS + b.NS} }
	var s ModelStats
	for _, d := range ds {
		s.Name, s.Version = d.Name, d.Version
		s.InferenceCount += d.InferenceCount
		s.ExecutionCount += d.ExecutionCount
		a, b := &s.Inference, d.Inference
		a.Success, a.Fail, a.Queue = add(a.Success, b.Success), add(a.Fail, b.Fail), add(a.Queue, b.Queue)
		a.ComputeInput, a.ComputeInfer = add(a.ComputeInput, b.ComputeInput), add(a.ComputeInfer, b.ComputeInfer)
		a.ComputeOutput = add(a.ComputeOutput, b.ComputeOutput)
		a.CacheHit, a.CacheMiss = add(a.CacheHit, b.CacheHit), add(a.CacheMiss, b.CacheMiss)
		for _, x := range d.Batches {
			i := slices.IndexFunc(s.Batches, func(y BatchStats) bool { return y.BatchSize == x.BatchSize })
			if i < 0 {
				s.Batches = append(s.Batches, BatchStats{BatchSize: x.BatchSize})
				i = len(s.Batches) - 1
			}
			y := &s.Batches[i]
			y.ComputeInput, y.ComputeInfer = add(y.ComputeInput, x.ComputeInput), add(y.ComputeInfer, x.ComputeInfer)
			y.ComputeOutput = add(y.ComputeOutput, x.ComputeOutput)
		}
	}
	slices.SortFunc(s.Batches, func(a, b BatchStats) int { return cmp.Compare(a.BatchSize, b.BatchSize) })
	return s
}
