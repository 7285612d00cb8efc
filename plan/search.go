package plan

import (
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
)

// Level is one measured level of a stepped run: its target, its step and
// whether it met the SLO (false without one).
type Level struct {
	Target load.Target
	Step   record.Step
	Pass   bool
}

// A Search chooses the levels of a stepped run one at a time, from what the
// levels before measured.
type Search interface {
	// Next returns the next level to measure after done, or false when
	// the search is over.
	Next(done []Level) (load.Target, bool)
	// Mode names the search in the record: "sweep", "linear" or
	// "binary".
	Mode() string
	// Total is the most levels the search measures, for progress.
	Total() int
}

// Sweep measures every level in order. With StopAtSLO it stops after the
// first level that fails the SLO, as perf_analyzer does with
// --latency-threshold: the level before is the highest that held.
type Sweep struct {
	Levels    []load.Target
	StopAtSLO bool
}

// Next implements Search.
func (s Sweep) Next(done []Level) (load.Target, bool) {
	if s.StopAtSLO && len(done) > 0 && !done[len(done)-1].Pass {
		return load.Target{}, false
	}
	if len(done) >= len(s.Levels) {
		return load.Target{}, false
	}
	return s.Levels[len(done)], true
}

// Mode implements Search.
func (s Sweep) Mode() string {
	if s.StopAtSLO {
		return "linear"
	}
	return "sweep"
}

// Total implements Search.
func (s Sweep) Total() int { return len(s.Levels) }

// Binary searches the levels for the highest that meets the SLO, as
// perf_analyzer's --binary-search does: the lowest level first (if it fails,
// none will), then the highest (if it passes, it is the answer), then
// halving the interval between the highest passing and the lowest failing
// level. It bisects the levels' indices, not their values, so that it lands
// on the same levels a linear sweep of the range measures and, for latency
// that grows with load, returns the same answer.
type Binary struct {
	Levels []load.Target
}

// Next implements Search.
func (b Binary) Next(done []Level) (load.Target, bool) {
	n := len(b.Levels)
	switch {
	case n == 0:
		return load.Target{}, false
	case len(done) == 0:
		return b.Levels[0], true
	case len(done) == 1:
		if !done[0].Pass || n == 1 {
			return load.Target{}, false
		}
		return b.Levels[n-1], true
	}
	lo, hi, ok := b.bounds(done)
	if !ok || hi-lo <= 1 {
		return load.Target{}, false
	}
	return b.Levels[(lo+hi)/2], true
}

// bounds is the index of the highest passing level and the lowest failing
// one measured; ok is false when the highest level passed.
func (b Binary) bounds(done []Level) (lo, hi int, ok bool) {
	lo, hi = 0, len(b.Levels)-1
	if done[1].Pass {
		return lo, hi, false
	}
	for _, l := range done[2:] {
		i := b.index(l.Target)
		if l.Pass {
			lo = max(lo, i)
		} else {
			hi = min(hi, i)
		}
	}
	return lo, hi, true
}

func (b Binary) index(t load.Target) int {
	for i, l := range b.Levels {
		if l == t {
			return i
		}
	}
	return 0
}

// Mode implements Search.
func (Binary) Mode() string { return "binary" }

// Total implements Search: two ends and a halving per level between.
func (b Binary) Total() int {
	n, steps := len(b.Levels), 0
	for span := n - 1; span > 1; span = (span + 1) / 2 {
		steps++
	}
	return min(n, 2+steps)
}

// Best is the index in levels of the highest-load level that passed, -1
// when none did.
func Best(levels []Level) int {
	best := -1
	for i, l := range levels {
		if l.Pass && (best < 0 || l.Target.Level() > levels[best].Target.Level()) {
			best = i
		}
	}
	return best
}
