package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/triton/pb"
)

// planFlags are tritontop plan's own flags.
type PlanConfig struct {
	SLO                  []string
	TargetRate           float64
	GPUUtilizationTarget float64
	Deployment           string
	Namespace            string
	Demo                 bool
	DemoSize             DemoConfig
	Budget               PlanBudget
	parsed               plan.SLO   // the first --slo
	more                 []plan.SLO // the others
}

// Defaults of a plan's measurement: shorter windows than a sweep's, so a
// plan takes a couple of minutes.
const (
	planMeasurementMS = 2000
	planTick          = "500ms"
	planMaxTrials     = 6
)

// runPlan is `tritontop plan`: how much one replica holds under an SLO and
// what a target load needs. It searches the capacity (a closed-loop probe,
// then a binary search over request rates), then prints the plan and a
// HorizontalPodAutoscaler. On a terminal the dashboard shows the search as
// it goes (its sweep pane); --headless prints a line per level instead.
func runPlan(args []string, stdout, stderr io.Writer) int {
	pf := &PlanConfig{}
	f, err := parseLoadFlags("tritontop plan", args, stderr, false, func(fs *flag.FlagSet) {
		registerDemoFlags(fs, &pf.DemoSize)
		registerPlanBudgetFlags(fs, &pf.Budget)
		fs.Float64Var(&pf.TargetRate, "target-rate", 0, "the load to plan for, requests per second (required)")
		fs.Float64Var(&pf.GPUUtilizationTarget, "gpu-utilization-target", 0, "no GPU above this utilization (0..1) at a passing level, and the autoscaler's target")
		fs.StringVar(&pf.Deployment, "deployment", "triton", "the Triton Deployment the autoscaler scales")
		fs.StringVar(&pf.Namespace, "namespace", "default", "its namespace")
		fs.BoolVar(&pf.Demo, "demo", false, "plan against the simulator in this process, as tritontop demo runs")
	})
	if err != nil {
		return flagExit("tritontop plan", err, stderr)
	}
	pf.SLO = f.SLO.Specs // --slo is the load flags' (sloflags.go)
	if err := pf.check(f); err != nil {
		fmt.Fprintf(stderr, "tritontop: %v\n", err)
		return exitUsage
	}
	f.Plan = pf
	if !f.Given["measurement-interval"] && !f.Given["p"] {
		f.MeasurementIntervalMS = planMeasurementMS
	}
	if !f.Given["tick"] {
		f.Tick = min(mustDuration(planTick), f.Tick)
	}
	if !f.Given["max-trials"] && !f.Given["r"] {
		f.MaxTrials = planMaxTrials
	}
	ctx, stop := stopContext(stderr)
	defer stop()
	if pf.Demo {
		if f.Model == "" {
			f.Model = demoModel
		}
		srv, err := startDemoSimulator(ctx, f, pf.DemoSize, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
			return exitFail
		}
		defer srv.Close()
	}
	return planExit(runSession(ctx, f, append([]string{"plan"}, args...), stdout, stderr), stderr)
}

// check validates the plan flags.
func (pf *PlanConfig) check(f *Config) error {
	switch {
	case f.Model == "" && !pf.Demo:
		return errors.New("no model given: use -m MODEL (or --demo to plan against the simulator)")
	case f.several():
		return errors.New("tritontop plan searches one model's capacity: give -m once (plan each model on its own)")
	case len(f.models) == 1 && f.models[0].hasLoad():
		return fmt.Errorf("tritontop plan chooses the load itself: drop the @load of %s", f.models[0].where)
	case len(pf.SLO) == 0:
		return errors.New("no SLO given: use --slo p99:100ms (a percentile and a latency) or --slo avg:20ms")
	case !(pf.TargetRate > 0) || pf.TargetRate > 1e9:
		return fmt.Errorf("--target-rate %v: give the requests per second to plan for, above 0", pf.TargetRate)
	case pf.GPUUtilizationTarget < 0 || pf.GPUUtilizationTarget > 1 || pf.GPUUtilizationTarget != pf.GPUUtilizationTarget:
		return fmt.Errorf("--gpu-utilization-target %v: give a fraction between 0 and 1, such as 0.85", pf.GPUUtilizationTarget)
	case f.ConcurrencyRange != "" || f.RequestRateRange != "" || f.Given["concurrency"] || f.Given["request-rate"]:
		return errors.New("tritontop plan chooses the load itself: drop --concurrency, --request-rate and the ranges")
	}
	if err := pf.Budget.check(pf.TargetRate); err != nil {
		return err
	}
	if err := checkSLOsAgree(pf.SLO); err != nil {
		return err
	}
	if err := plan.CheckHPANames(pf.Deployment, pf.Namespace); err != nil {
		return fmt.Errorf("--deployment/--namespace: %w", err)
	}
	for i, text := range pf.SLO {
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
