// Package load is the vocabulary of load profiles that the driver runs, the
// collector records in every Snapshot, and the dashboard, reports and
// capacity planning read: a mode (closed or open loop), its target, and the
// driver's state. It has no behaviour of its own, so that every package can
// speak of load without importing the one that generates it.
package load

import (
	"fmt"
	"strconv"
	"time"
)

// Mode is a kind of load profile. Its values are the strings written in run
// files ("concurrency", "rate").
type Mode string

const (
	// Concurrency keeps a fixed number of requests in flight (closed loop).
	Concurrency Mode = "concurrency"
	// Rate sends requests on a schedule whatever the responses do (open
	// loop).
	Rate Mode = "rate"
	// Mixed is the load of several models together (a run over several
	// models) when some run closed loop and some open loop: its
	// concurrency is the closed-loop models' and its rate the open-loop
	// ones'. Each model's own load has its mode.
	Mixed Mode = "mixed"
)

// Distribution is the inter-arrival distribution of an open-loop schedule.
// The empty value means Constant.
type Distribution string

const (
	// Constant sends at evenly spaced times.
	Constant Distribution = "constant"
	// Poisson sends with exponentially distributed gaps.
	Poisson Distribution = "poisson"
)

// Target is one load profile: the mode and its target.
type Target struct {
	Mode        Mode
	Concurrency int
	// Rate is requests per second, open loop.
	Rate         float64
	Distribution Distribution
	// MaxInFlight caps open-loop requests in flight (0: no cap); a send the
	// cap refuses is counted late.
	MaxInFlight int
}

// Open reports whether the target is open loop.
func (t Target) Open() bool { return t.Mode == Rate }

// Level is the target's size in its own mode: the concurrency, or the rate
// in requests per second.
func (t Target) Level() float64 {
	if t.Open() {
		return t.Rate
	}
	return float64(t.Concurrency)
}

// String names the target as the dashboard and reports do: "concurrency 8"
// or "rate 200/s".
func (t Target) String() string { return Label(t.Mode, t.Concurrency, t.Rate) }

// Label names a load level: "concurrency 8", "rate 200/s", or for Mixed
// "concurrency 8 + rate 200/s".
func Label(m Mode, concurrency int, rate float64) string {
	switch m {
	case Rate:
		return "rate " + strconv.FormatFloat(rate, 'g', 6, 64) + "/s"
	case Mixed:
		return Label(Concurrency, concurrency, 0) + " + " + Label(Rate, 0, rate)
	}
	return fmt.Sprintf("concurrency %d", concurrency)
}

// State is what a load generator reports about itself at any moment.
type State struct {
	Target Target
	Paused bool
	// InFlight counts requests sent and not yet finished.
	InFlight int
	// Step is the index of the current step of a stepped schedule (0
	// without one).
	Step int
	// Draining is set once the generator has stopped issuing requests and
	// waits for those in flight: what finishes then belongs to no load.
	Draining bool
	// Sequences counts a stateful model's sequences started and not yet
	// ended; 0 for other models.
	Sequences int
	// PausedTotal is the time the generator spent paused and idle in the
	// pauses that ended: a pause is idle once the requests in flight at
	// its start have finished. PausedSince is when the current pause's
	// idle part began (an offset from the generator's epoch, meaningful
	// while Paused and not PauseBusy); PauseBusy is set while the
	// requests in flight at the pause still run. Together they say how
	// much of any span load was not applied (PausedBy).
	PausedTotal time.Duration
	PausedSince time.Duration
	PauseBusy   bool
}

// PausedBy is the time spent paused and idle from the generator's epoch up
// to at (an offset from the epoch), as far as the state knows: the pauses
// that ended and the current one's idle part before at.
func (s State) PausedBy(at time.Duration) time.Duration {
	p := s.PausedTotal
	if s.Paused && !s.PauseBusy && at > s.PausedSince {
		p += at - s.PausedSince
	}
	return p
}

// Change is a change of load: the new state, and when it took effect as an
// offset from the generator's epoch (the clock of its results).
type Change struct {
	At    time.Duration
	State State
}
