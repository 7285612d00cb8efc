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
// that grows with load, returns the same answer. With Start above 0 it
// measures Levels[Start] first instead: when that passes it goes on to the
// highest, and when it fails to the lowest, halving between them as
// before, so that the slow lowest levels are measured only when the plan
// needs them.
type Binary struct {
	Levels []load.Target
	Start  int
}

// Next implements Search.
func (b Binary) Next(done []Level) (load.Target, bool) {
	n := len(b.Levels)
	if n == 0 {
		return load.Target{}, false
	}
	if len(done) == 0 {
		return b.Levels[min(max(b.Start, 0), n-1)], true
	}
	lo, hi := b.bounds(done)
	switch {
	case hi-lo <= 1:
		return load.Target{}, false
	case lo < 0:
		// Nothing passed yet: the lowest level says whether any will.
		return b.Levels[0], true
	case hi == n:
		// Nothing failed yet: the highest level may be the answer.
		return b.Levels[n-1], true
	}
	return b.Levels[(lo+hi)/2], true
}

// bounds is the index of the highest passing level measured (-1 when none
// passed) and of the lowest failing one (len(b.Levels) when none failed).
func (b Binary) bounds(done []Level) (lo, hi int) {
	lo, hi = -1, len(b.Levels)
	for _, l := range done {
		i := b.index(l.Target)
		if i < 0 {
			continue
		}
		if l.Pass {
			lo = max(lo, i)
		} else {
			hi = min(hi, i)
		}
	}
	return lo, hi
}

func (b Binary) index(t load.Target) int {
	for i, l := range b.Levels {
		if l == t {
			return i
		}
	}
	return -1
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
