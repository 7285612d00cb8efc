// Package plan is tritontop's capacity planning: it runs the steps of a
// stepped run (a sweep or a search over load levels), measures each level
// perf_analyzer's way until it is stable, checks it against a latency SLO
// and a GPU-utilization ceiling, finds the knee of the latency–throughput
// curve, and turns one replica's capacity into a replica count and
// autoscaling settings.
//
// The Stepper is a sink of the run's snapshots that also drives the load: it
// is the only part of tritontop that decides when a step ends. Every change
// of level it makes ends the collector's tick under way (the collector
// starts its ticks again from a change of load), or, in a lockstep run,
// lands on a tick boundary (stats.Collector.AtNextTick), so every tick of a
// step ran at that step's load only.
package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/tritontop/tritontop/load"
)

// Defaults follow perf_analyzer's.
const (
	// DefaultMeasurementInterval is the length of a measurement window.
	DefaultMeasurementInterval = 5 * time.Second
	// DefaultStabilityPercent is how far the last windows may differ, in
	// throughput and in latency (max/min − 1), to be called stable.
	DefaultStabilityPercent = 10
	// DefaultMaxTrials is how many windows a level may run before it is
	// reported as unstable.
	DefaultMaxTrials = 10
	// StabilityWindows is how many consecutive windows must agree.
	StabilityWindows = 3
)

// SLO is a service-level objective on latency, with an optional ceiling on
// GPU utilization. ParseSLO reads one from text.
type SLO struct {
	// Metric is the latency the objective is on: MetricLatency (the
	// request latency), MetricTTFT or MetricITL (a decoupled model's time
	// to first response, or time between responses).
	Metric string
	// Percentile is the latency percentile (99 for p99); 0 means the
	// average latency, perf_analyzer's default.
	Percentile float64
	// Threshold is the latency a passing level stays under.
	Threshold time.Duration
	// GPUTarget, when above 0, is the utilization (0..1) no GPU may exceed
	// at a passing level.
	GPUTarget float64
}

// MaxLevels bounds the levels of one range.
const MaxLevels = 1000

// Levels lists the load levels of a range, perf_analyzer's
// START[:END[:STEP]], as targets like base (mode, distribution, cap).
// Concurrency levels are whole numbers, and a range whose levels would
// repeat one is refused. The values must be finite and positive, END ≥
// START; more than MaxLevels levels are refused.
func Levels(base load.Target, start, end, step float64) ([]load.Target, error) {
	for _, v := range []float64{start, end, step} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return nil, fmt.Errorf("range values must be positive numbers, got %v:%v:%v", start, end, step)
		}
	}
	if end < start {
		return nil, fmt.Errorf("range end %v is below its start %v", end, start)
	}
	n := math.Floor((end-start)/step*(1+1e-12)) + 1
	if n > MaxLevels {
		return nil, fmt.Errorf("range %v:%v:%v has %.0f levels, more than %d", start, end, step, n, MaxLevels)
	}
	out := make([]load.Target, 0, int(n))
	for i := 0; i < int(n); i++ {
		out = append(out, at(base, start+float64(i)*step))
	}
	if !base.Open() {
		if out[0].Concurrency < 1 {
			return nil, fmt.Errorf("range %v:%v:%v starts at concurrency %d: concurrency levels are whole numbers from 1", start, end, step, out[0].Concurrency)
		}
		for i := 1; i < len(out); i++ {
			if out[i].Concurrency == out[i-1].Concurrency {
				return nil, fmt.Errorf("range %v:%v:%v repeats concurrency %d: concurrency levels are whole numbers", start, end, step, out[i].Concurrency)
			}
		}
	}
	return out, nil
}

// at is base at level v.
func at(base load.Target, v float64) load.Target {
	t := base
	if t.Open() {
		t.Rate = v
	} else {
		t.Concurrency = int(v)
	}
	return t
}
