package tune

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// Record is a search's record for the run file: its trials (the step of
// each: the level it was measured at, in order, those that did not load
// having none), the best, the baseline and the frontier.
func Record(o Objective, sp Space, results []Result, best int, stopped string) *record.Tune {
	t := &record.Tune{Objective: string(o), Best: best, Baseline: -1, Stopped: stopped, Search: "climb",
		Grid: record.TuneGrid{Instances: sp.Instances, MaxBatchSizes: sp.MaxBatch, QueueDelaysUS: sp.Delays,
			Concurrencies: sp.Concurrency, Configurations: len(sp.Points()), Points: sp.Size()}}
	for _, p := range sp.Preferred {
		t.Grid.Preferred = append(t.Grid.Preferred, string(p))
	}
	configs := map[Point]bool{}
	for k, r := range results {
		configs[r.Point.normal()] = true
		t.Elapsed += r.Elapsed
		t.Trials = append(t.Trials, trialRecord(o, r, levelOf(results, k)))
		if r.Baseline && (t.Baseline < 0 || r.Pass && o.value(r.Measure) > o.value(results[t.Baseline].Measure)) {
			t.Baseline = k
		}
	}
	t.Configurations = len(configs)
	t.Frontier = Frontier(t.Trials)
	return t
}

// trialRecord is result r as the run file has it; step is its level.
func trialRecord(o Objective, r Result, step int) record.TuneTrial {
	tr := record.TuneTrial{Config: recordConfig(r.Point), Concurrency: r.Concurrency, Baseline: r.Baseline, Step: step,
		LoadError: r.LoadError, Throughput: r.Throughput, Latency: r.Latency, P99: r.P99, GPUs: r.GPUs,
		GPUUtilization: r.GPUUtilization, Queue: r.Queue, Compute: r.Compute, Batch: r.Batch, Stable: r.Stable, Pass: r.Pass, Elapsed: r.Elapsed}
	if r.LoadError == "" {
		tr.Objective = o.raw(r.Measure)
		if o == Latency {
			tr.Objective = r.Latency.Seconds() * 1000
		}
	}
	return tr
}

// Frontier is the trials no other measured trial beats in both
// throughput and p99 latency (higher and lower, or equal in one), by
// ascending p99: the best throughput each latency buys.
func Frontier(trials []record.TuneTrial) []int {
	var idx []int
	for i, t := range trials {
		if t.LoadError == "" && t.Throughput > 0 && t.P99 > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := trials[a].P99 - trials[b].P99; c != 0 {
			return int(min(max(c, -1), 1))
		}
		// At the same latency, the higher throughput first.
		switch {
		case trials[a].Throughput > trials[b].Throughput:
			return -1
		case trials[a].Throughput < trials[b].Throughput:
			return 1
		}
		return 0
	})
	var out []int
	top := 0.0
	for _, i := range idx {
		if trials[i].Throughput > top {
			out = append(out, i)
			top = trials[i].Throughput
		}
	}
	return out
}

// summary completes the summary with the tune's record before it is
// final.
func (r *run) summary(sum *record.Summary) {
	rs, best, stopped := r.steps.x.State()
	t := Record(r.o.obj, r.o.space, rs, best, stopped)
	if r.o.Search == "grid" {
		t.Search = "grid"
	}
	t.MinThroughput, t.SLOs = r.o.MinThroughput, r.o.Session.SLO.Specs
	if r.o.Plan.TargetRate > 0 {
		t.GPUUtilizationTarget = r.o.Plan.GPUUtilizationTarget
	}
	if best >= 0 {
		t.BestConfig = PBTxt(Configure(r.srv.original, rs[best].Point), r.comment(t))
		t.Output = r.o.Output
	}
	t.Restored = r.steps.loaded && r.restoreErr == nil
	if r.restoreErr != nil {
		t.RestoreError = r.restoreErr.Error()
	}
	sum.Tune = t
}

// comment heads the config.pbtxt: what it is and what it was measured at.
func (r *run) comment(t *record.Tune) string {
	b := t.Trials[t.Best]
	var s strings.Builder
	fmt.Fprintf(&s, "%s tuned by tritontop tune: objective %s under %s.\n", r.srv.model, r.o.obj, strings.Join(t.SLOs, ", "))
	fmt.Fprintf(&s, "Measured: %.1f infer/s, p99 %s at concurrency %d (best of %d trials over %d configurations; %s).\n",
		b.Throughput, b.P99, b.Concurrency, len(t.Trials), t.Configurations, t.Stopped)
	if t.Baseline >= 0 {
		base := t.Trials[t.Baseline]
		fmt.Fprintf(&s, "The original configuration: %.1f infer/s, p99 %s at concurrency %d.\n", base.Throughput, base.P99, base.Concurrency)
	}
	return s.String()
}

// report prints the tune's results after the run's summary and writes
// the config.pbtxt.
func (r *run) report(sum record.Summary, stdout io.Writer) error {
	t := sum.Tune
	if t == nil {
		return nil
	}
	report.WriteTune(stdout, t)
	if t.BestConfig == "" {
		return nil
	}
	return outfile.Write("-o", r.o.Output, r.o.Session.Force, func(w io.Writer) error {
		_, err := io.WriteString(w, t.BestConfig)
		return err
	})
}

// plan is the capacity plan at the best configuration: the levels after
// the search's, as tritontop plan makes one.
func (r *run) plan(st *plan.Stepper, steps []record.Step) (*record.Plan, error) {
	levels := st.Levels()
	if len(steps) == len(levels) {
		for i := range levels {
			levels[i].Step = steps[i]
		}
	}
	r.steps.mu.Lock()
	from, failed := r.steps.from, r.steps.failed
	r.steps.mu.Unlock()
	if from < 0 || failed || from >= len(levels) {
		return nil, nil
	}
	c := r.steps.capacity
	levels = levels[from:]
	if err := c.Unmeasurable(levels); err != nil {
		return nil, err
	}
	pc, b := r.o.Plan, r.o.Plan.Budget
	slo := r.o.slos[0]
	slo.GPUTarget = pc.GPUUtilizationTarget
	return plan.MakePlan(levels, c.Best(levels), plan.PlanOptions{
		TargetRate: pc.TargetRate, SLO: slo, Deployment: pc.Deployment, Namespace: pc.Namespace, Model: r.srv.model,
		Repeats: c.Repeats(levels), StabilityPercent: r.o.Session.StabilityPercent, AllowClientBound: b.AllowClientBound,
		Simulated: r.sim, MinRate: b.MinRate, Burst: b.Burst, Autoscaler: b.Autoscaler,
		PrometheusURL: b.PrometheusURL, GPUHourCost: b.GPUHourCost, ReplicaHourCost: b.ReplicaHourCost,
	})
}
