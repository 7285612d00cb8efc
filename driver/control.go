package driver

import "time"

// Mode is a kind of load profile.
type Mode int

const (
	// Concurrency keeps a fixed number of requests in flight (closed loop).
	Concurrency Mode = iota
	// RequestRate sends requests on a schedule whatever the responses do
	// (open loop).
	RequestRate
)

// String returns "concurrency" or "rate".
func (m Mode) String() string {
	if m == RequestRate {
		return "rate"
	}
	return "concurrency"
}

// Distribution is the inter-arrival distribution of an open-loop schedule.
type Distribution int

const (
	// Constant sends at evenly spaced times.
	Constant Distribution = iota
	// Poisson sends with exponentially distributed gaps.
	Poisson
)

// String returns "constant" or "poisson".
func (d Distribution) String() string {
	if d == Poisson {
		return "poisson"
	}
	return "constant"
}

// Load is one load profile: the mode and its target.
type Load struct {
	Mode         Mode
	Concurrency  int
	Rate         float64 // requests per second, open loop
	Distribution Distribution
	// MaxInFlight caps open-loop requests in flight (0: no cap); a send the
	// cap refuses is counted late.
	MaxInFlight int
}

// Step is one stage of a stepped schedule.
type Step struct {
	Load     Load
	Duration time.Duration
}

// State is what the driver reports about itself at any moment.
type State struct {
	Load     Load
	Paused   bool
	InFlight int
	// Step is the index of the current step of a stepped schedule (0 when
	// there is no schedule).
	Step int
}

// Control changes a running driver's load. Every method is safe to call from
// any goroutine (the TUI calls them from its update loop) and takes effect
// within one pacer tick.
type Control interface {
	// SetLoad replaces the load profile.
	SetLoad(l Load)
	// SetConcurrency changes the closed-loop target (and switches to closed
	// loop).
	SetConcurrency(n int)
	// SetRate changes the open-loop rate (and switches to open loop).
	SetRate(r float64)
	// Pause stops issuing new requests (in-flight ones complete); Resume
	// continues.
	Pause()
	Resume()
	// State returns the current load, pause state and in-flight count.
	State() State
}
