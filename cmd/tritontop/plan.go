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
type planFlags struct {
	slo        []string
	targetRate float64
	gpuTarget  float64
	deployment string
	namespace  string
	demo       bool
	demoSize   demoFlags
	budget     planBudgetFlags
	parsed     plan.SLO   // the first --slo
	more       []plan.SLO // the others
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
	pf := &planFlags{}
	f, err := parseLoadFlags("tritontop plan", args, stderr, false, func(fs *flag.FlagSet) {
		registerDemoFlags(fs, &pf.demoSize)
		registerPlanBudgetFlags(fs, &pf.budget)
		fs.Float64Var(&pf.targetRate, "target-rate", 0, "the load to plan for, requests per second (required)")
		fs.Float64Var(&pf.gpuTarget, "gpu-utilization-target", 0, "no GPU above this utilization (0..1) at a passing level, and the autoscaler's target")
		fs.StringVar(&pf.deployment, "deployment", "triton", "the Triton Deployment the autoscaler scales")
		fs.StringVar(&pf.namespace, "namespace", "default", "its namespace")
		fs.BoolVar(&pf.demo, "demo", false, "plan against the simulator in this process, as tritontop demo runs")
	})
	if err != nil {
		return flagExit("tritontop plan", err, stderr)
	}
	pf.slo = f.slos.specs // --slo is the load flags' (sloflags.go)
	if err := pf.check(f); err != nil {
		fmt.Fprintf(stderr, "tritontop: %v\n", err)
		return exitUsage
	}
	f.plan = pf
	if !f.set["measurement-interval"] && !f.set["p"] {
		f.intervalMS = planMeasurementMS
	}
	if !f.set["tick"] {
		f.tick = min(mustDuration(planTick), f.tick)
	}
	if !f.set["max-trials"] && !f.set["r"] {
		f.maxTrials = planMaxTrials
	}
	ctx, stop := stopContext(stderr)
	defer stop()
	if pf.demo {
		if f.model == "" {
			f.model = demoModel
		}
		srv, err := startDemoSimulator(ctx, f, pf.demoSize, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
			return exitFail
		}
		defer srv.Close()
	}
	return planExit(runSession(ctx, f, append([]string{"plan"}, args...), stdout, stderr), stderr)
}

// check validates the plan flags.
func (pf *planFlags) check(f *loadFlags) error {
	switch {
	case f.model == "" && !pf.demo:
		return errors.New("no model given: use -m MODEL (or --demo to plan against the simulator)")
	case f.several():
		return errors.New("tritontop plan searches one model's capacity: give -m once (plan each model on its own)")
	case len(f.models) == 1 && f.models[0].hasLoad():
		return fmt.Errorf("tritontop plan chooses the load itself: drop the @load of %s", f.models[0].where)
	case len(pf.slo) == 0:
		return errors.New("no SLO given: use --slo p99:100ms (a percentile and a latency) or --slo avg:20ms")
	case !(pf.targetRate > 0) || pf.targetRate > 1e9:
		return fmt.Errorf("--target-rate %v: give the requests per second to plan for, above 0", pf.targetRate)
	case pf.gpuTarget < 0 || pf.gpuTarget > 1 || pf.gpuTarget != pf.gpuTarget:
		return fmt.Errorf("--gpu-utilization-target %v: give a fraction between 0 and 1, such as 0.85", pf.gpuTarget)
	case f.concRange != "" || f.rateRange != "" || f.set["concurrency"] || f.set["request-rate"]:
		return errors.New("tritontop plan chooses the load itself: drop --concurrency, --request-rate and the ranges")
	}
	if err := pf.budget.check(pf.targetRate); err != nil {
		return err
	}
	if err := checkSLOsAgree(pf.slo); err != nil {
		return err
	}
	if err := plan.CheckHPANames(pf.deployment, pf.namespace); err != nil {
		return fmt.Errorf("--deployment/--namespace: %w", err)
	}
	for i, text := range pf.slo {
		slo, err := plan.ParseSLO(text)
		if err != nil {
			return fmt.Errorf("--slo: %w", err)
		}
		if i == 0 {
			slo.GPUTarget = pf.gpuTarget
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
