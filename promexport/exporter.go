// Package promexport serves a run's client-side statistics for Prometheus,
// so that a cluster's Prometheus can aggregate a fleet of headless workers
// live. It is one of the run's snapshot sinks: it reads one stats.Snapshot
// per tick (Add) and keeps cumulative totals that a scrape turns into
// counters, gauges and latency histograms in Prometheus' exposition format.
//
// A run of one model names it in a constant model label on every metric
// (Options.Model). A run over several models (Options.Models) has one series
// per model of every per-request metric (requests, successes, errors by
// code, inferences, cancelled requests, retries, late sends, bytes, requests
// in flight, the load target and both latency histograms), labelled
// model="NAME" and read from that model's part of each tick
// (stats.Snapshot.Models); the run-wide metrics (the load step and
// tritontop's own CPU) have no model label. The run's totals are then sums
// over the label, such as sum without (model) (tritontop_requests_total).
//
// A pipeline's composing models (an ensemble's steps) have counters of
// their own, from the server's statistics of each, labelled step="NAME"
// (MetricStepRequests and the others of steps.go).
//
// Nothing here runs per request: each tick costs a few additions per model
// and one pass over each of its HDR latency histograms, and each scrape
// builds its metrics from the totals.
package promexport

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tritontop/tritontop/stats"
)

// Options configures an Exporter. All fields are optional.
type Options struct {
	// Model is the value of the model label on every metric of a run of
	// one model (omitted when empty).
	Model string
	// Models names the models of a run over several models, in the order
	// of its snapshots' Models. With two or more, every per-request metric
	// has one series per model, labelled with its name and read from that
	// model's part of each tick, and the run-wide metrics have no model
	// label; Model must then be empty. One name is the same as Model. A
	// model that a tick has and Models does not name gets its series from
	// that tick on; one named here has them, at zero, from the start.
	Models []string
	// Worker is the value of the worker label on every metric, such as the
	// worker's index in a distributed run (omitted when empty).
	Worker string
	// Buckets are the latency histograms' upper bounds in seconds, strictly
	// increasing; nil means DefaultBuckets.
	Buckets []float64
}

// Exporter keeps a run's cumulative client statistics and exposes them as
// Prometheus metrics. Add is called by the run's snapshot fan-out; scrapes
// read concurrently. It is a prometheus.Collector, registered on its own
// registry (Handler serves it), never on the global one.
type Exporter struct {
	buckets []float64
	descs   descs
	reg     *prometheus.Registry
	// perModel is set for a run over several models: the per-request
	// metrics then come from each tick's Models, one series per model.
	perModel bool

	mu sync.Mutex
	// models are the per-request totals: the one entry of a run of one
	// model, or one per model of a run over several.
	models []*modelTotals
	run    runTotals
	err    error // the first histogram that could not be decoded
}

// runTotals are the last tick's run-wide gauges.
type runTotals struct {
	seen       bool // a snapshot was added
	step       int
	processCPU float64
	// applied and paused add up the ticks' time under load and paused,
	// in seconds.
	applied, paused float64
}

// descs are the metrics' descriptions, fixed at New.
type descs struct {
	requests, successes, errors, inferences *prometheus.Desc
	cancelled, retries, late                *prometheus.Desc
	bytesSent, bytesReceived                *prometheus.Desc
	inFlight, target, step, processCPU      *prometheus.Desc
	applied, paused                         *prometheus.Desc
	latency, scheduled                      *prometheus.Desc
	steps                                   stepDescs
}

// Metric names, exported so that dashboards, alerts and tests can refer to
// them.
const (
	MetricRequests         = "tritontop_requests_total"
	MetricSuccesses        = "tritontop_request_successes_total"
	MetricErrors           = "tritontop_request_errors_total"
	MetricInferences       = "tritontop_inferences_total"
	MetricCancelled        = "tritontop_requests_cancelled_total"
	MetricRetries          = "tritontop_request_retries_total"
	MetricLateSends        = "tritontop_late_sends_total"
	MetricBytesSent        = "tritontop_sent_bytes_total"
	MetricBytesReceived    = "tritontop_received_bytes_total"
	MetricInFlight         = "tritontop_requests_in_flight"
	MetricLoadTarget       = "tritontop_load_target"
	MetricLoadStep         = "tritontop_load_step"
	MetricProcessCPU       = "tritontop_process_cpu_cores"
	MetricLoadApplied      = "tritontop_load_applied_seconds_total"
	MetricPaused           = "tritontop_paused_seconds_total"
	MetricLatency          = "tritontop_request_duration_seconds"
	MetricScheduledLatency = "tritontop_request_scheduled_duration_seconds"
)

// New returns an Exporter with no data yet. It fails when a label value is
// not valid UTF-8, when Model and Models are both given or Models names a
// model twice or an empty one, or when the buckets are not positive,
// finite and strictly increasing.
func New(opts Options) (*Exporter, error) {
	buckets := opts.Buckets
	if buckets == nil {
		buckets = DefaultBuckets
	}
	if err := checkBuckets(buckets); err != nil {
		return nil, err
	}
	model, perModel, err := modelLabels(opts)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(opts.Worker) {
		return nil, fmt.Errorf("prometheus worker label %q is not valid UTF-8", opts.Worker)
	}
	labels := prometheus.Labels{}
	if model != "" {
		labels["model"] = model
	}
	if opts.Worker != "" {
		labels["worker"] = opts.Worker
	}
	// run describes a run-wide metric; req a per-request one, which has a
	// model label of its own in a run over several models.
	run := func(name, help string, variable ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, variable, labels)
	}
	req := run
	if perModel {
		req = func(name, help string, variable ...string) *prometheus.Desc {
			return run(name, help, append([]string{"model"}, variable...)...)
		}
	}
	e := &Exporter{
		buckets:  append([]float64(nil), buckets...),
		perModel: perModel,
		descs: descs{
			requests:      req(MetricRequests, "Requests finished since the run started: successes and errors, not cancelled ones."),
			successes:     req(MetricSuccesses, "Requests that succeeded since the run started."),
			errors:        req(MetricErrors, "Requests that failed since the run started, by gRPC status code name (HTTP errors are mapped to the code Triton would send).", "code"),
			inferences:    req(MetricInferences, "Inferences in successful requests since the run started (batch size per request)."),
			cancelled:     req(MetricCancelled, "Requests cancelled by the client (at the end of the run or a load change) since the run started."),
			retries:       req(MetricRetries, "Retries of failed sends since the run started."),
			late:          req(MetricLateSends, "Open-loop sends later than their schedule since the run started."),
			bytesSent:     req(MetricBytesSent, "Request bytes sent since the run started."),
			bytesReceived: req(MetricBytesReceived, "Response bytes received since the run started."),
			inFlight:      req(MetricInFlight, "Requests in flight at the end of the last tick."),
			target:        req(MetricLoadTarget, "The load asked for: requests in flight (mode concurrency) or requests per second (mode rate).", "mode"),
			step:          run(MetricLoadStep, "Index of the current step of a stepped schedule (0 without one), so that a fleet's steps can be lined up."),
			processCPU:    run(MetricProcessCPU, "tritontop's own CPU use over the last tick, in cores (1 = one core busy)."),
			applied:       run(MetricLoadApplied, "Time load was applied since the run started, paused time left out: a throughput over it (increase of requests over increase of this) is the one the summary shows."),
			paused:        run(MetricPaused, "Time the load was paused since the run started."),
			latency:       req(MetricLatency, "Latency of successful requests from the actual send to the response."),
			scheduled:     req(MetricScheduledLatency, "Latency of successful open-loop requests from their scheduled send time to the response (free of coordinated omission)."),
		},
		reg: prometheus.NewRegistry(),
	}
	e.descs.steps = newStepDescs(req)
	if perModel {
		for _, name := range opts.Models {
			e.models = append(e.models, newModelTotals(name, len(buckets), true))
		}
	} else {
		e.models = []*modelTotals{newModelTotals("", len(buckets), false)}
	}
	if err := e.reg.Register(e); err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	return e, nil
}

// modelLabels checks Options' model names and returns the constant model
// label (empty for none) and whether the run is over several models.
func modelLabels(opts Options) (model string, perModel bool, err error) {
	if opts.Model != "" && len(opts.Models) > 0 {
		return "", false, fmt.Errorf("prometheus model label: both a model (%q) and the models of a run over several (%q) given; give one", opts.Model, opts.Models)
	}
	for _, name := range append([]string{opts.Model}, opts.Models...) {
		if !utf8.ValidString(name) {
			return "", false, fmt.Errorf("prometheus model label %q is not valid UTF-8", name)
		}
	}
	switch len(opts.Models) {
	case 0:
		return opts.Model, false, nil
	case 1:
		return opts.Models[0], false, nil
	}
	seen := make(map[string]bool, len(opts.Models))
	for _, name := range opts.Models {
		if name == "" {
			return "", false, fmt.Errorf("prometheus model labels %q: a model of a run over several needs a name", opts.Models)
		}
		if seen[name] {
			return "", false, fmt.Errorf("prometheus model labels %q: model %s named twice; name each model once", opts.Models, name)
		}
		seen[name] = true
	}
	return "", true, nil
}

// maxStackModels is how many models' decoded histograms Add holds without
// allocating (tritontop runs at most 16 models).
const maxStackModels = 16

// Add folds one tick into the totals. It reads only the tick's own fields
// (Tick, Load, System, Histogram, ScheduledHistogram, and the same of each
// of Models in a run over several models), so that a reset of the run's
// windows never makes a counter go backwards. A histogram that cannot be
// decoded is left out of the latency histograms, everything else is
// counted, and Err reports it; so does a tick of a run over several models
// that has no Models.
func (e *Exporter) Add(s stats.Snapshot) {
	if !e.perModel {
		// Decoding is the expensive part; it runs before the lock so that
		// a scrape never waits for it.
		p := decodePart(&s.Tick, s.Histogram, s.ScheduledHistogram)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.models[0].add(e.buckets, &s.Tick, &s.Load, &p)
		e.models[0].addSteps(&s.Server, s.ServerLate)
		e.noteErr(s.Seq, "", p.latErr, p.schedErr)
		e.run.add(&s)
		return
	}

	var buf [maxStackModels]part
	parts := buf[:0]
	for i := range s.Models {
		m := &s.Models[i]
		parts = append(parts, decodePart(&m.Tick, m.Histogram, m.ScheduledHistogram))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(s.Models) == 0 && e.err == nil {
		e.err = fmt.Errorf("tick %d has no per-model statistics, which a run over several models needs: its requests are left out", s.Seq)
	}
	for i := range parts {
		m := &s.Models[i]
		t := e.model(i, m.Name)
		t.add(e.buckets, &m.Tick, &m.Load, &parts[i])
		t.addSteps(&m.Server, m.ServerLate)
		e.noteErr(s.Seq, m.Name, parts[i].latErr, parts[i].schedErr)
	}
	e.run.add(&s)
}

// model returns the totals of the model named name, the i-th of the tick:
// where it was the tick before, in all but a reordered run.
func (e *Exporter) model(i int, name string) *modelTotals {
	if i < len(e.models) && e.models[i].name == name {
		return e.models[i]
	}
	for _, t := range e.models {
		if t.name == name {
			return t
		}
	}
	t := newModelTotals(name, len(e.buckets), true)
	e.models = append(e.models, t)
	return t
}

// noteErr keeps the first histogram that could not be decoded; model is
// empty in a run of one model.
func (e *Exporter) noteErr(seq int, model string, latErr, schedErr error) {
	err := errors.Join(latErr, schedErr)
	if e.err != nil || err == nil {
		return
	}
	if model != "" {
		e.err = fmt.Errorf("tick %d: model %s: %w", seq, model, err)
		return
	}
	e.err = fmt.Errorf("tick %d: %w", seq, err)
}

// add keeps the tick's run-wide gauges.
func (r *runTotals) add(s *stats.Snapshot) {
	r.seen = true
	r.step = s.Load.Step
	r.processCPU = s.System.ProcessCPU
	r.paused += s.Paused.Seconds()
	r.applied += max(s.Interval-s.Paused, 0).Seconds()
}

// Err returns the first error met by Add (a tick's latency histogram that
// could not be decoded, or a tick without the models of its run), or nil.
func (e *Exporter) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Handler serves the metrics in Prometheus' exposition format (text, or
// what the scraper negotiates), for mounting at /metrics.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{})
}

// Describe sends the descriptions of every metric the Exporter can emit.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	d := &e.descs
	for _, desc := range []*prometheus.Desc{
		d.requests, d.successes, d.errors, d.inferences, d.cancelled, d.retries, d.late,
		d.bytesSent, d.bytesReceived, d.inFlight, d.target, d.step, d.processCPU,
		d.latency, d.scheduled, d.applied, d.paused,
	} {
		ch <- desc
	}
	for _, desc := range d.steps.all() {
		ch <- desc
	}
}

// Collect sends the current totals as constant metrics. Counters are
// emitted from the start, at zero, so that a rate over the first scrapes is
// defined; gauges once a tick (with that model) was added; the
// scheduled-latency histogram once an open-loop tick was added.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.models {
		t.collect(ch, &e.descs, e.buckets)
	}
	ch <- prometheus.MustNewConstMetric(e.descs.applied, prometheus.CounterValue, e.run.applied)
	ch <- prometheus.MustNewConstMetric(e.descs.paused, prometheus.CounterValue, e.run.paused)
	if e.run.seen {
		ch <- prometheus.MustNewConstMetric(e.descs.step, prometheus.GaugeValue, float64(e.run.step))
		ch <- prometheus.MustNewConstMetric(e.descs.processCPU, prometheus.GaugeValue, e.run.processCPU)
	}
}
