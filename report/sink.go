package report

import (
	"errors"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Sink takes a run's snapshots, one per tick, in order. Add runs on the
// collector's goroutine, so it must return quickly: results are not counted
// while it runs. The dashboard, the run file, the progress line, capacity
// planning and exporters are sinks.
type Sink interface {
	Add(stats.Snapshot)
}

// SinkFunc makes a function a Sink.
type SinkFunc func(stats.Snapshot)

// Add calls f.
func (f SinkFunc) Add(s stats.Snapshot) { f(s) }

// Closer is a Sink that wants the run's summary when the run ends: the run
// file appends it as its last line.
type Closer interface {
	Close(record.Summary) error
}

// Outputs fans a run's snapshots out to its sinks and summarizes the run
// as it goes, so that the summary is there however the run ends.
type Outputs struct {
	summarizer *Summarizer
	sinks      []Sink
	closed     bool
	// finish completes the summary before the sinks get it (a run's
	// threshold checks).
	finish []func(*record.Summary)
}

// OnSummary has f complete the run's summary at Close, before any sink
// gets it, so that the run file's summary line holds what f adds.
func (o *Outputs) OnSummary(f func(*record.Summary)) { o.finish = append(o.finish, f) }

// NewOutputs starts the outputs of the run described by h. Nil sinks are
// skipped.
func NewOutputs(h record.Header, sinks ...Sink) *Outputs {
	o := &Outputs{summarizer: NewSummarizer(h)}
	for _, s := range sinks {
		if s != nil {
			o.sinks = append(o.sinks, s)
		}
	}
	return o
}

// Add summarizes one tick and hands it to every sink, in the order given.
func (o *Outputs) Add(s stats.Snapshot) {
	o.summarizer.Add(s)
	for _, k := range o.sinks {
		k.Add(s)
	}
}

// Summary returns the summary of the ticks added so far.
func (o *Outputs) Summary() record.Summary { return o.summarizer.Summary() }

// Summarizer is the run's summarizer, for the measured steps, search and
// plan of a stepped run.
func (o *Outputs) Summarizer() *Summarizer { return o.summarizer }

// Close ends the run: it computes the summary and hands it to every sink
// that is a Closer, returning the summary and their errors joined. Closing
// twice closes nothing the second time.
func (o *Outputs) Close() (record.Summary, error) {
	sum := o.summarizer.Summary()
	if o.closed {
		return sum, nil
	}
	o.closed = true
	for _, f := range o.finish {
		f(&sum)
	}
	var errs []error
	for _, k := range o.sinks {
		if c, ok := k.(Closer); ok {
			errs = append(errs, c.Close(sum))
		}
	}
	return sum, errors.Join(errs...)
}
