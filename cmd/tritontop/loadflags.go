package main

import (
	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
)

// loadFromFlags turns the flags into the driver's initial load and schedule.
func loadFromFlags(f *loadFlags) (load.Target, []driver.Step, error) {
	dist := load.Constant
	if f.distribution == "poisson" {
		dist = load.Poisson
	}
	switch {
	case f.concRange != "":
		start, end, step, err := parseRange("--concurrency-range", f.concRange)
		if err != nil {
			return load.Target{}, nil, usageError{err}
		}
		var steps []driver.Step
		for c := start; c <= end; c += step {
			steps = append(steps, driver.Step{Load: load.Target{Mode: load.Concurrency, Concurrency: int(c)}, Duration: f.stepDuration})
		}
		return steps[0].Load, steps, nil
	case f.rateRange != "":
		start, end, step, err := parseRange("--request-rate-range", f.rateRange)
		if err != nil {
			return load.Target{}, nil, usageError{err}
		}
		var steps []driver.Step
		for r := start; r <= end+1e-9; r += step {
			steps = append(steps, driver.Step{Load: load.Target{Mode: load.Rate, Rate: r, Distribution: dist, MaxInFlight: f.maxInflight}, Duration: f.stepDuration})
		}
		return steps[0].Load, steps, nil
	case f.rate > 0:
		return load.Target{Mode: load.Rate, Rate: f.rate, Distribution: dist, MaxInFlight: f.maxInflight}, nil, nil
	}
	c := f.concurrency
	if c == 0 {
		c = 1
	}
	return load.Target{Mode: load.Concurrency, Concurrency: c}, nil, nil
}
