package promexport

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritontop/tritontop/stats"
)

// Metric names of a pipeline's composing models (an ensemble's steps, a
// BLS model's --bls-composing-models), from the server's statistics of
// each, labelled step="NAME" (a composing ensemble's own steps
// "parent/step"). A step's average queue time per request is the increase
// of its queue seconds over the increase of its requests; its batch size,
// inferences over executions.
const (
	MetricStepRequests   = "tritontop_pipeline_step_requests_total"
	MetricStepQueue      = "tritontop_pipeline_step_queue_seconds_total"
	MetricStepCompute    = "tritontop_pipeline_step_compute_seconds_total"
	MetricStepExecutions = "tritontop_pipeline_step_executions_total"
	MetricStepInferences = "tritontop_pipeline_step_inferences_total"
)

// stepDescs describe the composing models' metrics.
type stepDescs struct{ requests, queue, compute, executions, inferences *prometheus.Desc }

func newStepDescs(req func(name, help string, variable ...string) *prometheus.Desc) stepDescs {
	return stepDescs{
		requests:   req(MetricStepRequests, "Successful requests a pipeline's composing model served since the run started, from the server's statistics.", "step"),
		queue:      req(MetricStepQueue, "Time requests waited in a pipeline's composing model's queue since the run started, from the server's statistics.", "step"),
		compute:    req(MetricStepCompute, "Compute time (input, infer, output) of a pipeline's composing model's requests since the run started, from the server's statistics.", "step"),
		executions: req(MetricStepExecutions, "Executions (batches) of a pipeline's composing model since the run started, from the server's statistics.", "step"),
		inferences: req(MetricStepInferences, "Inferences (batch size per request) a pipeline's composing model ran since the run started, from the server's statistics.", "step"),
	}
}

func (d *stepDescs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.requests, d.queue, d.compute, d.executions, d.inferences}
}

// stepTotals are one composing model's cumulative statistics.
type stepTotals struct {
	name                  string
	requests, exec, infer int64
	queueNs, computeNs    float64
}

// addSteps adds a tick's statistics of a pipeline's composing models (and
// of its late read, when one came) to t: a few additions per step.
func (t *modelTotals) addSteps(sv, late *stats.ServerStats) {
	for _, s := range []*stats.ServerStats{sv, late} {
		if s == nil || !s.Available || s.Reset {
			continue
		}
		t.addStepsOf("", s.Steps)
	}
}

func (t *modelTotals) addStepsOf(parent string, steps []stats.ServerStats) {
	for i := range steps {
		st := &steps[i]
		if !st.Available || st.Reset {
			continue
		}
		name := st.Model
		if parent != "" {
			name = parent + "/" + name
		}
		tot := t.step(name)
		n := float64(st.SuccessCount)
		tot.requests += st.SuccessCount
		tot.exec += st.ExecutionCount
		tot.infer += st.InferenceCount
		tot.queueNs += float64(st.Queue) * n
		tot.computeNs += float64(st.Compute()) * float64(max(st.SuccessCount-st.CacheHitCount, 0))
		if st.Pipeline() {
			t.addStepsOf(name, st.Steps)
		}
	}
}

// step is the totals of the composing model name, added at its first
// tick.
func (t *modelTotals) step(name string) *stepTotals {
	for i := range t.steps {
		if t.steps[i].name == name {
			return &t.steps[i]
		}
	}
	t.steps = append(t.steps, stepTotals{name: strings.ToValidUTF8(name, "\uFFFD")})
	return &t.steps[len(t.steps)-1]
}

// collectSteps sends the composing models' counters.
func (t *modelTotals) collectSteps(ch chan<- prometheus.Metric, d *stepDescs, with func(more ...string) []string) {
	for i := range t.steps {
		s := &t.steps[i]
		counter := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, with(s.name)...)
		}
		counter(d.requests, float64(s.requests))
		counter(d.queue, s.queueNs/1e9)
		counter(d.compute, s.computeNs/1e9)
		counter(d.executions, float64(s.exec))
		counter(d.inferences, float64(s.infer))
	}
}
