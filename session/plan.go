package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/triton/pb"
)

// PlanConfig are tritontop plan's own settings: the load to plan for, the
// GPU utilization target, the autoscaler's deployment and its budget. The
// plan's SLOs are the run's (Config.SLO); Config.Demo plans against the
// demo's simulator.
type PlanConfig struct {
	// TargetRate is the load to plan for, requests per second.
	TargetRate float64
	// GPUUtilizationTarget (0..1) keeps every GPU under it at a passing
	// level, and is the autoscaler's target; 0 for none.
	GPUUtilizationTarget float64
	// Deployment and Namespace name the Triton Deployment the autoscaler
	// scales.
	Deployment string
	Namespace  string
	// Budget holds the repeats, the client-bound refusal, the
	// autoscaler's range and kind, and cost.
	Budget PlanBudget

	parsed plan.SLO   // the first --slo
	more   []plan.SLO // the others
}

// maxTargetRate is the most requests per second a plan plans for: a
// thousand times what one tritontop process may send, far past any fleet
// a plan's arithmetic (replicas as whole numbers) is meant for.
const maxTargetRate = 1e9

// Defaults of a plan's measurement: shorter windows than a sweep's, so a
// plan takes a couple of minutes.
const (
	planMeasurementMS = 2000
	planTick          = 500 * time.Millisecond
	planMaxTrials     = 6
)

// planDefaults are a plan's measurement defaults, for what was not given:
// shorter windows than a sweep's, so that a plan takes a couple of minutes.
func (c *Config) planDefaults() {
	if !c.Given["measurement-interval"] {
		c.MeasurementIntervalMS = planMeasurementMS
	}
	if !c.Given["tick"] {
		c.Tick = min(planTick, c.Tick)
	}
	if !c.Given["max-trials"] {
		c.MaxTrials = planMaxTrials
	}
}

// checkPlan validates a plan's settings.
func checkPlan(c *Config) error {
	if c.Plan == nil {
		return nil
	}
	return c.Plan.check(c)
}

// check validates the plan's settings against the run's.
func (pf *PlanConfig) check(f *Config) error {
	switch {
	case f.several():
		return errors.New("tritontop plan searches one model's capacity: give -m once (plan each model on its own)")
	case len(f.models) == 1 && f.models[0].hasLoad():
		return fmt.Errorf("tritontop plan chooses the load itself: drop the @load of %s", f.models[0].where)
	case len(f.SLO.Specs) == 0:
		return errors.New("no SLO given: use --slo p99:100ms (a percentile and a latency) or --slo avg:20ms")
	case !(pf.TargetRate > 0) || pf.TargetRate > maxTargetRate:
		return fmt.Errorf("--target-rate %v is out of range: give the requests per second to plan for, above 0 and at most %g", pf.TargetRate, maxTargetRate)
	case pf.GPUUtilizationTarget < 0 || pf.GPUUtilizationTarget > 1 || pf.GPUUtilizationTarget != pf.GPUUtilizationTarget:
		return fmt.Errorf("--gpu-utilization-target %v: give a fraction between 0 and 1, such as 0.85", pf.GPUUtilizationTarget)
	case f.ConcurrencyRange != "" || f.RequestRateRange != "" || f.Given["concurrency"] || f.Given["request-rate"]:
		return errors.New("tritontop plan chooses the load itself: drop --concurrency, --request-rate and the ranges")
	}
	if err := pf.Budget.check(pf.TargetRate); err != nil {
		return err
	}
	if err := checkSLOsAgree(f.SLO.Specs); err != nil {
		return err
	}
	if err := plan.CheckHPANames(pf.Deployment, pf.Namespace); err != nil {
		return fmt.Errorf("--deployment/--namespace: %w", err)
	}
	for i, text := range f.SLO.Specs {
		slo, err := plan.ParseSLO(text)
		if err != nil {
			return fmt.Errorf("--slo: %w", err)
		}
		if i == 0 {
			slo.GPUTarget = pf.GPUUtilizationTarget
			pf.parsed = slo
		} else {
			pf.more = append(pf.more, slo)
		}
	}
	return nil
}

// probeConcurrency is the capacity probe's concurrency: twice the model's
// instances times its max batch, so that every instance runs full batches
// with as many waiting.
func probeConcurrency(cfg *pb.ModelConfig) int {
	instances := 0
	for _, g := range cfg.GetInstanceGroup() {
		n := max(int(g.GetCount()), 1)
		if g.GetKind() == pb.ModelInstanceGroup_KIND_GPU && len(g.GetGpus()) > 0 {
			n *= len(g.GetGpus())
		}
		instances += n
	}
	c := 2 * max(instances, 1) * max(int(cfg.GetMaxBatchSize()), 1)
	return min(max(c, 4), 1024)
}
