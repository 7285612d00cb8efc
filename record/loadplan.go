package record

import (
	"time"

	"github.com/tritontop/tritontop/load"
)

// LoadPlan is a run's load plan as its header records it, so that replay,
// report and compare can set what was asked for against what was achieved
// (each tick's Load.Planned has the plan's mean over the tick): stages, or
// a fixed schedule (a trace, --request-intervals).
type LoadPlan struct {
	// Stages is the plan in --stages' syntax; "" for a schedule.
	Stages   string        `json:"stages,omitempty"`
	Mode     load.Mode     `json:"mode"`
	Duration time.Duration `json:"duration_ns"`
	// Planned is what the plan asks for in all: requests for a rate plan,
	// request-seconds for a concurrency plan (without overrides).
	Planned float64 `json:"planned"`
	// Trace describes a fixed schedule's file; nil for stages.
	Trace *TracePlan `json:"trace,omitempty"`
}

// TracePlan is the file a run's fixed schedule came from.
type TracePlan struct {
	File string `json:"file"`
	// Format is the trace's format (trace.Format) or "request-intervals".
	Format string  `json:"format"`
	Speed  float64 `json:"speed"`
	// Models are the models the trace names.
	Models []string `json:"models,omitempty"`
}

// PlanOf is p's header entry; nil for no plan.
func PlanOf(p *load.Plan) *LoadPlan {
	if p == nil {
		return nil
	}
	return &LoadPlan{Stages: p.String(), Mode: p.Mode, Duration: p.Duration(), Planned: p.Count(p.Duration())}
}
