package tune

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/tui"
)

// steps is the search as a stepped run's plan.Search and plan.Preparer:
// each level is a trial, closed loop at the trial's concurrency, and a
// level whose configuration is not the one served is prepared by loading
// it. After the search, with a plan asked for, the levels are a capacity
// search at the best configuration (plan.Capacity, as tritontop plan
// runs it). Its methods run on the collector's goroutine, but for the
// dashboard's reads and a load's end.
type steps struct {
	x     *Search
	obj   Objective
	floor float64
	// load loads a configuration; it runs on a goroutine of its own.
	load func(ctx context.Context, p Point) error
	ctx  context.Context
	// capacity, when set, is the plan's search after the tune's; gpu its
	// GPU ceiling, set on the stepper when it starts.
	capacity *plan.Capacity
	gpu      float64
	stepper  *plan.Stepper
	// onLoadError tells the run of a configuration that did not load.
	onLoadError func(t Trial, err error)

	mu      sync.Mutex
	applied Point // the configuration served
	loaded  bool  // a configuration was loaded: the original must go back
	seen    int   // levels recorded into the search
	best    Point // the plan's configuration
	from    int   // the plan's first level; -1 before it starts
	failed  bool  // the plan's configuration did not load
	started time.Time
}

// Next implements plan.Search.
func (s *steps) Next(done []plan.Level) (load.Target, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started.IsZero() {
		s.started = time.Now()
	}
	if s.from >= 0 {
		if s.failed {
			return load.Target{}, false
		}
		return s.capacity.Next(done[s.from:])
	}
	for ; s.seen < len(done); s.seen++ {
		s.x.Record(measureOf(done[s.seen], s.obj, s.floor), nil)
	}
	if t, ok := s.x.Next(); ok {
		return closed(t.Concurrency), true
	}
	return s.startPlan(done)
}

// startPlan starts the capacity search at the best configuration, when a
// plan is asked for and a trial passed.
func (s *steps) startPlan(done []plan.Level) (load.Target, bool) {
	rs, best, _ := s.x.State()
	if s.capacity == nil || best < 0 {
		return load.Target{}, false
	}
	s.best, s.from = rs[best].Point, len(done)
	s.capacity.Concurrency = rs[best].Concurrency
	if s.stepper != nil {
		s.stepper.SetGPUTarget(s.gpu)
	}
	return s.capacity.Next(nil)
}

// levelOf is the level of result k (results that did not load have none:
// -1), and resultOf the result of level i (-1 for none yet).
func levelOf(rs []Result, k int) int {
	if k < 0 || k >= len(rs) || rs[k].LoadError != "" {
		return -1
	}
	n := 0
	for _, r := range rs[:k] {
		if r.LoadError == "" {
			n++
		}
	}
	return n
}

func resultOf(rs []Result, i int) int {
	n := 0
	for k, r := range rs {
		if r.LoadError != "" {
			continue
		}
		if n == i {
			return k
		}
		n++
	}
	return -1
}

// closed is a closed-loop target of n requests in flight.
func closed(n int) load.Target { return load.Target{Mode: load.Concurrency, Concurrency: n} }

// want is the configuration the next level needs.
func (s *steps) want() (Point, bool) {
	if s.from >= 0 {
		return s.best, false
	}
	t, ok := s.x.Pending()
	return t.Point, ok
}

// Needs implements plan.Preparer: a level whose configuration is not the
// one served.
func (s *steps) Needs(load.Target) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := s.want()
	return p.normal() != s.applied.normal()
}

// Prepare implements plan.Preparer: it loads the next level's
// configuration; one that does not load is the trial's result.
func (s *steps) Prepare(_ load.Target, done func(error)) {
	s.mu.Lock()
	p, trial := s.want()
	pending, _ := s.x.Pending()
	s.loaded = true
	s.mu.Unlock()
	go func() {
		err := s.load(s.ctx, p)
		s.mu.Lock()
		switch {
		case err == nil:
			s.applied = p
		case trial:
			s.x.Record(Measure{}, err)
		default:
			s.failed = true
		}
		s.mu.Unlock()
		if err != nil && trial && s.onLoadError != nil {
			s.onLoadError(pending, err)
		}
		done(err)
	}()
}

// Mode implements plan.Search.
func (s *steps) Mode() string { return "tune" }

// Total implements plan.Search: the trial budget (or the grid), and the
// plan's capacity search.
func (s *steps) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.x.s.o.MaxTrials
	if g := s.x.s.o.Space.Size(); n <= 0 || g < n {
		n = g
	}
	if s.capacity != nil {
		n += s.capacity.Total()
	}
	return n
}

// Probe implements the stepper's probe test: the plan's closed-loop
// probes measure throughput whatever their latency; the tune's trials do
// not.
func (s *steps) Probe(t load.Target) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.from >= 0 && s.capacity.Probe(t)
}

// Best implements the stepper's choice of the answer: the level of the
// best trial.
func (s *steps) Best(levels []plan.Level) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, best, _ := s.x.State()
	if i := levelOf(rs, best); i < len(levels) {
		return i
	}
	return -1
}

// Phase names level i for its line: the trial and its configuration, or
// the plan's phase.
func (s *steps) Phase(done []plan.Level, i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.from >= 0 && i >= s.from {
		return "plan " + s.capacity.Phase(done[s.from:], i-s.from) + " · " + s.best.String()
	}
	rs, _, _ := s.x.State()
	if k := resultOf(rs, i); k >= 0 {
		return fmt.Sprintf("trial %d · %s", k+1, rs[k].Point)
	}
	if t, ok := s.x.Pending(); ok {
		return fmt.Sprintf("trial %d · %s", len(rs)+1, t.Point)
	}
	return fmt.Sprintf("trial %d", len(rs)+1)
}

// configOf is the configuration level i measured.
func (s *steps) configOf(i int) (Point, bool) {
	if s.from >= 0 && i >= s.from {
		return s.best, true
	}
	rs, _, _ := s.x.State()
	if k := resultOf(rs, i); k >= 0 {
		return rs[k].Point, true
	}
	if t, ok := s.x.Pending(); ok {
		return t.Point, true
	}
	return Point{}, false
}

// stepConfig is the configuration of the step being measured, for its
// line in the run file.
func (s *steps) stepConfig(i int) *record.TuneConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.configOf(i)
	if !ok {
		return nil
	}
	c := recordConfig(p)
	return &c
}

// measureOf is what a measured level says of its trial.
func measureOf(l plan.Level, obj Objective, floor float64) Measure {
	st := l.Step
	m := Measure{Throughput: st.Client.InferPerS, P99: st.Client.Latency.P99, Pass: l.Pass && st.Client.Successes > 0}
	if st.Server.Available {
		m.Queue, m.Compute, m.Batch = st.Server.Queue, st.Server.Compute(), st.Server.AvgBatch
	}
	if ms := st.Measurement; ms != nil {
		m.Stable = ms.Stable
		if ms.SLO != nil {
			m.Latency = ms.SLO.Latency
		}
	}
	for _, g := range st.Metrics.GPUs {
		if g.HasUtilization && g.UtilizationAvg > 0.01 {
			m.GPUs++
			m.GPUUtilization = max(m.GPUUtilization, g.UtilizationAvg)
		}
	}
	if obj == Latency && m.Throughput < floor {
		m.Pass = false
	}
	return m
}

// recordConfig is p as the run file has it.
func recordConfig(p Point) record.TuneConfig {
	return record.TuneConfig{Instances: p.Instances, MaxBatchSize: p.MaxBatch, QueueDelayUS: p.Delay, Preferred: string(p.Preferred)}
}

// TuneView implements tui.TuneSource: the dashboard's tune pane reads the
// search through the stepper's progress.
func (s *steps) TuneView() tui.TuneView {
	rs, best, stopped := s.x.State()
	v := tui.TuneView{Tune: *Record(s.obj, s.x.s.o.Space, rs, best, stopped)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.x.Pending(); ok {
		cur := record.TuneTrial{Config: recordConfig(t.Point), Concurrency: t.Concurrency, Baseline: t.Baseline, Step: -1}
		v.Current = &cur
		v.Loading = s.stepper != nil && s.stepper.Progress().Preparing
	}
	return v
}
