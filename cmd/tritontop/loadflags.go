package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
)

// schedule is what a run's load flags ask for: the load to start at, and
// for a range the search over its levels.
type schedule struct {
	initial load.Target
	search  plan.Search // nil without a range
	slo     *plan.SLO
}

// loadFromFlags turns the flags into the run's initial load and, for a
// range, its search: every level in order, until the first past
// --latency-threshold, or --binary-search.
func loadFromFlags(f *loadFlags) (schedule, error) {
	dist := load.Constant
	if f.distribution == "poisson" {
		dist = load.Poisson
	}
	var sc schedule
	if f.latencyThreshold > 0 {
		sc.slo = &plan.SLO{Percentile: f.percentile, Threshold: time.Duration(f.latencyThreshold * float64(time.Millisecond))}
	}
	var levels []load.Target
	switch {
	case f.concRange != "":
		start, end, step, err := parseRange("--concurrency-range", f.concRange)
		if err != nil {
			return sc, usageError{err}
		}
		if levels, err = plan.Levels(load.Target{Mode: load.Concurrency}, start, end, step); err != nil {
			return sc, usageError{fmt.Errorf("bad --concurrency-range %q: %w", f.concRange, err)}
		}
	case f.rateRange != "":
		start, end, step, err := parseRange("--request-rate-range", f.rateRange)
		if err != nil {
			return sc, usageError{err}
		}
		base := load.Target{Mode: load.Rate, Distribution: dist, MaxInFlight: f.maxInflight}
		if levels, err = plan.Levels(base, start, end, step); err != nil {
			return sc, usageError{fmt.Errorf("bad --request-rate-range %q: %w", f.rateRange, err)}
		}
	case f.rate > 0:
		sc.initial = load.Target{Mode: load.Rate, Rate: f.rate, Distribution: dist, MaxInFlight: f.maxInflight}
		return sc, nil
	default:
		sc.initial = load.Target{Mode: load.Concurrency, Concurrency: max(f.concurrency, 1)}
		return sc, nil
	}
	switch {
	case f.binarySearch && sc.slo == nil:
		return sc, usageError{errors.New("--binary-search needs --latency-threshold MS: it searches for the highest level under it")}
	case f.binarySearch:
		sc.search = plan.Binary{Levels: levels}
	default:
		sc.search = plan.Sweep{Levels: levels, StopAtSLO: sc.slo != nil}
	}
	sc.initial = levels[0]
	return sc, nil
}
