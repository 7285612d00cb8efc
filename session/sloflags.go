package session

import (
	"fmt"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/stats"
)

// sloFlags are the service level objectives (--slo), repeatable or
// comma-separated: a plan's levels must meet them all; a run counts the
// goodput of a decoupled model, its requests that met every one at once.
type SLOConfig struct {
	Specs []string
	// goodput is what a good request meets, from specs.
	goodput stats.Goodput
}

// checkSLOFlags parses --slo into the objectives a good request meets: a
// request's own latency (from the schedule in open loop), time to first
// response and mean time between responses, each at most the tightest
// threshold given for it; a percentile applies to a level, not to one
// request.
func checkSLOFlags(f *Config) error {
	s := &f.SLO
	if err := checkSLOsAgree(s.Specs); err != nil {
		return UsageError{Err: err}
	}
	var g stats.Goodput
	for _, text := range s.Specs {
		slo, err := plan.ParseSLO(text)
		if err != nil {
			return UsageError{Err: fmt.Errorf("--slo: %w", err)}
		}
		at := &g.Latency
		switch slo.Metric {
		case plan.MetricTTFT:
			at = &g.TTFT
		case plan.MetricITL:
			at = &g.ITL
		}
		if *at == 0 || slo.Threshold < *at {
			*at = slo.Threshold
		}
	}
	s.goodput = g
	return nil
}
