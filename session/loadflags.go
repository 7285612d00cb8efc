package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
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
func loadFromFlags(f *Config) (sc schedule, err error) {
	defer func() {
		if err == nil {
			sc, err = f.Workers.share(sc)
		}
	}()
	dist := load.Constant
	if f.Distribution == "poisson" {
		dist = load.Poisson
	}
	if f.LatencyThreshold > 0 {
		sc.slo = &plan.SLO{Percentile: f.Percentile, Threshold: time.Duration(f.LatencyThreshold * float64(time.Millisecond))}
	}
	if f.Plan != nil {
		// The probe's concurrency follows the model's config, known once
		// connected (see planProbe).
		sc.slo, sc.slos = &f.Plan.parsed, f.Plan.more
		sc.search = &plan.Capacity{Base: load.Target{Mode: load.Rate, Distribution: dist, MaxInFlight: f.MaxInflight},
			Window: time.Duration(f.MeasurementIntervalMS) * time.Millisecond, Repeat: f.Plan.Budget.Repeat}
		return sc, nil
	}
	var levels []load.Target
	switch {
	case f.ConcurrencyRange != "":
		start, end, step, err := parseRange("--concurrency-range", f.ConcurrencyRange)
		if err != nil {
			return sc, UsageError{Err: err}
		}
		if err := wholeRange("--concurrency-range", f.ConcurrencyRange, start, end, step); err != nil {
			return sc, UsageError{Err: err}
		}
		if levels, err = plan.Levels(load.Target{Mode: load.Concurrency}, start, end, step); err != nil {
			return sc, UsageError{Err: fmt.Errorf("bad --concurrency-range %s: %w", textsafe.Quote(f.ConcurrencyRange), err)}
		}
	case f.RequestRateRange != "":
		start, end, step, err := parseRange("--request-rate-range", f.RequestRateRange)
		if err != nil {
			return sc, UsageError{Err: err}
		}
		if start < minRate {
			return sc, UsageError{Err: fmt.Errorf("bad --request-rate-range %s: START %v is below the least rate, %v requests per second", textsafe.Quote(f.RequestRateRange), start, minRate)}
		}
		base := load.Target{Mode: load.Rate, Distribution: dist, MaxInFlight: f.MaxInflight}
		if levels, err = plan.Levels(base, start, end, step); err != nil {
			return sc, UsageError{Err: fmt.Errorf("bad --request-rate-range %s: %w", textsafe.Quote(f.RequestRateRange), err)}
		}
	case f.RequestRate > 0:
		sc.initial = load.Target{Mode: load.Rate, Rate: f.RequestRate, Distribution: dist, MaxInFlight: f.MaxInflight}
		return sc, nil
	default:
		sc.initial = load.Target{Mode: load.Concurrency, Concurrency: max(f.Concurrency, 1)}
		return sc, nil
	}
	switch {
	case f.BinarySearch && sc.slo == nil:
		return sc, UsageError{Err: errors.New("--binary-search needs --latency-threshold MS: it searches for the highest level under it")}
	case f.BinarySearch:
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
