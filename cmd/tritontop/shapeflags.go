package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/trace"
)

// shapeFlags are the flags that shape a run's load over time: a plan of
// stages.
type ShapeConfig struct {
	Stages           string
	Trace            string
	TraceSpeed       float64
	RequestIntervals string

	plan      *load.Plan      // --stages, parsed
	trace     *trace.Trace    // --trace, read
	intervals []time.Duration // --request-intervals, read
}

// registerShapeFlags adds the load-shape flags to fs.
func registerShapeFlags(fs *flag.FlagSet, f *ShapeConfig) {
	fs.StringVar(&f.Stages, "stages", "",
		"a load plan: DURATION:TARGET,... each ramping linearly from the last target (0 first) to a rate N/s or a concurrency c=N, e.g. 30s:100/s,2m:500/s,30s:0/s; the run ends with the plan, and ↑/↓ scale the rest of it")
	fs.StringVar(&f.Trace, "trace", "",
		"replay the requests of a trace FILE at its timestamps: tritontop's JSONL trace (tritontop capture), perf_analyzer input data with \"timestamp\"s, a Mooncake JSONL trace or a Triton trace file; the run ends after its last request")
	fs.Float64Var(&f.TraceSpeed, "trace-speed", 1, "with --trace: replay this many times faster (2 halves the gaps)")
	fs.StringVar(&f.RequestIntervals, "request-intervals", "",
		"open loop: a FILE of intervals between requests in microseconds, one per line, looped (perf_analyzer's)")
}

// checkShapeFlags parses --stages and refuses what it cannot go with.
func checkShapeFlags(f *Config) error {
	s := &f.Shape
	if err := checkTraceFlags(f); err != nil {
		return err
	}
	if err := checkMooncakeFlags(f); err != nil {
		return err
	}
	if err := checkSLOFlags(f); err != nil {
		return err
	}
	if s.Stages == "" {
		return nil
	}
	p, err := load.ParsePlan(s.Stages)
	if err != nil {
		return usageError{fmt.Errorf("bad --stages %q: %w", s.Stages, err)}
	}
	switch {
	case f.Given["concurrency"] || f.Given["request-rate"] || f.ConcurrencyRange != "" || f.RequestRateRange != "":
		return usageError{errors.New("--stages sets the load over the whole run: drop --concurrency, --request-rate and the ranges")}
	case f.Plan != nil:
		return usageError{errors.New("--stages sets the load itself: tritontop plan searches for it, so it takes no --stages")}
	case f.LoadFile != "" || len(f.ModelArgs) > 1:
		return usageError{errors.New("--stages is one model's plan: run one model with -m (a load file's model may have its own stages:)")}
	case f.Distribution == "poisson":
		return usageError{errors.New("--stages paces requests evenly along its ramps: drop --request-distribution poisson")}
	case f.Workers.distributed():
		return usageError{errors.New("--stages runs on one machine: drop --workers")}
	}
	s.plan = p
	return nil
}

// modelStages reads a load file model's stages:, which take the place of
// its concurrency or rate.
func modelStages(m modelSpec, e loadFileModel) (*load.Plan, error) {
	if e.Concurrency != nil || e.Rate != nil {
		return nil, fmt.Errorf("model %s has stages and a concurrency or rate: the stages set its load, drop the other", m.name)
	}
	if e.Distribution == "poisson" {
		return nil, fmt.Errorf("model %s: stages pace requests evenly along their ramps: drop distribution: poisson", m.name)
	}
	p, err := load.ParsePlan(e.Stages)
	if err != nil {
		return nil, fmt.Errorf("model %s: bad stages %q: %v", m.name, e.Stages, err)
	}
	return p, nil
}
