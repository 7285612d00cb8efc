package report

import (
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Summarize summarizes a run's snapshots. It is Summarizer fed every
// snapshot in order.
func Summarize(h record.Header, snaps []stats.Snapshot) record.Summary {
	z := NewSummarizer(h)
	for _, s := range snaps {
		z.Add(s)
	}
	return z.Summary()
}

// Summarizer builds a run's Summary tick by tick, so that a long headless
// run need not keep its snapshots: memory grows with the number of load
// steps, not with run time. It is a Sink.
type Summarizer struct {
	h     record.Header
	ticks int
	first stats.Snapshot
	last  stats.Snapshot
	whole *stepAcc
	steps []record.Step
	cur   *stepAcc
}

// NewSummarizer starts a summary of the run described by h.
func NewSummarizer(h record.Header) *Summarizer {
	return &Summarizer{h: h, whole: newStepAcc(stats.Load{})}
}

// Add includes the next tick.
func (z *Summarizer) Add(s stats.Snapshot) {
	if z.ticks == 0 {
		z.first = s
	}
	z.ticks++
	z.last = s
	z.whole.add(s)
	if z.cur != nil && !z.cur.load.SameLevel(s.Load) {
		z.steps = append(z.steps, z.cur.step())
		z.cur = nil
	}
	if z.cur == nil {
		z.cur = newStepAcc(s.Load)
	}
	z.cur.add(s)
}

// Summary returns the summary of the ticks added so far.
func (z *Summarizer) Summary() record.Summary {
	sum := record.Summary{
		Model:    z.h.Model.Name,
		Version:  z.h.Model.Version,
		URL:      z.h.Server.URL,
		Protocol: z.h.Server.Protocol,
		Start:    z.h.StartTime,
		Ticks:    z.ticks,
		Load:     z.h.Load,
	}
	if z.ticks == 0 {
		return sum
	}
	if sum.Start.IsZero() && !z.first.Time.IsZero() {
		sum.Start = z.first.Time.Add(-z.first.Elapsed)
	}
	sum.End = z.last.Time
	sum.Duration = z.last.Elapsed
	sum.Load = z.last.Load
	w := z.whole.step()
	sum.Client, sum.Server, sum.Metrics, sum.ClientCPU = w.Client, w.Server, w.Metrics, w.ClientCPU
	sum.Steps = append(append([]record.Step(nil), z.steps...), z.cur.step())
	return sum
}
