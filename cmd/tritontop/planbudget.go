package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

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

// registerPlanBudgetFlags adds them to fs.
func registerPlanBudgetFlags(fs *flag.FlagSet, b *PlanBudget) {
	// A load run's --repeat (gateflags.go) reruns the whole load; in a
	// plan the same flag repeats the measurement of the capacity level
	// instead, so the plan takes the flag over rather than defining a second.
	b.Repeat = plan.DefaultRepeat
	planRepeat := &intFlag{p: &b.Repeat}
	usage := "measure the capacity level this many times in all; the plan reports their median and range and plans on the lowest"
	if fl := fs.Lookup("repeat"); fl != nil {
		fl.Value, fl.Usage, fl.DefValue = planRepeat, usage, planRepeat.String()
	} else {
		fs.Var(planRepeat, "repeat", usage)
	}
	fs.BoolVar(&b.AllowClientBound, "allow-client-bound", false, "plan replicas even when the client limited the measurement (marked as a lower bound); without it such a plan is refused, exit 99")
	fs.Float64Var(&b.MinRate, "min-rate", 0, "the trough, requests per second, that minReplicas serve (default 25% of --target-rate)")
	fs.Float64Var(&b.Burst, "burst", plan.DefaultBurst, "the share over --target-rate that maxReplicas serve, for bursts")
	fs.StringVar(&b.Autoscaler, "autoscaler", "hpa", "the autoscaler to write: hpa (autoscaling/v2, through the Prometheus adapter) or keda (a KEDA ScaledObject with a Prometheus trigger)")
	fs.StringVar(&b.PrometheusURL, "prometheus-url", plan.DefaultPrometheusURL, "the Prometheus that KEDA's trigger queries (--autoscaler keda)")
	fs.Float64Var(&b.GPUHourCost, "gpu-hour-cost", 0, "price of one GPU for an hour, USD: the plan then says what it costs")
	fs.Float64Var(&b.ReplicaHourCost, "replica-hour-cost", 0, "price of one replica for an hour besides its GPUs (node, CPU, memory), USD")
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
		return fmt.Errorf("--autoscaler %q: give hpa or keda", b.Autoscaler)
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

// planExit is a plan's exit code: exitSLO when no level met the SLO or the
// plan was refused on a client-bound measurement.
func planExit(err error, stderr io.Writer) int {
	var cb *plan.ClientBoundError
	var nc *plan.NoCapacityError
	if errors.As(err, &cb) || errors.As(err, &nc) {
		fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
		return exitSLO
	}
	return exitFor(err, stderr)
}

// intFlag is a flag.Value writing an int.
type intFlag struct{ p *int }

func (v *intFlag) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v *intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not a whole number: %q", s)
	}
	*v.p = n
	return nil
}
