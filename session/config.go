// Package session runs one load run against a Triton server: it connects,
// starts the drivers and the collector, fans the collector's snapshots out
// to the run's sinks (run file, summary, dashboard or progress line, a
// stepped run's stepper), waits for the run to end, and finishes it: the
// summary, the plan, the verdict.
//
// A Session goes through its phases in order, one method each:
//
//	s, err := session.New(cfg, builder, stdout, stderr) // cfg.Validate
//	defer s.Close()      // releases the parts, whatever happened
//	err = s.Connect(ctx) // the parts, the run file, the sinks
//	err = s.Start(ctx)   // the first request
//	s.Wait(ctx)          // the end of the run
//	err = s.Finish(ctx)  // summary, plan, verdict
//
// Config holds the run's own settings as plain values; a Builder makes
// what the run measures (the server, its drivers and collector). With no
// Builder, the session dials Config.URL and drives Config.Model itself,
// which is all a program or a test needs for a plain run.
package session

import (
	"errors"
	"fmt"
	"time"
)

// Limits of a run's settings; a value past one is refused before anything
// runs.
const (
	MinTick     = 10 * time.Millisecond
	MaxTick     = time.Hour
	MaxWindow   = 24 * time.Hour
	MaxDuration = 30 * 24 * time.Hour
	MaxDrain    = time.Hour
	MaxTimeout  = time.Hour
)

// Config is one run's settings, as plain values. The command line's flags
// become one (cmd/tritontop); a program fills one in directly.
type Config struct {
	// Record is the run file's path, "-" for standard output, empty for
	// none. Force replaces an existing file at Record.
	Record string
	Force  bool
	// Headless shows a progress line on standard error instead of the
	// dashboard, which the session shows only when the Builder has one
	// and standard output is a terminal.
	Headless bool
	// Tick is the collector's interval: one snapshot per tick.
	Tick time.Duration
	// Window is the span of the dashboard's sliding percentiles; zero
	// takes Tick.
	Window time.Duration
	// Duration ends the run after it; zero runs until the context ends,
	// the schedule ends, or q.
	Duration time.Duration
	// Drain is how long the drivers wait for requests in flight at the
	// end of the run.
	Drain time.Duration
	// SharedProcess says the server shares this process (the demo), so
	// the process's CPU is not the client's alone.
	SharedProcess bool

	// What a session with no Builder connects to and how it loads it.
	// A Builder reads its own settings instead.

	// URL is the server's address (host:port); Protocol is "grpc" (the
	// default) or "http".
	URL      string
	Protocol string
	// Model is the model's name, ModelVersion its version (empty: the
	// server's choice).
	Model        string
	ModelVersion string
	// Concurrency is the requests kept in flight (default 1); BatchSize
	// each request's batch (default 1).
	Concurrency int
	BatchSize   int
	// Timeout is each request's deadline; zero for none.
	Timeout time.Duration
}

// Validate returns the first problem with c as one line saying what is
// wrong and what is allowed, or nil. builtIn says the session builds its
// own parts (no Builder), so the server and model settings must be there.
func (c Config) Validate(builtIn bool) error {
	type rng struct {
		name    string
		v, lo   time.Duration
		hi      time.Duration
		zeroOK  bool
		allowed string
	}
	for _, r := range []rng{
		{"Tick", c.Tick, MinTick, MaxTick, false, "10ms to 1h"},
		{"Window", c.Window, MinTick, MaxWindow, true, "0 (the tick) or 10ms to 24h"},
		{"Duration", c.Duration, MinTick, MaxDuration, true, "0 (until stopped) or 10ms to 720h"},
		{"Drain", c.Drain, 0, MaxDrain, true, "0 to 1h"},
		{"Timeout", c.Timeout, time.Millisecond, MaxTimeout, true, "0 (none) or 1ms to 1h"},
	} {
		if r.zeroOK && r.v == 0 {
			continue
		}
		if r.v < r.lo || r.v > r.hi {
			return fmt.Errorf("session: %s %v is out of range: allowed %s", r.name, r.v, r.allowed)
		}
	}
	if !builtIn {
		return nil
	}
	switch {
	case c.URL == "":
		return errors.New("session: URL is empty: give the server's host:port")
	case c.Model == "":
		return errors.New("session: Model is empty: give the model's name")
	case c.Protocol != "" && c.Protocol != "grpc" && c.Protocol != "http":
		return fmt.Errorf("session: Protocol %q is unknown: use grpc or http", c.Protocol)
	case c.Concurrency < 0:
		return fmt.Errorf("session: Concurrency %d is negative: use 1 or more (0 takes 1)", c.Concurrency)
	case c.BatchSize < 0:
		return fmt.Errorf("session: BatchSize %d is negative: use 1 or more (0 takes 1)", c.BatchSize)
	}
	return nil
}

// UsageError is a run refused for its settings or its files (a run file
// that cannot be written): the command line's exit code 2.
type UsageError struct{ Err error }

// Error is the refusal's one line.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap is the refusal's cause.
func (e UsageError) Unwrap() error { return e.Err }

// ErrNotStarted is a run that ended before its load started (during a wait
// for its start): it kept no run file.
var ErrNotStarted = errors.New("the load never started, so no run file was kept")
