package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/session"
)

// runPlan is `tritontop plan`: how much one replica holds under an SLO and
// what a target load needs. It searches the capacity (a closed-loop probe,
// then a binary search over request rates), then prints the plan and a
// HorizontalPodAutoscaler. On a terminal the dashboard shows the search as
// it goes (its sweep pane); --headless prints a line per level instead.
func runPlan(args []string, stdout, stderr io.Writer) int {
	pc := session.DefaultPlan()
	var demo session.DemoConfig
	var onDemo bool
	c, err := parseLoadFlags("tritontop plan", args, stderr, func(fs *flag.FlagSet, _ *session.Config) {
		registerDemoFlags(fs, &demo)
		registerPlanBudgetFlags(fs, &pc.Budget)
		fs.Float64Var(&pc.TargetRate, "target-rate", pc.TargetRate, "the load to plan for, requests per second (required)")
		fs.Float64Var(&pc.GPUUtilizationTarget, "gpu-utilization-target", pc.GPUUtilizationTarget, "no GPU above this utilization (0..1) at a passing level, and the autoscaler's target")
		fs.StringVar(&pc.Deployment, "deployment", pc.Deployment, "the Triton Deployment the autoscaler scales")
		fs.StringVar(&pc.Namespace, "namespace", pc.Namespace, "its namespace")
		fs.BoolVar(&onDemo, "demo", false, "plan against the simulator in this process, as tritontop demo runs")
	})
	if err != nil {
		return flagExit("tritontop plan", err, stderr)
	}
	c.Plan, c.Args = &pc, append([]string{"plan"}, args...)
	if onDemo {
		c.Demo = &demo
	}
	return runConfig(c, stdout, stderr)
}

// registerPlanBudgetFlags adds them to fs.
func registerPlanBudgetFlags(fs *flag.FlagSet, b *session.PlanBudget) {
	// A load run's --repeat (gateflags.go) reruns the whole load; in a
	// plan the same flag repeats the measurement of the capacity level
	// instead, so the plan takes the flag over rather than defining a second.
	planRepeat := &intFlag{p: &b.Repeat}
	usage := "measure the capacity level this many times in all; the plan reports their median and range and plans on the lowest"
	if fl := fs.Lookup("repeat"); fl != nil {
		fl.Value, fl.Usage, fl.DefValue = planRepeat, usage, planRepeat.String()
	} else {
		fs.Var(planRepeat, "repeat", usage)
	}
	fs.BoolVar(&b.AllowClientBound, "allow-client-bound", b.AllowClientBound, "plan replicas even when the client limited the measurement (marked as a lower bound); without it such a plan is refused, exit 99")
	fs.Float64Var(&b.MinRate, "min-rate", b.MinRate, "the trough, requests per second, that minReplicas serve (default 25% of --target-rate)")
	fs.Float64Var(&b.Burst, "burst", b.Burst, "the share over --target-rate that maxReplicas serve, for bursts")
	fs.StringVar(&b.Autoscaler, "autoscaler", b.Autoscaler, "the autoscaler to write: hpa (autoscaling/v2, through the Prometheus adapter) or keda (a KEDA ScaledObject with a Prometheus trigger)")
	fs.StringVar(&b.PrometheusURL, "prometheus-url", b.PrometheusURL, "the Prometheus that KEDA's trigger queries (--autoscaler keda)")
	fs.Float64Var(&b.GPUHourCost, "gpu-hour-cost", b.GPUHourCost, "price of one GPU for an hour, USD: the plan then says what it costs")
	fs.Float64Var(&b.ReplicaHourCost, "replica-hour-cost", b.ReplicaHourCost, "price of one replica for an hour besides its GPUs (node, CPU, memory), USD")
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
		return fmt.Errorf("not a whole number: %s", textsafe.Quote(s))
	}
	*v.p = n
	return nil
}

// registerDemoFlags adds the demo's sizing flag to fs.
func registerDemoFlags(fs *flag.FlagSet, d *session.DemoConfig) {
	fs.Func("demo-gpu-rate", "the demo GPU's speed: requests/s it serves the model at full batches; by default sized to what this host's client drives (calibrated once, then cached), auto calibrates again, full keeps the simulator's H100-like profile", func(s string) error {
		switch s {
		case "auto":
			d.GPURate, d.Recalibrate = 0, true
			return nil
		case "full":
			d.GPURate = -1
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("--demo-gpu-rate %s: give requests per second above 0, auto or full", textsafe.Quote(s))
		}
		d.GPURate = v
		return nil
	})
}
