package tune

import "math"

// run is the search: the baseline first, then a climb over the grid from
// the point nearest it.
func (s *searcher) run() {
	base := s.o.Baseline
	if _, ok := s.evaluate(base, true, -1); !ok {
		return
	}
	center := s.o.Space.nearest(base)
	if _, ok := s.evaluate(s.o.Space.at(center), false, s.startFrom(base)); !ok {
		return
	}
	s.climb(center)
}

// climb is a compass search over the grid: from the center, each
// dimension in turn (batch size, instances, delay, preferred sizes), one
// step up and one down; the first neighbor better by MinGain becomes the
// center and the climb goes on in that direction while it improves (a
// line search), then starts over from the first dimension. It ends when
// no neighbor of the center improves on it. Every configuration is
// measured once (evaluate remembers them).
func (s *searcher) climb(center [dimCount]int) {
	for {
		moved, ok := s.moveFrom(&center)
		if !ok || !moved {
			return
		}
	}
}

// moveFrom tries the center's neighbors and moves it to the first that is
// better; false when the search must end.
func (s *searcher) moveFrom(center *[dimCount]int) (moved, ok bool) {
	for d := range dimCount {
		for _, dir := range [2]int{+1, -1} {
			cur := s.valueAt(*center)
			next, has := s.step(*center, d, dir)
			if !has {
				continue
			}
			v, ok := s.evaluate(s.o.Space.at(next), false, s.startFrom(s.o.Space.at(*center)))
			if !ok {
				return false, false
			}
			if !better(v, cur) {
				continue
			}
			*center = next
			for {
				further, has := s.step(*center, d, dir)
				if !has {
					return true, true
				}
				v, ok := s.evaluate(s.o.Space.at(further), false, s.startFrom(s.o.Space.at(*center)))
				if !ok {
					return true, false
				}
				if !better(v, s.valueAt(*center)) {
					return true, true
				}
				*center = further
			}
		}
	}
	return false, true
}

// step is the neighbor of ix one step along dimension d, skipping values
// that make the same configuration (a delay without a batcher); false at
// the grid's edge.
func (s *searcher) step(ix [dimCount]int, d, dir int) ([dimCount]int, bool) {
	from := s.o.Space.at(ix).normal()
	for {
		ix[d] += dir
		if ix[d] < 0 || ix[d] >= s.o.Space.values(d) {
			return ix, false
		}
		if s.o.Space.at(ix).normal() != from {
			return ix, true
		}
	}
}

// valueAt is the value of the configuration at ix, measured already.
func (s *searcher) valueAt(ix [dimCount]int) float64 {
	if e, ok := s.memo[s.o.Space.at(ix).normal()]; ok {
		return e.value
	}
	return math.Inf(-1)
}

// startFrom is the concurrency a neighbor of p starts at: p's best
// concurrency scaled by the neighbor's capacity in flight (instances ×
// batch), or -1 when p has none (then the default start).
func (s *searcher) startFrom(p Point) int {
	e, ok := s.memo[p.normal()]
	if !ok || e.best < 0 {
		return -1
	}
	return s.o.Space.Concurrency[e.conc] * 1000 / max(1, slots(p))
}

// slots is a configuration's requests in execution at once when full:
// instances × batch size.
func slots(p Point) int { return p.Instances * max(1, p.MaxBatch) }

// evaluate measures configuration p at the loads its walk needs and
// returns its value (-Inf when no load passed); false when the search
// must end. perSlot, when not -1, is the concurrency per thousand slots
// its walk starts near. A configuration is measured once.
func (s *searcher) evaluate(p Point, baseline bool, perSlot int) (float64, bool) {
	p = p.normal()
	if e, ok := s.memo[p]; ok {
		return e.value, true
	}
	start := s.startIndex(p, perSlot)
	var e *eval
	var ok bool
	if s.o.Objective == Latency {
		e, ok = s.walkLatency(p, baseline, start)
	} else {
		e, ok = s.walkThroughput(p, baseline, start)
	}
	s.memo[p] = e
	return e.value, ok
}

// startIndex is where p's walk starts: near perSlot × slots / 1000, or,
// without a neighbor to go by, twice its slots (every instance with a
// full batch running and one waiting, as plan's capacity probe does); the
// latency objective without a throughput floor starts at the lowest load.
func (s *searcher) startIndex(p Point, perSlot int) int {
	conc := s.o.Space.Concurrency
	if s.o.Objective == Latency && s.o.MinThroughput <= 0 {
		return 0
	}
	want := 2 * slots(p)
	if perSlot > 0 {
		want = max(1, perSlot*slots(p)/1000)
	}
	return nearestIndex(conc, want)
}

// consider keeps r in e when it is e's best so far.
func (s *searcher) consider(e *eval, r Result, i int) {
	if v := s.o.Objective.value(r.Measure); v > e.value {
		e.value, e.best, e.conc = v, len(s.results)-1, i
	}
}
