package plan

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// Driver is what a Stepper needs of the load generator; *driver.Driver is
// one.
type Driver interface {
	SetStep(i int, t load.Target)
	Pause()
	Resume()
	Stop(drain time.Duration)
}

// Boundary runs a function at the next tick boundary;
// *stats.Collector is one.
type Boundary interface {
	AtNextTick(f func())
}

// Options configure a Stepper.
type Options struct {
	// Search picks the levels; its first level is the driver's load at the
	// start of the run (see Stepper.First).
	Search Search
	// Tick is the collector's tick length.
	Tick time.Duration
	// Window is the measurement window (perf_analyzer's
	// --measurement-interval), rounded to whole ticks (at least one).
	Window time.Duration
	// StepDuration, when above 0, gives every level a fixed length instead
	// of measuring until stable (rounded to whole ticks).
	StepDuration time.Duration
	// StabilityPercent and MaxTrials: see the package defaults.
	StabilityPercent float64
	MaxTrials        int
	// SLO, when set, is checked at every level, and so is each of SLOs
	// (say, one on TTFT and one on ITL): a level passes when it meets them
	// all. Stability and perf_analyzer's early end read the first of them.
	SLO  *SLO
	SLOs []SLO
	// Drain is how long requests in flight may finish after the last
	// level.
	Drain time.Duration
	// OnStep is called with every measured step, on the collector's
	// goroutine, before the next level starts.
	OnStep func(record.Step)
	// OnDone is called once, with what the run found, when the last level
	// is measured and the load is about to stop.
	OnDone func(record.Search)
	// Lockstep makes every change of level depend on the count of ticks
	// alone, so that several processes running the same schedule on
	// aligned ticks (a distributed run's workers) change level on the same
	// tick: a level that must let its requests in flight finish pauses for
	// Drain (at most MaxSettle) rounded up to whole ticks, at least two,
	// instead of until nothing is in flight, which each process would see
	// at a different tick. It needs StepDuration.
	Lockstep bool
	// CountWindow, when above 0, makes each measurement window last until
	// it holds this many finished requests, in whole ticks, whatever its
	// length (perf_analyzer's --measurement-mode count_windows and
	// --measurement-request-count); see countWindowFull.
	CountWindow int
	// Prepare, when set, changes the server between levels that need it
	// (tritontop tune loads each level's model configuration): the level
	// before is stopped and its requests finish first (see Preparer).
	Prepare Preparer
}

// Stepper runs a stepped run: a Sink of the run's snapshots that measures
// the current level in windows and moves to the next level at a tick
// boundary once the level is measured. Its Add runs on the collector's
// goroutine; Progress may be called from any goroutine.
type Stepper struct {
	o      Options
	drv    Driver
	bound  Boundary
	first  load.Target
	wticks int // ticks per window
	fticks int // ticks per fixed step; 0 in stability mode

	index  int              // the schedule index of the level measured
	target load.Target      // its target
	began  time.Time        // wall clock of its first tick's end
	ticks  int              // its ticks counted, warm-up included
	cur    []stats.Snapshot // the window being filled
	kept   [][]stats.Snapshot
	trials []window
	fixed  *report.StepBuilder
	levels []Level
	done   bool
	// prescheduled is set when the next level's change is already set.
	prescheduled bool
	// settle is the next level while the load is paused for the requests
	// still in flight from an open-loop level to finish.
	settle *settling
	// preparing is set while Options.Prepare changes the server for the
	// next level.
	preparing bool
	// warmup counts the level's ticks still to skip (the ramp after a
	// settle); warmedUp those skipped.
	warmup, warmedUp int
	// inFlight is the requests in flight at the end of the last tick
	// seen, and curBefore at the start of the window being filled: what an
	// open-loop window's sends are counted from.
	inFlight, curBefore int

	slos []SLO // SLO and SLOs

	mu   sync.Mutex
	prog Progress
}

// window is one measurement window's throughput, its average latency (what
// stability reads) and its latency as each SLO reads it.
type window struct {
	inferPerS float64
	mean      time.Duration
	latency   []time.Duration
	// An open loop's window: the requests sent (those finished or
	// cancelled and the growth of those in flight) and finished, and its
	// seconds of load.
	sent, finished int64
	seconds        float64
}

// Progress is where a stepped run stands.
type Progress struct {
	// Step counts from 1; Total is the most steps the search takes.
	Step, Total int
	Level       load.Target
	// Trials is the windows run at the level, of at most MaxTrials (or
	// the fixed step's ticks, of StepTicks).
	Trials, MaxTrials int
	// InStep is the time spent at the level; Left estimates the time the
	// level still takes at most.
	InStep, Left time.Duration
	// Done is set once the last level is measured.
	Done bool
	// Levels are the steps measured so far, for a curve that grows.
	Levels []Level
	// Search is the run's search, for a view that knows more of it (the
	// dashboard's tune pane reads tritontop tune's trials from it).
	Search Search
	// Preparing is set while Options.Prepare changes the server for the
	// next level.
	Preparing bool
}

// NewStepper checks o and returns a stepper; the driver must start at
// First, which is step 0.
func NewStepper(o Options, d Driver, b Boundary) (*Stepper, error) {
	if o.Search == nil {
		return nil, errors.New("plan: no search for the stepped run")
	}
	if o.Tick <= 0 {
		return nil, errors.New("plan: no tick length")
	}
	if o.Window <= 0 {
		o.Window = DefaultMeasurementInterval
	}
	if o.StabilityPercent <= 0 {
		o.StabilityPercent = DefaultStabilityPercent
	}
	if o.MaxTrials <= 0 {
		o.MaxTrials = DefaultMaxTrials
	}
	first, ok := o.Search.Next(nil)
	if !ok {
		return nil, errors.New("plan: the search has no level to measure")
	}
	s := &Stepper{o: o, drv: d, bound: b, first: first, target: first,
		wticks: max(1, int(math.Round(float64(o.Window)/float64(o.Tick))))}
	if o.SLO != nil {
		s.slos = append(s.slos, *o.SLO)
	}
	s.slos = append(s.slos, o.SLOs...)
	for _, slo := range s.slos {
		if slo.Metric != MetricLatency && slo.Metric != MetricTTFT && slo.Metric != MetricITL {
			return nil, fmt.Errorf("plan: SLO metric %s is not latency, ttft or itl", textsafe.Quote(slo.Metric))
		}
	}
	if o.Lockstep && o.StepDuration <= 0 {
		return nil, errors.New("plan: a lockstep run needs fixed-length steps (StepDuration): stability is judged by each process on its own")
	}
	if o.StepDuration > 0 {
		s.fticks = max(1, int(math.Round(float64(o.StepDuration)/float64(o.Tick))))
		s.fixed = report.NewStepBuilder(stats.Load{})
		// A fixed step is judged stable over its last windows: shorter ones
		// when three measurement windows do not fit in it.
		s.wticks = max(1, min(s.wticks, s.fticks/StabilityWindows))
	}
	s.publish(time.Time{})
	return s, nil
}

// First is the first level: the driver's load when the run starts.
func (s *Stepper) First() load.Target { return s.first }

// WindowTicks is the length of a measurement window in ticks.
func (s *Stepper) WindowTicks() int { return s.wticks }

// Progress returns where the run stands.
func (s *Stepper) Progress() Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prog
	p.Levels = append([]Level(nil), p.Levels...)
	return p
}

// Levels returns the levels measured so far.
func (s *Stepper) Levels() []Level {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Level(nil), s.prog.Levels...)
}

// MaxSettle bounds how long the next level waits for the requests still in
// flight from an open-loop level (the run's drain time, if longer).
const MaxSettle = 30 * time.Second

// settling is a level waiting for the one before to drain.
type settling struct {
	index  int
	target load.Target
	since  time.Time
	paused int // paused ticks seen
}

// Add takes the next tick. Ticks of another step (the tick that ends while
// the next level is being set), of the drain, or paused are not measured; a
// pause also drops the window it interrupts.
func (s *Stepper) Add(snap stats.Snapshot) {
	defer func() { s.inFlight = snap.Load.InFlight }()
	if st := s.settle; st != nil {
		s.settled(snap, st)
		return
	}
	if s.done || snap.Load.Drain || snap.Load.Step != s.index {
		return
	}
	if s.ticks == 0 {
		s.began = snap.Time.Add(-snap.Interval)
	}
	if snap.Load.Paused {
		s.cur = s.cur[:0]
		s.publish(snap.Time)
		return
	}
	if s.warmup > 0 {
		s.warmup--
		s.warmedUp++
		s.publish(snap.Time)
		return
	}
	s.ticks++
	if s.fixed != nil {
		s.fixed.Add(snap)
		s.preschedule()
	}
	if len(s.cur) == 0 {
		s.curBefore = s.inFlight
	}
	s.cur = append(s.cur, snap)
	if s.windowFull() {
		s.closeWindow()
	}
	if s.levelDone() {
		s.finishLevel()
	}
	s.publish(snap.Time)
}

// preschedule sets the next level of a plain sweep of fixed steps for the
// boundary that ends the step's last tick, so that no tick is spent between
// steps: the next level of such a sweep does not depend on what this one
// measures. Other runs set it once the step is measured, and the tick that
// ends meanwhile belongs to no step.
func (s *Stepper) preschedule() {
	sw, ok := s.o.Search.(Sweep)
	if !ok || sw.StopAtSLO || s.ticks != s.fticks-1 {
		return
	}
	next, ok := sw.Next(append(s.levels, Level{}))
	if ok && mustSettle(s.target, next) {
		return
	}
	i := s.index + 1
	if !ok {
		s.bound.AtNextTick(func() { s.drv.Stop(s.o.Drain) })
	} else {
		s.bound.AtNextTick(func() { s.drv.SetStep(i, next) })
	}
	s.prescheduled = true
}

// Measurement windows of a level measured until stable last at least the
// measurement interval and hold at least MinWindowRequests finished
// requests (perf_analyzer's count windows hold 50), up to
// MaxWindowStretch intervals: a window of a few long requests (an LLM's
// take seconds each) says nothing about stability.
const (
	MinWindowRequests = 50
	MaxWindowStretch  = 10
)

// windowFull reports whether the window being filled is long enough.
func (s *Stepper) windowFull() bool {
	n := len(s.cur)
	if s.o.CountWindow > 0 && s.fixed == nil {
		return countWindowFull(s.cur, s.o.CountWindow)
	}
	if n < s.wticks {
		return false
	}
	if s.fixed != nil || n >= MaxWindowStretch*s.wticks {
		return true
	}
	var finished int64
	for _, t := range s.cur {
		finished += t.Tick.Requests
	}
	return finished >= MinWindowRequests
}

// closeWindow ends the window being filled.
func (s *Stepper) closeWindow() {
	w := s.measure(s.cur)
	s.trials = append(s.trials, w)
	s.kept = append(s.kept, s.cur)
	if len(s.kept) > StabilityWindows {
		s.kept = s.kept[1:]
	}
	s.cur = nil
}

// measure is a window's throughput and the latency the SLO is on.
func (s *Stepper) measure(ticks []stats.Snapshot) window {
	b := report.NewStepBuilder(stats.Load{})
	for _, t := range ticks {
		b.Add(t)
	}
	st := b.Step()
	w := window{inferPerS: st.Client.InferPerS, mean: sloLatency(st, SLO{})}
	if len(ticks) > 0 {
		for _, t := range ticks {
			w.finished += t.Tick.Requests + t.Tick.Cancelled
			w.seconds += t.Tick.Duration.Seconds()
		}
		w.sent = w.finished + int64(ticks[len(ticks)-1].Load.InFlight-s.curBefore)
	}
	for _, slo := range s.slos {
		w.latency = append(w.latency, sloLatency(st, slo))
	}
	return w
}

// sloLatency is the step's latency as an SLO reads it: the percentile
// asked for (or the average) of its metric, the request latency from the
// schedule in open loop.
func sloLatency(st record.Step, slo SLO) time.Duration {
	l, _ := distribution(st, slo.Metric)
	return pick(l, slo.Percentile)
}

// stable reports whether the last StabilityWindows windows agree within
// the stability percentage: max/min − 1 of throughput and of average
// latency, as perf_analyzer checks. Stability reads the average latency
// even when the SLO is on a percentile: a window's p99 rests on its few
// slowest requests and rarely agrees within 10% with the next window's,
// so a percentile would hold every level to its last trial. The SLO is
// checked on the percentile of the measured windows together. A window
// without throughput is never stable.
func (s *Stepper) stable() bool {
	ok, latency := s.stability()
	return ok && latency
}

// stability says whether the last windows agree in throughput, and in
// latency.
func (s *Stepper) stability() (throughput, latency bool) {
	if len(s.trials) < StabilityWindows {
		return false, false
	}
	last := s.trials[len(s.trials)-StabilityWindows:]
	limit := 1 + s.o.StabilityPercent/100
	minI, maxI := math.Inf(1), 0.0
	minL, maxL := math.Inf(1), 0.0
	var sent, finished int64
	p, probe := s.o.Search.(interface{ Probe(load.Target) bool })
	probe = probe && p.Probe(s.target)
	for _, w := range last {
		if w.inferPerS <= 0 {
			return false, false
		}
		x := w.inferPerS
		if probe && w.mean > 0 {
			// A capacity probe's throughput is its requests in flight
			// over their mean latency (see probeThroughput), steadier
			// than its count of batches finished.
			x = float64(s.target.Concurrency) / w.mean.Seconds()
		}
		minI, maxI = min(minI, x), max(maxI, x)
		l := float64(w.mean)
		minL, maxL = min(minL, l), max(maxL, l)
		sent, finished = sent+w.sent, finished+w.finished
	}
	throughput = maxI/minI <= limit
	if s.target.Open() {
		// A batching server finishes an open loop's requests a batch at a
		// time: a short window's count of finished requests is off by a
		// batch or so (16% of a 1 s window of 200 req/s in batches of 32),
		// which says nothing about stability, and so is the count of
		// those in flight at a tick's end. The sends are paced by the
		// schedule; what an open loop's throughput must show is that the
		// server keeps up with them: over the windows together, the
		// requests it left in flight are within the stability percentage
		// of those sent.
		throughput = sent > 0 && float64(finished)*limit >= float64(sent)
	}
	return throughput, minL <= 0 || maxL/minL <= limit
}

// stableAtLast is the verdict once a level has run all its trials: like
// perf_analyzer with asynchronous requests, which tritontop always sends, a
// level whose throughput agrees but whose latency does not is taken as
// stable, and said to have unsteady latency.
func (s *Stepper) stableAtLast() (stable, unsteady bool) {
	t, l := s.stability()
	if t && !l && len(s.trials) >= s.o.MaxTrials && !s.rising() {
		return true, true
	}
	return t && l, false
}

// rising reports whether an open loop's average latency rose window after
// window over the last windows, by more than the stability percentage in
// all, while the requests in flight grew: a backlog that grows (a rate over
// the server's capacity), not a latency that is merely unsteady.
func (s *Stepper) rising() bool {
	if !s.target.Open() || len(s.trials) < StabilityWindows {
		return false
	}
	last := s.trials[len(s.trials)-StabilityWindows:]
	var sent, finished int64
	for i, w := range last {
		if i > 0 && w.mean <= last[i-1].mean {
			return false
		}
		sent, finished = sent+w.sent, finished+w.finished
	}
	return sent > finished && float64(last[len(last)-1].mean) > float64(last[0].mean)*(1+s.o.StabilityPercent/100)
}

// overThreshold is perf_analyzer's early end: the last windows all past
// the threshold of one SLO. A window past twice a threshold ends the level
// at once: a level that far past its capacity only piles up requests that
// the next level must wait for.
func (s *Stepper) overThreshold() bool {
	if len(s.trials) == 0 {
		return false
	}
	if p, ok := s.o.Search.(interface{ Probe(load.Target) bool }); ok && p.Probe(s.target) {
		// A probe measures throughput, whatever its latency.
		return false
	}
	for i, slo := range s.slos {
		if s.trials[len(s.trials)-1].latency[i] >= 2*slo.Threshold {
			return true
		}
	}
	if len(s.trials) < StabilityWindows {
		return false
	}
	last := s.trials[len(s.trials)-StabilityWindows:]
	for i, slo := range s.slos {
		over := true
		for _, w := range last {
			over = over && w.latency[i] >= slo.Threshold
		}
		if over {
			return true
		}
	}
	return false
}

func (s *Stepper) levelDone() bool {
	if s.fixed != nil {
		return s.ticks >= s.fticks
	}
	return s.stable() || len(s.trials) >= s.o.MaxTrials || s.overThreshold()
}

// SetGPUTarget sets the GPU-utilization ceiling of the first SLO for the
// levels measured after: tritontop tune's trials run without one (a closed
// loop keeps the GPU busy by design) and the plan after them with it. Call
// it from the search's Next.
func (s *Stepper) SetGPUTarget(target float64) {
	if len(s.slos) > 0 {
		s.slos[0].GPUTarget = target
	}
}

// Interrupt ends the level under way when the run ends before it is
// measured (a signal, --duration): its ticks so far become a step marked
// interrupted and unstable, so that nothing measured is lost. It must not
// run concurrently with Add: call it once the collector has returned.
func (s *Stepper) Interrupt() {
	if s.done || s.ticks == 0 {
		return
	}
	if len(s.cur) > 0 {
		s.closeWindow()
	}
	s.finish(true)
}

// finishLevel builds the level's step, checks it, and sets the next level
// (or the end) for the next tick boundary.
func (s *Stepper) finishLevel() { s.finish(false) }

func (s *Stepper) finish(interrupted bool) {
	stable, unsteady := s.stableAtLast()
	m := &record.Measurement{Interrupted: interrupted, Index: s.index, WindowTicks: s.wticks, Trials: len(s.trials),
		Stable: stable && !interrupted, UnsteadyLatency: unsteady, StabilityPercent: s.o.StabilityPercent}
	var b *report.StepBuilder
	if s.fixed != nil {
		b = s.fixed
		m.Fixed = true
		m.Windows = len(s.trials)
		m.WarmupTicks = s.warmedUp
		s.fixed = report.NewStepBuilder(stats.Load{})
	} else {
		b = report.NewStepBuilder(stats.Load{})
		n := 0
		for _, w := range s.kept {
			for _, t := range w {
				b.Add(t)
				n++
			}
		}
		m.Windows = len(s.kept)
		m.WarmupTicks = s.warmedUp + s.ticks - n
	}
	st := b.Step()
	st.Measurement = m
	pass := false
	if len(s.slos) > 0 {
		pass = true
		for _, slo := range s.slos {
			c := check(st, b, slo)
			pass = pass && c.Pass
			// m.SLO is the first check that failed, else the first.
			if m.SLO == nil || m.SLO.Pass && !c.Pass {
				m.SLO = c
			}
			if len(s.slos) > 1 {
				m.SLOs = append(m.SLOs, *c)
			}
		}
	}
	s.levels = append(s.levels, Level{Target: s.target, Step: st, Pass: pass})
	if s.o.OnStep != nil {
		s.o.OnStep(st)
	}

	s.ticks, s.cur, s.kept, s.trials, s.warmedUp = 0, nil, nil, nil, 0
	if interrupted {
		s.done = true
		return
	}
	pre := s.prescheduled
	s.prescheduled = false
	next, ok := s.o.Search.Next(s.levels)
	if !ok {
		s.done = true
		if s.o.OnDone != nil {
			s.o.OnDone(s.Result())
		}
		if !pre {
			s.change(func() { s.drv.Stop(s.o.Drain) })
		}
		return
	}
	if !pre && (mustSettle(s.target, next) || s.needsPrepare(next)) {
		// The level leaves requests in flight that the next would count:
		// it starts once they are done.
		s.settle = &settling{index: s.index + 1, target: next}
		s.change(s.drv.Pause)
		return
	}
	s.index++
	s.target = next
	i := s.index
	if !pre {
		s.change(func() { s.drv.SetStep(i, next) })
	}
}

// change makes a change of load between levels at once, as soon as a
// level is measured or its requests have finished, rather than at the next
// tick boundary: the collector ends the tick under way at a change of
// level or step and starts its ticks again from it
// (stats.Collector.LoadChanged), so the short tick it ends (at the old
// level, or paused) belongs to no step and the next level's ticks are
// whole ticks from the change. A pause does not end a tick: the tick it
// falls in is a paused one, which settles the level before. A lockstep
// run makes every change at the next tick boundary instead: its processes
// share their boundaries, and change level on the same one.
func (s *Stepper) change(f func()) {
	if s.o.Lockstep {
		s.bound.AtNextTick(f)
		return
	}
	f()
}

// mustSettle reports whether the requests a level leaves in flight would
// bend the next level's numbers: an open loop leaves whatever it started,
// many when it was past the capacity, and a closed loop followed by fewer
// in flight, or by an open loop, leaves more than the next level keeps.
// (A closed loop followed by more in flight keeps them all in flight.)
func mustSettle(from, to load.Target) bool {
	return from.Open() || to.Open() || to.Concurrency < from.Concurrency
}

// settled starts the waiting level once a paused tick shows nothing in
// flight, or the drain time is over.
func (s *Stepper) settled(snap stats.Snapshot, st *settling) {
	if !snap.Load.Paused || snap.Load.Drain {
		return
	}
	if st.since.IsZero() {
		st.since = snap.Time.Add(-snap.Interval)
	}
	st.paused++
	if s.o.Lockstep {
		// The tick after this one is paused too: the next level starts at
		// its end.
		if st.paused < s.settleTicks()-1 {
			return
		}
	} else if snap.Load.InFlight > 0 && snap.Time.Sub(st.since) < max(s.o.Drain, MaxSettle) {
		return
	}
	s.settle = nil
	if s.needsPrepare(st.target) {
		s.prepare(st)
		return
	}
	s.startSettled(st)
	s.change(func() {
		s.drv.SetStep(st.index, st.target)
		s.drv.Resume()
	})
}

// startSettled makes st the level measured; the driver is set to it at
// the next boundary.
func (s *Stepper) startSettled(st *settling) {
	s.index, s.target = st.index, st.target
	// The level starts from nothing in flight: its first tick is the
	// ramp, warm-up for a fixed step too.
	s.warmup = 1
}

// settleTicks is how many ticks a lockstep level stays paused for its
// requests in flight (two at least: the one in which the stepper decides
// and the one at whose end the next level starts).
func (s *Stepper) settleTicks() int {
	d := min(s.o.Drain, MaxSettle)
	return max(2, int((d+s.o.Tick-1)/s.o.Tick))
}

// check is a step against one SLO. Goodput counts the requests whose own
// latency, or time to first response, met the threshold; an SLO on the
// time between responses has none, since it is not one value per request.
func check(st record.Step, b *report.StepBuilder, slo SLO) *record.SLOCheck {
	dist, fromSched := distribution(st, slo.Metric)
	c := &record.SLOCheck{Metric: slo.Metric, Percentile: slo.Percentile, Threshold: slo.Threshold,
		Latency: pick(dist, slo.Percentile), FromSchedule: fromSched, GPUTarget: slo.GPUTarget}
	gpuOK := true
	for _, g := range st.Metrics.GPUs {
		if g.HasUtilization {
			c.GPUUtilization = max(c.GPUUtilization, g.UtilizationAvg)
		}
	}
	if slo.GPUTarget > 0 && c.GPUUtilization > slo.GPUTarget {
		gpuOK = false
	}
	c.Pass = st.Measurement.Stable && c.Latency < slo.Threshold && gpuOK && st.Client.Successes > 0 && dist.Count > 0
	var n int64
	ok := false
	switch slo.Metric {
	case MetricLatency:
		n, ok = b.AtOrBelow(slo.Threshold, fromSched)
	case MetricTTFT:
		n, ok = b.TTFTAtOrBelow(slo.Threshold)
	}
	if ok && st.Duration > 0 {
		c.Goodput = float64(n) / st.Duration.Seconds()
	}
	return c
}

// Result is what the run found so far: the highest passing level and the
// knee, as indexes of the measured steps.
func (s *Stepper) Result() record.Search {
	r := record.Search{Mode: s.o.Search.Mode(), Best: -1, Knee: -1}
	var steps []record.Step
	for _, l := range s.levels {
		steps = append(steps, l.Step)
		r.MaxThroughput = max(r.MaxThroughput, l.Step.Client.InferPerS)
	}
	for i, slo := range s.slos {
		c := record.SLOCheck{Metric: slo.Metric, Percentile: slo.Percentile, Threshold: slo.Threshold, GPUTarget: slo.GPUTarget}
		if i == 0 {
			r.SLO = &c
		}
		if len(s.slos) > 1 {
			r.SLOs = append(r.SLOs, c)
		}
	}
	if len(s.slos) > 0 {
		r.Best = Best(s.levels)
		if b, ok := s.o.Search.(interface{ Best([]Level) int }); ok {
			r.Best = b.Best(s.levels)
		}
	}
	r.Knee = kneeOf(steps)
	return r
}

// kneeOf is the knee among the steps of the last step's mode: a capacity
// search's closed-loop probe is no point of its rate curve.
func kneeOf(steps []record.Step) int {
	if len(steps) == 0 {
		return -1
	}
	mode := steps[len(steps)-1].Load.Mode
	var idx []int
	var same []record.Step
	for i, st := range steps {
		if st.Load.Mode == mode {
			idx = append(idx, i)
			same = append(same, st)
		}
	}
	if k := report.Knee(same); k >= 0 {
		return idx[k]
	}
	return -1
}

// publish updates the progress others read.
func (s *Stepper) publish(now time.Time) {
	p := Progress{Step: len(s.levels) + 1, Total: s.o.Search.Total(), Level: s.target, Done: s.done,
		MaxTrials: s.o.MaxTrials, Trials: len(s.trials), Search: s.o.Search, Preparing: s.preparing}
	if s.done {
		p.Step = len(s.levels)
	}
	if !s.began.IsZero() && !now.IsZero() {
		p.InStep = now.Sub(s.began)
	}
	if s.fixed != nil {
		p.Trials, p.MaxTrials = s.ticks, s.fticks
		p.Left = time.Duration(s.fticks-s.ticks) * s.o.Tick
	} else {
		// At most: windows up to MaxTrials.
		p.Left = time.Duration((s.o.MaxTrials-len(s.trials))*s.wticks-len(s.cur)) * s.o.Tick
	}
	p.Left = max(p.Left, 0)
	p.Levels = s.levels
	s.mu.Lock()
	s.prog = p
	s.mu.Unlock()
}

// Position is the step's place in the run: step of total.
func (p Progress) Position() (int, int) { return p.Step, max(p.Total, p.Step) }

// String is a progress line: "step 3/8 concurrency 12, window 2/10".
func (p Progress) String() string {
	return fmt.Sprintf("step %d/%d %s, %d/%d", p.Step, p.Total, p.Level, p.Trials, p.MaxTrials)
}
