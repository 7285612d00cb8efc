package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
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
		return UsageError{Err: fmt.Errorf("bad --stages %s: %w", textsafe.Quote(s.Stages), err)}
	}
	switch {
	case f.Given["concurrency"] || f.Given["request-rate"] || f.ConcurrencyRange != "" || f.RequestRateRange != "":
		return UsageError{Err: errors.New("--stages sets the load over the whole run: drop --concurrency, --request-rate and the ranges")}
	case f.Plan != nil:
		return UsageError{Err: errors.New("--stages sets the load itself: tritontop plan searches for it, so it takes no --stages")}
	case f.LoadFile != "" || len(f.ModelArgs) > 1:
		return UsageError{Err: errors.New("--stages is one model's plan: run one model with -m (a load file's model may have its own stages:)")}
	case f.Distribution == "poisson":
		return UsageError{Err: errors.New("--stages paces requests evenly along its ramps: drop --request-distribution poisson")}
	case f.Workers.distributed():
		return UsageError{Err: errors.New("--stages runs on one machine: drop --workers")}
	}
	s.plan = p
	return nil
}

// modelStages reads a load file model's stages:, which take the place of
// its concurrency or rate.
func modelStages(m modelSpec, e loadFileModel) (*load.Plan, error) {
	if e.Concurrency != nil || e.Rate != nil {
		return nil, fmt.Errorf("model %s has stages and a concurrency or rate: the stages set its load, drop the other", textsafe.Bound(m.name))
	}
	if e.Distribution == "poisson" {
		return nil, fmt.Errorf("model %s: stages pace requests evenly along their ramps: drop distribution: poisson", textsafe.Bound(m.name))
	}
	p, err := load.ParsePlan(e.Stages)
	if err != nil {
		return nil, fmt.Errorf("model %s: bad stages %s: %v", textsafe.Bound(m.name), textsafe.Quote(e.Stages), err)
	}
	return p, nil
}
