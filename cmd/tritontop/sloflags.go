package main

import (
	"flag"
	"fmt"
	"strings"

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

// sloList is a flag.Value that takes SLOs given once each or several to a
// flag, separated by commas.
type sloList struct{ list *[]string }

func (s sloList) String() string {
	if s.list == nil {
		return ""
	}
	return strings.Join(*s.list, ",")
}

func (s sloList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s.list = append(*s.list, part)
		}
	}
	return nil
}

// registerSLOFlags adds --slo to fs.
func registerSLOFlags(fs *flag.FlagSet, f *SLOConfig) {
	fs.Var(sloList{&f.Specs}, "slo",
		"an SLO: [ttft-|itl-]pNN:DURATION (p99:100ms, ttft-p99:500ms) or avg:DURATION; repeatable or comma-separated, all must hold. "+
			"tritontop plan (required there) searches the highest level meeting them; a run of an LLM counts its goodput, the requests whose own latency, time to first token and mean time between tokens met them all at once")
}

// checkSLOFlags parses --slo into the objectives a good request meets: a
// request's own latency (from the schedule in open loop), time to first
// response and mean time between responses, each at most the tightest
// threshold given for it; a percentile applies to a level, not to one
// request.
func checkSLOFlags(f *Config) error {
	s := &f.SLO
	if err := checkSLOsAgree(s.Specs); err != nil {
		return usageError{err}
	}
	var g stats.Goodput
	for _, text := range s.Specs {
		slo, err := plan.ParseSLO(text)
		if err != nil {
			return usageError{fmt.Errorf("--slo: %w", err)}
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
