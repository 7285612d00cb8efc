package tune

import (
	"fmt"
	"math"
	"time"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/session"
)

// Options are a tune run's settings: the load run's (server, model, SLO,
// measurement windows, run file, dashboard) and the search's own.
type Options struct {
	// Session holds the load run's settings, as for any run; tune sets its
	// load itself.
	Session session.Config
	// Objective is throughput, throughput-per-gpu or latency;
	// MinThroughput the latency objective's floor, infer/s.
	Objective     string
	MinThroughput float64
	// The grid, as the flags give it: instance counts and max batch sizes
	// (lists, or LO:HI ranges: every count, the powers of two), queue
	// delays in µs (a list), preferred batch sizes (max, half) and the
	// concurrencies (a list, or a range of powers of two).
	Instances, MaxBatchSizes, QueueDelays, Preferred, Concurrencies string
	// MaxTrials and MaxTime bound the search (0: no bound).
	MaxTrials int
	MaxTime   time.Duration
	// Search is "climb" (the search) or "grid" (every point of the grid,
	// the brute force).
	Search string
	// Output is the config.pbtxt the best configuration is written to.
	Output string
	// Plan is the plan at the best configuration: when TargetRate is
	// above 0, a capacity search (as tritontop plan runs it) follows the
	// search; GPUUtilizationTarget is that plan's GPU ceiling.
	Plan session.PlanConfig
	// Now is the search's clock; nil is time.Now.
	Now func() time.Time

	// What check derived.
	space Space
	obj   Objective
	slos  []plan.SLO
}

// Defaults of tritontop tune's flags.
func Defaults() Options {
	p := session.DefaultPlan()
	p.GPUUtilizationTarget = 0.85
	return Options{
		Session: session.Defaults(), Objective: string(Throughput),
		Instances: "1:5", MaxBatchSizes: "1:128", QueueDelays: "0,100,500,2000", Preferred: "max,half",
		Concurrencies: "1:1024", MaxTrials: 60, MaxTime: 30 * time.Minute, Search: "climb",
		Output: "config.pbtxt", Plan: p,
	}
}

// Measurement defaults of a tune run: a plan's shorter windows, so that a
// trial takes seconds.
const (
	measurementMS = 2000
	tick          = 500 * time.Millisecond
	maxWindows    = 6
)

// usageErr is a setting refused before anything runs (exit code 2).
func usageErr(format string, a ...any) error {
	return usage.Error{Err: fmt.Errorf(format, a...)}
}

// check validates o before anything connects and fills in what follows
// from it: the objective, the SLOs, the measurement defaults.
func (o *Options) check() error {
	c := &o.Session
	var err error
	if o.obj, err = ParseObjective(o.Objective); err != nil {
		return usage.Error{Err: err}
	}
	if err := checkLoad(c); err != nil {
		return err
	}
	for i, text := range c.SLO.Specs {
		slo, err := plan.ParseSLO(text)
		if err != nil {
			return usageErr("--slo: %w", err)
		}
		if slo.Metric != plan.MetricLatency {
			return usageErr("--slo %s: tune measures request latency; TTFT and ITL are a streaming model's", text)
		}
		if i == 0 && o.Plan.TargetRate > 0 {
			// The GPU ceiling is the plan's (see Run); the search's
			// closed-loop trials keep the GPU busy by design.
			slo.GPUTarget = 0
		}
		o.slos = append(o.slos, slo)
	}
	if err := o.checkBudgets(); err != nil {
		return err
	}
	if err := o.checkPlan(); err != nil {
		return err
	}
	if err := outfile.CheckNew("-o", o.Output, c.Force); err != nil {
		return usage.Error{Err: err}
	}
	o.measurementDefaults()
	return nil
}

// checkLoad refuses the load settings tune chooses itself.
func checkLoad(c *session.Config) error {
	switch {
	case c.Model == "" && len(c.ModelArgs) == 0:
		return usageErr("no model: give -m MODEL")
	case len(c.ModelArgs) > 1 || c.LoadFile != "":
		return usageErr("tritontop tune tunes one model: give -m once")
	case len(c.URLs) > 1:
		return usageErr("tritontop tune loads configurations into one server: give -u once")
	case len(c.SLO.Specs) == 0:
		return usageErr("no SLO given: use --slo p99:100ms (a percentile and a latency) or --slo avg:20ms")
	case c.ConcurrencyRange != "" || c.RequestRateRange != "" || c.Given["concurrency"] || c.Given["request-rate"] ||
		c.Shape.Stages != "" || c.Shape.Trace != "" || c.Shape.RequestIntervals != "":
		return usageErr("tritontop tune chooses the load itself: drop --concurrency, --request-rate, the ranges, stages and traces")
	case c.Duration > 0:
		return usageErr("tritontop tune ends by itself: bound it with --budget-time instead of --duration")
	case c.Streaming || c.Gates.Repeat > 1 || c.Workers.Count > 0:
		return usageErr("tritontop tune runs unary requests from one process once: drop --streaming, --repeat and --workers")
	}
	return nil
}

// checkBudgets checks the grid and the budgets.
func (o *Options) checkBudgets() error {
	var err error
	sp := &o.space
	if sp.Instances, err = ParseInts("instances", o.Instances, false, 1, 64); err != nil {
		return usage.Error{Err: err}
	}
	if sp.MaxBatch, err = ParseInts("max-batch-sizes", o.MaxBatchSizes, true, 1, 1<<16); err != nil {
		return usage.Error{Err: err}
	}
	if sp.Delays, err = ParseInts("queue-delays", o.QueueDelays, false, 0, 10_000_000); err != nil {
		return usage.Error{Err: err}
	}
	if sp.Preferred, err = ParsePreferred(o.Preferred); err != nil {
		return usage.Error{Err: err}
	}
	if sp.Concurrency, err = ParseInts("concurrencies", o.Concurrencies, true, 1, plan.MaxProbeConcurrency); err != nil {
		return usage.Error{Err: err}
	}
	switch {
	case o.Search != "climb" && o.Search != "grid":
		return usageErr("--search %q: give climb (the search) or grid (every point, the brute force)", o.Search)
	case o.MaxTrials < 0 || o.MaxTrials > 100_000:
		return usageErr("--budget-trials %d: give the most trials to measure, 0 for no bound", o.MaxTrials)
	case o.MaxTime < 0:
		return usageErr("--budget-time %v: give the longest the search may take, 0 for no bound", o.MaxTime)
	case o.MinThroughput < 0 || math.IsNaN(o.MinThroughput) || math.IsInf(o.MinThroughput, 0):
		return usageErr("--min-throughput %v: give infer/s, 0 or more", o.MinThroughput)
	case o.MinThroughput > 0 && o.obj != Latency:
		return usageErr("--min-throughput is the latency objective's floor: add --objective latency")
	}
	return nil
}

// checkPlan checks the plan's settings, when there is a plan.
func (o *Options) checkPlan() error {
	p := &o.Plan
	b := p.Budget
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	switch {
	case bad(p.TargetRate) || p.TargetRate > 1e9:
		return usageErr("--target-rate %v: give the requests per second to plan for (0 for no plan)", p.TargetRate)
	case bad(p.GPUUtilizationTarget) || p.GPUUtilizationTarget > 1:
		return usageErr("--gpu-utilization-target %v: give a fraction between 0 and 1, such as 0.85", p.GPUUtilizationTarget)
	case p.TargetRate == 0:
		return nil
	case b.Repeat < 1 || b.Repeat > 20:
		return usageErr("--repeat %d: give how many times to measure the capacity level, 1 to 20", b.Repeat)
	case bad(b.MinRate) || b.MinRate > p.TargetRate:
		return usageErr("--min-rate %v: give the trough in requests per second, from 0 up to --target-rate %v", b.MinRate, p.TargetRate)
	case bad(b.Burst) || b.Burst > 10:
		return usageErr("--burst %v: give the share over the target to allow for bursts, 0 to 10", b.Burst)
	case b.Autoscaler != "hpa" && b.Autoscaler != "keda":
		return usageErr("--autoscaler %q: give hpa or keda", b.Autoscaler)
	case bad(b.GPUHourCost) || bad(b.ReplicaHourCost):
		return usageErr("--gpu-hour-cost and --replica-hour-cost are prices in USD per hour, 0 or more")
	}
	if err := plan.CheckHPANames(p.Deployment, p.Namespace); err != nil {
		return usageErr("--deployment/--namespace: %w", err)
	}
	return nil
}

// measurementDefaults gives the windows a plan's defaults where the
// command line gave none.
func (o *Options) measurementDefaults() {
	c := &o.Session
	if !c.Given["measurement-interval"] {
		c.MeasurementIntervalMS = measurementMS
	}
	if !c.Given["tick"] {
		c.Tick = min(tick, max(c.Tick, session.MinTick))
	}
	if !c.Given["max-trials"] {
		c.MaxTrials = maxWindows
	}
}
