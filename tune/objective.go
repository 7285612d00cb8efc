package tune

import (
	"fmt"
	"math"
	"time"
)

// Objective is what the search maximizes among the measurements that met
// the SLO.
type Objective string

// Objectives.
const (
	// Throughput: the most inferences per second.
	Throughput Objective = "throughput"
	// ThroughputPerGPU: the most inferences per second per GPU busy
	// (those above 1% utilization during the measurement; 1 without GPU
	// metrics), for configurations that differ in the GPUs they use.
	ThroughputPerGPU Objective = "throughput-per-gpu"
	// Latency: the lowest latency the SLO is on (its percentile),
	// among measurements of at least the minimum throughput.
	Latency Objective = "latency"
)

// ParseObjective checks an --objective value.
func ParseObjective(s string) (Objective, error) {
	switch o := Objective(s); o {
	case Throughput, ThroughputPerGPU, Latency:
		return o, nil
	}
	return "", fmt.Errorf("--objective %q: give throughput, throughput-per-gpu or latency", s)
}

// Measure is what one trial measured: a configuration at one concurrency,
// its windows stable (or not) by the stepper's rules.
type Measure struct {
	// Throughput is inferences per second.
	Throughput float64 `json:"throughput"`
	// Latency is the latency the (first) SLO is on; P99 the p99 latency.
	Latency time.Duration `json:"latency_ns"`
	P99     time.Duration `json:"p99_ns"`
	// GPUs counts the GPUs busy during the measurement; GPUUtilization
	// is the busiest one's average (0..1).
	GPUs           int     `json:"gpus,omitempty"`
	GPUUtilization float64 `json:"gpu_utilization,omitempty"`
	// Queue and Compute are Triton's queue and compute time per request,
	// Batch its average batch size (its own statistics); zero where the
	// server gave none.
	Queue   time.Duration `json:"queue_ns,omitempty"`
	Compute time.Duration `json:"compute_ns,omitempty"`
	Batch   float64       `json:"batch,omitempty"`
	// Stable: the windows agreed. Pass: stable, under every SLO, no GPU
	// over the utilization target and, for the latency objective, at the
	// minimum throughput or more.
	Stable bool `json:"stable"`
	Pass   bool `json:"pass"`
}

// value is m's worth under o, higher is better; -Inf when m did not pass.
func (o Objective) value(m Measure) float64 {
	if !m.Pass {
		return math.Inf(-1)
	}
	return o.raw(m)
}

// raw is m's worth under o whether or not it passed.
func (o Objective) raw(m Measure) float64 {
	switch o {
	case ThroughputPerGPU:
		return m.Throughput / float64(max(1, m.GPUs))
	case Latency:
		return -m.Latency.Seconds()
	}
	return m.Throughput
}

// Unit is how the objective's values read: "infer/s", "infer/s per GPU"
// or "ms".
func (o Objective) Unit() string {
	switch o {
	case ThroughputPerGPU:
		return "infer/s per GPU"
	case Latency:
		return "ms"
	}
	return "infer/s"
}

// Show is a value of the objective as it reads.
func (o Objective) Show(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "-"
	}
	if o == Latency {
		return fmt.Sprintf("%.2f ms", -v*1000)
	}
	return fmt.Sprintf("%.0f %s", v, o.Unit())
}

// saturated reports whether Triton's own numbers say the trial's
// configuration was full: every instance busy (requests queued, beyond
// the batcher's own delay, for at least half their compute time, and
// minQueue) with batches near the max batch size (fullBatch of it; a
// batcher fills bigger batches as load grows, which raises throughput
// while every instance stays busy). More load then only queues longer.
func (r Result) saturated() bool {
	q := r.Queue - time.Duration(r.Point.Delay)*time.Microsecond
	busy := r.Compute > 0 && q*2 >= r.Compute && q >= minQueue
	return busy && (r.Point.MaxBatch <= 1 || r.Batch >= fullBatch*float64(r.Point.MaxBatch))
}

// fullBatch is the share of the max batch size from which batches count
// as full.
const fullBatch = 0.8

// minQueue is the queue time under which a trial is not called saturated:
// a server's own scheduling costs tens of microseconds per request, more
// than a small model computes.
const minQueue = 250 * time.Microsecond
