package sim

import "time"

// Faults are failures injected into the simulator, for tests and demos.
// They can be changed while the engine runs (Engine.SetFaults).
type Faults struct {
	// ErrorRate is the fraction of requests that fail with INTERNAL
	// "simulated failure" after they executed; they count as failures in
	// the statistics and under reason BACKEND in the metrics.
	ErrorRate float64
	// SpikeRate is the fraction of executions slowed by SpikeDelay.
	SpikeRate  float64
	SpikeDelay time.Duration
	// StallUntil stops executions from starting before this wall-clock
	// time, as a hung server would: requests queue up meanwhile.
	StallUntil time.Time
	// SlowStart keeps the server not ready, and its models LOADING, for
	// this long after the engine started.
	SlowStart time.Duration
}

// simulatedFailure is the message of requests failed by Faults.ErrorRate.
const simulatedFailure = "simulated failure"
