package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/triton/pb"
)

// schedule is what a run's load flags ask for: the load to start at, and
// for a range the search over its levels.
type schedule struct {
	initial load.Target
	search  plan.Search // nil without a range
	slo     *plan.SLO
	slos    []plan.SLO // more objectives, all of which must hold
}

// loadFromFlags turns the flags into the run's initial load and, for a
// range, its search: every level in order, until the first past
// --latency-threshold, or --binary-search. With --workers, it is this
// worker's share of them.
func loadFromFlags(f *loadFlags) (sc schedule, err error) {
	defer func() {
		if err == nil {
			sc, err = f.dist.share(sc)
		}
	}()
	dist := load.Constant
	if f.distribution == "poisson" {
		dist = load.Poisson
	}
	if f.latencyThreshold > 0 {
		sc.slo = &plan.SLO{Percentile: f.percentile, Threshold: time.Duration(f.latencyThreshold * float64(time.Millisecond))}
	}
	if f.plan != nil {
		// The probe's concurrency follows the model's config, known once
		// connected (see planProbe).
		sc.slo, sc.slos = &f.plan.parsed, f.plan.more
		sc.search = &plan.Capacity{Base: load.Target{Mode: load.Rate, Distribution: dist, MaxInFlight: f.maxInflight},
			Window: time.Duration(f.intervalMS) * time.Millisecond, Repeat: f.plan.budget.repeat}
		return sc, nil
	}
	var levels []load.Target
	switch {
	case f.concRange != "":
		start, end, step, err := parseRange("--concurrency-range", f.concRange)
		if err != nil {
			return sc, usageError{err}
		}
		if err := wholeRange("--concurrency-range", f.concRange, start, end, step); err != nil {
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
		if start < minRate {
			return sc, usageError{fmt.Errorf("bad --request-rate-range %q: START %v is below the least rate, %v requests per second", f.rateRange, start, minRate)}
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

// planProbe sets a capacity search's probe from the model's config, and the
// run's first load to it.
func planProbe(sc *schedule, cfg *pb.ModelConfig) {
	c, ok := sc.search.(*plan.Capacity)
	if !ok {
		return
	}
	c.Concurrency = probeConcurrency(cfg)
	sc.initial, _ = c.Next(nil)
}

// mustDuration parses a duration constant of this package.
func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}
