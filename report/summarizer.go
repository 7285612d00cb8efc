package report

import (
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Summarize summarizes a run's snapshots and the measured steps recorded
// with them. It is Summarizer fed the run in the order a live run fed it:
// each step right after its last tick, so that the step's diagnosis reads
// the same ticks as it did live.
func Summarize(h record.Header, snaps []stats.Snapshot, steps ...record.Step) record.Summary {
	z := NewSummarizer(h)
	next := 0
	for _, s := range snaps {
		z.Add(s)
		for next < len(steps) && steps[next].LastSeq <= s.Seq {
			z.AddStep(steps[next])
			next++
		}
	}
	for _, st := range steps[next:] {
		z.AddStep(st)
	}
	return z.Summary()
}

// SummarizeRun summarizes a run read from a file: its snapshots and measured
// steps, and the search result and plan of its summary line when it has one.
func SummarizeRun(run *record.Run) record.Summary {
	sum := Summarize(run.Header, run.Snapshots, run.Steps...)
	if run.Summary != nil {
		sum.Search, sum.Plan, sum.Tune = run.Summary.Search, run.Summary.Plan, run.Summary.Tune
		sum.Thresholds, sum.Repeats = run.Summary.Thresholds, run.Summary.Repeats
	}
	return sum
}

// Summarizer builds a run's Summary tick by tick, so that a long headless
// run need not keep its snapshots: memory grows with the number of load
// steps, not with run time. It is a Sink.
//
// A run's steps are the measured steps handed to AddStep (a stepped run's),
// or else one per load level its ticks ran at. Ticks of the drain, after the
// load stopped, count in the whole run but in no step.
type Summarizer struct {
	h        record.Header
	ticks    int
	first    stats.Snapshot
	last     stats.Snapshot
	lastLoad stats.Load // the last tick's load outside the drain
	whole    *StepBuilder
	levels   []record.Step
	cur      *StepBuilder
	measured []record.Step
	search   *record.Search
	plan     *record.Plan
	// recent holds the last ticks for the diagnosis.
	recent []stats.Snapshot
	// resets are the run times of ticks whose server counters went back.
	resets []time.Duration
	// replicas follow each replica of a run over several.
	replicas []*replicaAcc
	// models follow each model of a run over several; curModels are
	// their loads in the current level, which ends when any changes.
	models    []*modelAcc
	curModels []stats.Load
}

// maxResets bounds the resets a summary lists: a server flapping for hours
// must not grow it without end.
const maxResets = 100

// NewSummarizer starts a summary of the run described by h.
func NewSummarizer(h record.Header) *Summarizer {
	return &Summarizer{h: h, whole: NewStepBuilder(stats.Load{})}
}

// Add includes the next tick.
func (z *Summarizer) Add(s stats.Snapshot) {
	if z.ticks == 0 {
		z.first = s
	}
	z.ticks++
	z.last = s
	z.whole.Add(s)
	z.addReplicas(&s)
	z.addModels(&s)
	z.remember(s)
	if s.Server.Reset && len(z.resets) < maxResets {
		z.resets = append(z.resets, s.Elapsed)
	}
	if z.cur != nil && (!z.cur.load.SameLevel(s.Load) || !z.sameModelLevels(&s)) {
		z.closeLevel()
	}
	if s.Load.Drain {
		return
	}
	z.lastLoad = s.Load
	if z.cur == nil {
		z.cur = NewStepBuilder(s.Load)
		z.curModels = z.curModels[:0]
		for i := range s.Models {
			z.curModels = append(z.curModels, s.Models[i].Load)
		}
	}
	z.cur.Add(s)
}

// sameModelLevels reports whether every model of s runs at its level of the
// current step: in a run over several models a step ends when any model's
// level changes, even when the sum of their loads does not.
func (z *Summarizer) sameModelLevels(s *stats.Snapshot) bool {
	if len(s.Models) != len(z.curModels) {
		return false
	}
	for i := range s.Models {
		if !s.Models[i].Load.SameLevel(z.curModels[i]) {
			return false
		}
	}
	return true
}

// remember keeps the last ticks the diagnosis reads.
func (z *Summarizer) remember(s stats.Snapshot) { z.recent = keepForDiagnosis(z.recent, s) }

// keepForDiagnosis appends s to recent, the ticks stats.Diagnose reads,
// keeping the last 2×DiagnoseTicks. A diagnosis needs no histograms, nor a
// tick's replicas and models: dropping them keeps the copies small.
func keepForDiagnosis(recent []stats.Snapshot, s stats.Snapshot) []stats.Snapshot {
	const keep = 2 * stats.DiagnoseTicks
	if len(recent) == keep {
		copy(recent, recent[1:])
		recent = recent[:keep-1]
	}
	s.Histogram, s.ScheduledHistogram = "", ""
	s.TTFTHistogram, s.ITLHistogram, s.ResponsesHistogram, s.TTFTScheduledHistogram = "", "", "", ""
	s.SequenceHistogram = ""
	s.Replicas, s.Models = nil, nil
	return append(recent, s)
}

// closeLevel ends the current level's step, with the diagnosis of its last
// ticks.
func (z *Summarizer) closeLevel() {
	st := z.cur.Step()
	st.Diagnosis = z.diagnose(st.LastSeq)
	z.levels = append(z.levels, st)
	z.cur = nil
}

// diagnose diagnoses the remembered ticks up to seq.
func (z *Summarizer) diagnose(seq int) []stats.Finding {
	var upTo []stats.Snapshot
	for _, s := range z.recent {
		if s.Seq <= seq && !s.Load.Drain {
			upTo = append(upTo, s)
		}
	}
	return stats.Diagnose(upTo, z.diagOpts())
}

// diagOpts are the facts of the run the diagnosis needs.
func (z *Summarizer) diagOpts() stats.DiagnoseOptions {
	return stats.DiagnoseOptions{SharedProcess: z.h.Server.InProcess}
}

// AddStep records a measured step of a stepped run; once one is added, the
// summary's steps are the measured ones.
func (z *Summarizer) AddStep(st record.Step) {
	if st.Diagnosis == nil {
		st.Diagnosis = z.diagnose(st.LastSeq)
	}
	z.measured = append(z.measured, st)
}

// SetSearch records what a stepped run found.
func (z *Summarizer) SetSearch(s *record.Search) { z.search = s }

// SetPlan records a capacity plan.
func (z *Summarizer) SetPlan(p *record.Plan) { z.plan = p }

// Summary returns the summary of the ticks added so far.
func (z *Summarizer) Summary() record.Summary {
	sum := record.Summary{
		Model:     z.h.Model.Name,
		Version:   z.h.Model.Version,
		URL:       z.h.Server.URL,
		Protocol:  z.h.Server.Protocol,
		Start:     z.h.StartTime,
		Ticks:     z.ticks,
		Load:      z.h.Load,
		Search:    z.search,
		Plan:      z.plan,
		Balance:   z.h.Server.Balance,
		Simulated: z.h.Server.Simulated,
		Retry:     z.h.Retry,
	}
	if z.ticks == 0 {
		return sum
	}
	if sum.Start.IsZero() && !z.first.Time.IsZero() {
		sum.Start = z.first.Time.Add(-z.first.Elapsed)
	}
	sum.End = z.last.Time
	sum.Duration = z.last.Elapsed
	if z.lastLoad.Mode != "" {
		sum.Load = z.lastLoad
	}
	w := z.whole.Step()
	sum.Client, sum.Server, sum.Metrics, sum.ClientCPU = w.Client, w.Server, w.Metrics, w.ClientCPU
	sum.Paused = w.Paused
	sum.Diagnosis, sum.DiagnosisSpans = z.diagnoseNamed(z.last.Seq)
	sum.ServerResets = append([]time.Duration(nil), z.resets...)
	sum.Replicas = z.replicaSummaries()
	sum.Models = z.modelSummaries()
	if len(z.measured) > 0 {
		sum.Steps = append([]record.Step(nil), z.measured...)
		return sum
	}
	sum.Steps = append([]record.Step(nil), z.levels...)
	if z.cur != nil {
		st := z.cur.Step()
		st.Diagnosis = z.diagnose(st.LastSeq)
		sum.Steps = append(sum.Steps, st)
	}
	return sum
}
