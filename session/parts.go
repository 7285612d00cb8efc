package session

import (
	"context"
	"io"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// Builder makes what a run measures: it connects to the server and builds
// the drivers, the collector fed by them, and the run file's header, with
// whatever else the run needs (Parts). Build is the session's own; a test
// wraps it to add to the parts.
type Builder interface {
	Build(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*Parts, error)
}

// BuilderFunc makes a function a Builder.
type BuilderFunc func(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*Parts, error)

// Build calls f.
func (f BuilderFunc) Build(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*Parts, error) {
	return f(ctx, cfg, stdout, stderr)
}

// Parts are a built run. Drivers, Collector and Header are required; every
// other field is optional, and nil leaves it out.
type Parts struct {
	// Drivers drive the load: one, or one per model of a run over
	// several, the first the run's. They run together: an error in one
	// ends the run for all.
	Drivers []*driver.Driver
	// Collector measures the drivers' results and the server's side.
	Collector *stats.Collector
	// Header is the run file's first line.
	Header record.Header

	// Sinks see every snapshot after the run file, the view and the
	// stepper, in order.
	Sinks []report.Sink
	// OnSummary completes the summary before it is final.
	OnSummary []func(*record.Summary)

	// Search, with Stepper, makes the run a stepped one: Stepper builds
	// the stepper that measures each level and hands each measured step
	// to onStep and what the run found to onDone.
	Search  plan.Search
	Stepper func(onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error)

	// WaitForStart waits until the load may start; false: it must not
	// (the context ended first). Nil starts at once.
	WaitForStart func(ctx context.Context) bool
	// OnStart runs just before the first request (to restart a count of
	// the client's CPU, say).
	OnStart func()
	// OnEnd is given the func that ends the run, for a part that ends it
	// early (a threshold breached).
	OnEnd func(end func())
	// Hurry is the context whose end makes the drivers abandon requests in
	// flight instead of draining them; nil for never.
	Hurry context.Context

	// Dashboard shows the run until q, ctx's end or runCtx's end, fed by
	// frames; the session runs it only without Config.Headless and with a
	// terminal for standard output.
	Dashboard func(ctx, runCtx context.Context, stepper *plan.Stepper, frames <-chan stats.Snapshot) error
	// Terminal reports whether standard output is a terminal; nil says
	// it is not.
	Terminal func() bool

	// Plan makes a capacity plan from a stepped run's steps.
	Plan func(stepper *plan.Stepper, steps []record.Step) (*record.Plan, error)
	// Report writes what the run found once the summary is final (the
	// summary, a CSV file); its error is the run's. Nil writes the
	// summary's text to standard output, or standard error when the run
	// file goes there.
	Report func(ctx context.Context, sum record.Summary) error
	// Verdict judges the final summary: an SLO missed, a threshold
	// breached.
	Verdict func(sum record.Summary) error

	// Release frees what the parts hold, last of all; started says the
	// load started.
	Release func(started bool)
}
