package session

import (
	"errors"
	"fmt"
	"math"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
)

// planBudgetFlags are tritontop plan's flags for repeats, the client-bound
// refusal, the autoscaler's range and kind, and cost.
type PlanBudget struct {
	Repeat                       int
	AllowClientBound             bool
	MinRate, Burst               float64
	Autoscaler                   string
	PrometheusURL                string
	GPUHourCost, ReplicaHourCost float64
}

// check validates them against the target rate.
func (b *PlanBudget) check(target float64) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	switch {
	case b.Repeat < 1 || b.Repeat > 20:
		return fmt.Errorf("--repeat %d: give how many times to measure the capacity level, 1 to 20", b.Repeat)
	case bad(b.MinRate) || b.MinRate > target:
		return fmt.Errorf("--min-rate %v: give the trough in requests per second, from 0 up to --target-rate %v", b.MinRate, target)
	case bad(b.Burst) || b.Burst > 10:
		return fmt.Errorf("--burst %v: give the share over the target to allow for bursts, 0 to 10 (0.5 is half again)", b.Burst)
	case b.Autoscaler != "hpa" && b.Autoscaler != "keda":
		return fmt.Errorf("--autoscaler %s: give hpa or keda", textsafe.Quote(b.Autoscaler))
	case bad(b.GPUHourCost) || bad(b.ReplicaHourCost):
		return errors.New("--gpu-hour-cost and --replica-hour-cost are prices in USD per hour, 0 or more")
	}
	return nil
}

// makePlan turns a capacity search into the plan. The summary's steps carry
// their diagnosis, which the plan's limit and its client-bound check read.
func makePlan(f *Config, srv record.ServerInfo, search plan.Search, st *plan.Stepper, steps []record.Step) (*record.Plan, error) {
	levels := st.Levels()
	if len(steps) == len(levels) {
		for i := range levels {
			levels[i].Step = steps[i]
		}
	}
	var repeats []plan.Level
	if c, ok := search.(*plan.Capacity); ok {
		if err := c.Unmeasurable(levels); err != nil {
			return nil, err
		}
		repeats = c.Repeats(levels)
	}
	res := st.Result()
	b := f.Plan.Budget
	return plan.MakePlan(levels, res.Best, plan.PlanOptions{
		TargetRate: f.Plan.TargetRate, SLO: f.Plan.parsed,
		Deployment: f.Plan.Deployment, Namespace: f.Plan.Namespace, Model: f.Model,
		Repeats: repeats, StabilityPercent: f.StabilityPercent, AllowClientBound: b.AllowClientBound,
		Simulated: srv.Simulated, DemoGPU: srv.DemoGPU,
		MinRate: b.MinRate, Burst: b.Burst, Autoscaler: b.Autoscaler, PrometheusURL: b.PrometheusURL,
		GPUHourCost: b.GPUHourCost, ReplicaHourCost: b.ReplicaHourCost,
	})
}
