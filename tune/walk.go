package tune

import "math"

// walkThroughput finds the load at which configuration p does best under
// the throughput objectives: the highest concurrency that passes, as its
// throughput only grows with load. It brackets it between the highest
// passing level measured (lo) and the lowest failing one (hi):
//
//   - nothing passed yet: it goes down, to the concurrency Little's law
//     says meets the latency (concurrency × threshold / latency, less
//     10%), at least one level, unless the failing level's throughput,
//     an upper bound on every lower level's, cannot beat the best so far;
//   - nothing failed yet: it goes up one level, unless the passing level
//     is saturated (Triton queued requests half their compute time or
//     more), its throughput grew less than Saturation over the level
//     below, or no level is left;
//   - both: it bisects the gap, unless the failing level's throughput
//     cannot beat p's best.
func (s *searcher) walkThroughput(p Point, baseline bool, i int) (*eval, bool) {
	conc := s.o.Space.Concurrency
	e := &eval{value: math.Inf(-1), best: -1}
	lo, hi := -1, len(conc)
	var loR, hiR Result
	for {
		r, ok := s.measure(Trial{Point: p, Concurrency: conc[i], Baseline: baseline})
		if !ok || r.LoadError != "" {
			return e, ok
		}
		grew := true
		if r.Pass {
			if lo >= 0 && i > lo {
				grew = r.Throughput >= loR.Throughput*(1+Saturation)
			}
			s.consider(e, r, i)
			if i > lo {
				lo, loR = i, r
			}
		} else if i < hi {
			hi, hiR = i, r
		}
		next := s.nextLoad(e, lo, hi, loR, hiR, grew)
		if next < 0 {
			return e, true
		}
		i = next
	}
}

// nextLoad is the walk's next concurrency index, -1 when it is done.
func (s *searcher) nextLoad(e *eval, lo, hi int, loR, hiR Result, grew bool) int {
	bound := func(r Result) float64 {
		// The most a lower load could give: the failing level's
		// throughput, per GPU at the least one GPU.
		return r.Throughput * (1 + MinGain)
	}
	switch {
	case lo < 0:
		if hi == 0 || bound(hiR) <= s.bestThroughput() {
			return -1
		}
		return s.lower(hi, hiR)
	case hi == lo+1:
		return -1
	case hi == len(s.o.Space.Concurrency):
		if !grew || loR.saturated() {
			return -1
		}
		return lo + 1
	}
	if loR.saturated() || bound(hiR) <= e.throughputOf(s) {
		return -1
	}
	return (lo + hi) / 2
}

// bestThroughput is the best passing result's throughput in the
// objective's terms (per GPU at one GPU at most), -Inf for none.
func (s *searcher) bestThroughput() float64 {
	if s.best < 0 {
		return math.Inf(-1)
	}
	return s.o.Objective.value(s.results[s.best].Measure)
}

// throughputOf is e's best result's throughput, -Inf for none.
func (e *eval) throughputOf(s *searcher) float64 {
	if e.best < 0 {
		return math.Inf(-1)
	}
	return s.results[e.best].Throughput
}

// lower is the concurrency index below hi at which a level that failed at
// hi should pass: by Little's law at a saturated server, latency grows in
// proportion to the requests in flight, so the concurrency that meets the
// threshold is hi's × threshold / latency; 10% less for the tail, and at
// least one level down.
func (s *searcher) lower(hi int, r Result) int {
	conc := s.o.Space.Concurrency
	j := hi - 1
	if s.o.Threshold > 0 && r.Latency > s.o.Threshold {
		want := float64(conc[hi]) * float64(s.o.Threshold) / float64(r.Latency) * 0.9
		for j > 0 && float64(conc[j]) > want {
			j--
		}
	}
	return j
}

// walkLatency finds the load at which configuration p does best under the
// latency objective: the lowest concurrency that passes (its latency is
// the lowest) with at least the minimum throughput. From a passing level
// it goes down while levels pass; from one under the minimum throughput,
// up until one passes or the latency fails; from one over the latency,
// down until one passes or the throughput falls short.
func (s *searcher) walkLatency(p Point, baseline bool, i int) (*eval, bool) {
	conc := s.o.Space.Concurrency
	e := &eval{value: math.Inf(-1), best: -1}
	dir := 0
	for {
		r, ok := s.measure(Trial{Point: p, Concurrency: conc[i], Baseline: baseline})
		if !ok || r.LoadError != "" {
			return e, ok
		}
		s.consider(e, r, i)
		short := r.Throughput < s.o.MinThroughput
		if dir == 0 {
			switch {
			case r.Pass:
				dir = -1
			case short && (s.o.Threshold == 0 || r.Latency < s.o.Threshold):
				dir = +1
			default:
				dir = -1
			}
		}
		switch {
		case dir < 0 && (!r.Pass && e.best >= 0 || short),
			dir > 0 && (r.Pass || s.o.Threshold > 0 && r.Latency >= s.o.Threshold):
			return e, true
		}
		i += dir
		if i < 0 || i >= len(conc) {
			return e, true
		}
	}
}
