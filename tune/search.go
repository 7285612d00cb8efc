package tune

import (
	"errors"
	"iter"
	"math"
	"sync"
	"time"
)

// Trial is one measurement the search asks for: a configuration at one
// concurrency (requests in flight, closed loop).
type Trial struct {
	Point       Point `json:"config"`
	Concurrency int   `json:"concurrency"`
	// Baseline marks the model's own configuration, measured first.
	Baseline bool `json:"baseline,omitempty"`
}

// Result is a trial and what it measured.
type Result struct {
	Trial
	Measure
	// LoadError is why the configuration did not load; the trial then
	// measured nothing.
	LoadError string `json:"load_error,omitempty"`
	// Elapsed is the trial's time, the configuration's load included.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// SearchOptions are what a search looks for and where.
type SearchOptions struct {
	Objective Objective
	Space     Space
	// Baseline is the model's own configuration: measured first, and the
	// grid point nearest it is where the climb starts.
	Baseline Point
	// Threshold is the latency the first SLO allows; the search uses it
	// to guess the load at which a failing configuration passes.
	Threshold time.Duration
	// MinThroughput is the latency objective's floor, infer/s.
	MinThroughput float64
	// MaxTrials and MaxTime bound the search (0: no bound); Now is its
	// clock (nil: time.Now).
	MaxTrials int
	MaxTime   time.Duration
	Now       func() time.Time
	// Exhaustive measures every point of the grid instead (the brute
	// force a search is measured against).
	Exhaustive bool
}

// Defaults of the search's judgement.
const (
	// Saturation: a configuration's load is not raised further once a
	// level's throughput grew less than this share over the level below.
	Saturation = 0.05
	// MinGain: the climb moves to a neighbor only when it is better by
	// this share, more than the noise of a stable measurement.
	MinGain = 0.02
)

// Stop reasons of a search.
const (
	StopConverged   = "converged: no neighbor of the best configuration did better"
	StopExhausted   = "every point of the grid measured"
	StopTrialBudget = "trial budget spent"
	StopTimeBudget  = "time budget spent"
	StopInterrupted = "interrupted"
)

// Search chooses trials one at a time from the results of those before.
// Next and Record alternate: Next gives a trial, Record its result. It is
// safe for concurrent use.
type Search struct {
	mu      sync.Mutex
	s       *searcher
	next    func() (Trial, bool)
	stop    func()
	pending *Trial
	since   time.Time // the pending trial's start
	begun   time.Time
	reason  string
	// recorded counts the results recorded, for the time budget.
	recorded int
}

// NewSearch checks o and starts a search.
func NewSearch(o SearchOptions) (*Search, error) {
	if len(o.Space.Instances) == 0 || len(o.Space.MaxBatch) == 0 || len(o.Space.Delays) == 0 ||
		len(o.Space.Preferred) == 0 || len(o.Space.Concurrency) == 0 {
		return nil, errors.New("tune: a dimension of the grid has no value")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &searcher{o: o, memo: map[Point]*eval{}, best: -1}
	x := &Search{s: s, begun: o.Now()}
	x.next, x.stop = iter.Pull(func(yield func(Trial) bool) {
		s.yield = yield
		if o.Exhaustive {
			s.exhaust()
		} else {
			s.run()
		}
	})
	return x, nil
}

// Next is the next trial, or false when the search is over.
func (x *Search) Next() (Trial, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.reason != "" {
		return Trial{}, false
	}
	if x.pending != nil {
		return *x.pending, true
	}
	if x.overTime() {
		x.end(StopTimeBudget)
		return Trial{}, false
	}
	t, ok := x.next()
	if !ok {
		x.end(x.s.ended())
		return Trial{}, false
	}
	x.pending, x.since = &t, x.s.o.Now()
	return t, true
}

// overTime reports whether another trial, as long as the mean trial so
// far, would run past the time budget.
func (x *Search) overTime() bool {
	if x.s.o.MaxTime <= 0 {
		return false
	}
	elapsed := x.s.o.Now().Sub(x.begun)
	var mean time.Duration
	if x.recorded > 0 {
		mean = elapsed / time.Duration(x.recorded)
	}
	return elapsed+mean > x.s.o.MaxTime
}

// Record gives the pending trial's result: what it measured, or why its
// configuration did not load (m is then ignored).
func (x *Search) Record(m Measure, loadErr error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.pending == nil {
		return
	}
	r := Result{Trial: *x.pending, Measure: m, Elapsed: x.s.o.Now().Sub(x.since)}
	if loadErr != nil {
		r.Measure, r.LoadError = Measure{}, loadErr.Error()
	}
	x.pending = nil
	x.recorded++
	x.s.last = r
	x.s.fresh = true
}

// Pending is the trial Next gave whose result is not recorded yet.
func (x *Search) Pending() (Trial, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.pending == nil {
		return Trial{}, false
	}
	return *x.pending, true
}

// Stop ends the search (the run ended): Next gives nothing more.
func (x *Search) Stop(reason string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.reason == "" {
		x.end(reason)
	}
}

func (x *Search) end(reason string) {
	x.reason = reason
	x.pending = nil
	x.stop()
}

// State is the search so far: every result in the order measured, the
// best passing one (-1 for none) and why the search ended ("" while it
// runs).
func (x *Search) State() (results []Result, best int, stopped string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Result(nil), x.s.results...), x.s.best, x.reason
}

// searcher is the strategy as straight-line code, run as a coroutine by
// Search: measure yields a trial and returns its result. Its state is
// touched only while Search.mu is held.
type searcher struct {
	o       SearchOptions
	yield   func(Trial) bool
	last    Result
	fresh   bool
	results []Result
	best    int
	memo    map[Point]*eval
	budget  bool // the trial budget ended it
}

// eval is what the search knows of one configuration: its best passing
// result and that result's concurrency index.
type eval struct {
	value float64
	best  int // index of results, -1 for none
	conc  int
}

// ended is why the coroutine returned.
func (s *searcher) ended() string {
	switch {
	case s.budget:
		return StopTrialBudget
	case s.o.Exhaustive:
		return StopExhausted
	}
	return StopConverged
}

// measure asks for t and returns its result; false when the search must
// end (the budget, or Search.Stop).
func (s *searcher) measure(t Trial) (Result, bool) {
	if s.o.MaxTrials > 0 && len(s.results) >= s.o.MaxTrials {
		s.budget = true
		return Result{}, false
	}
	s.fresh = false
	if !s.yield(t) || !s.fresh {
		return Result{}, false
	}
	r := s.last
	s.results = append(s.results, r)
	if r.LoadError == "" && r.Pass && (s.best < 0 || s.o.Objective.value(r.Measure) > s.o.Objective.value(s.results[s.best].Measure)) {
		s.best = len(s.results) - 1
	}
	return r, true
}

// bestValue is the best passing result's value, -Inf for none.
func (s *searcher) bestValue() float64 {
	if s.best < 0 {
		return math.Inf(-1)
	}
	return s.o.Objective.value(s.results[s.best].Measure)
}

// better reports whether a beats b by more than MinGain.
func better(a, b float64) bool {
	if math.IsInf(b, -1) {
		return !math.IsInf(a, -1)
	}
	return a > b+MinGain*math.Abs(b)
}

// exhaust measures every configuration at every concurrency: the brute
// force.
func (s *searcher) exhaust() {
	for _, p := range s.o.Space.Points() {
		for _, c := range s.o.Space.Concurrency {
			r, ok := s.measure(Trial{Point: p, Concurrency: c})
			if !ok {
				return
			}
			if r.LoadError != "" {
				break
			}
		}
	}
}
