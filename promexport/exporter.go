// Package promexport serves a run's client-side statistics for Prometheus,
// so that a cluster's Prometheus can aggregate a fleet of headless workers
// live. It is one of the run's snapshot sinks: it reads one stats.Snapshot
// per tick (Add) and keeps cumulative totals that a scrape turns into
// counters, gauges and latency histograms in Prometheus' exposition format.
//
// Nothing here runs per request: each tick costs a few additions and one
// pass over the tick's HDR latency histogram, and each scrape builds its
// metrics from the totals.
package promexport

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// Options configures an Exporter. All fields are optional.
type Options struct {
	// Model is the value of the model label on every metric (omitted when
	// empty).
	Model string
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

	mu  sync.Mutex
	tot totals
	err error // the first histogram that could not be decoded
}

// totals are the run's cumulative counters and the last tick's gauges.
type totals struct {
	requests, successes, errors, inferences int64
	cancelled, retries, late                int64
	bytesSent, bytesReceived                int64
	errorsByCode                            map[string]int64

	latency, scheduled bucketCounts

	// Gauges, valid once a snapshot was added.
	seen       bool
	mode       load.Mode
	target     float64
	inFlight   int
	step       int
	processCPU float64
}

// descs are the metrics' descriptions, fixed at New.
type descs struct {
	requests, successes, errors, inferences *prometheus.Desc
	cancelled, retries, late                *prometheus.Desc
	bytesSent, bytesReceived                *prometheus.Desc
	inFlight, target, step, processCPU      *prometheus.Desc
	latency, scheduled                      *prometheus.Desc
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
	MetricLatency          = "tritontop_request_duration_seconds"
	MetricScheduledLatency = "tritontop_request_scheduled_duration_seconds"
)

// New returns an Exporter with no data yet. It fails when a label value is
// not valid UTF-8 or the buckets are not positive, finite and strictly
// increasing.
func New(opts Options) (*Exporter, error) {
	buckets := opts.Buckets
	if buckets == nil {
		buckets = DefaultBuckets
	}
	if err := checkBuckets(buckets); err != nil {
		return nil, err
	}
	labels := prometheus.Labels{}
	for name, v := range map[string]string{"model": opts.Model, "worker": opts.Worker} {
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("prometheus %s label %q is not valid UTF-8", name, v)
		}
		if v != "" {
			labels[name] = v
		}
	}
	d := func(name, help string, variable ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, variable, labels)
	}
	e := &Exporter{
		buckets: append([]float64(nil), buckets...),
		descs: descs{
			requests:      d(MetricRequests, "Requests finished since the run started: successes and errors, not cancelled ones."),
			successes:     d(MetricSuccesses, "Requests that succeeded since the run started."),
			errors:        d(MetricErrors, "Requests that failed since the run started, by gRPC status code name (HTTP errors are mapped to the code Triton would send).", "code"),
			inferences:    d(MetricInferences, "Inferences in successful requests since the run started (batch size per request)."),
			cancelled:     d(MetricCancelled, "Requests cancelled by the client (at the end of the run or a load change) since the run started."),
			retries:       d(MetricRetries, "Retries of failed sends since the run started."),
			late:          d(MetricLateSends, "Open-loop sends later than their schedule since the run started."),
			bytesSent:     d(MetricBytesSent, "Request bytes sent since the run started."),
			bytesReceived: d(MetricBytesReceived, "Response bytes received since the run started."),
			inFlight:      d(MetricInFlight, "Requests in flight at the end of the last tick."),
			target:        d(MetricLoadTarget, "The load asked for: requests in flight (mode concurrency) or requests per second (mode rate).", "mode"),
			step:          d(MetricLoadStep, "Index of the current step of a stepped schedule (0 without one), so that a fleet's steps can be lined up."),
			processCPU:    d(MetricProcessCPU, "tritontop's own CPU use over the last tick, in cores (1 = one core busy)."),
			latency:       d(MetricLatency, "Latency of successful requests from the actual send to the response."),
			scheduled:     d(MetricScheduledLatency, "Latency of successful open-loop requests from their scheduled send time to the response (free of coordinated omission)."),
		},
		reg: prometheus.NewRegistry(),
		tot: totals{
			errorsByCode: map[string]int64{},
			latency:      newBucketCounts(len(buckets)),
			scheduled:    newBucketCounts(len(buckets)),
		},
	}
	if err := e.reg.Register(e); err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	return e, nil
}

// Add folds one tick into the totals. It reads only the tick's own fields
// (Tick, Load, System, Histogram, ScheduledHistogram), so that a reset of
// the run's windows never makes a counter go backwards. A histogram that
// cannot be decoded is left out of the latency histograms, everything else
// is counted, and Err reports it.
func (e *Exporter) Add(s stats.Snapshot) {
	// Decoding is the expensive part; it runs before the lock so that a
	// scrape never waits for it.
	lat, latErr := decodeTick(s.Histogram)
	sched, schedErr := decodeTick(s.ScheduledHistogram)

	e.mu.Lock()
	defer e.mu.Unlock()
	t := &e.tot
	c := &s.Tick
	t.requests += c.Requests
	t.successes += c.Successes
	t.errors += c.Errors
	t.inferences += c.Inferences
	t.cancelled += c.Cancelled
	t.retries += c.Retries
	t.late += c.Late
	t.bytesSent += c.BytesSent
	t.bytesReceived += c.BytesReceived
	for _, ec := range c.ErrorsByCode {
		t.errorsByCode[ec.Code] += ec.Count
	}

	if latErr == nil {
		t.latency.add(e.buckets, lat, c.Latency)
	}
	if schedErr == nil && (c.Scheduled != nil || s.ScheduledHistogram != "") {
		var l stats.Latency
		if c.Scheduled != nil {
			l = *c.Scheduled
		}
		t.scheduled.add(e.buckets, sched, l)
	}
	if err := errors.Join(latErr, schedErr); err != nil && e.err == nil {
		e.err = fmt.Errorf("tick %d: %w", s.Seq, err)
	}

	t.seen = true
	t.mode = s.Load.Mode
	t.target = s.Load.Target().Level()
	t.inFlight = s.Load.InFlight
	t.step = s.Load.Step
	t.processCPU = s.System.ProcessCPU
}

// Err returns the first error met by Add (a tick's latency histogram that
// could not be decoded), or nil.
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
		d.latency, d.scheduled,
	} {
		ch <- desc
	}
}

// Collect sends the current totals as constant metrics. Counters are
// emitted from the start, at zero, so that a rate over the first scrapes is
// defined; gauges once a tick was added; the scheduled-latency histogram
// once an open-loop tick was added.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, t := &e.descs, &e.tot
	counter := func(desc *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
	}
	counter(d.requests, t.requests)
	counter(d.successes, t.successes)
	for code, n := range t.errorsByCode {
		counter(d.errors, n, code)
	}
	counter(d.inferences, t.inferences)
	counter(d.cancelled, t.cancelled)
	counter(d.retries, t.retries)
	counter(d.late, t.late)
	counter(d.bytesSent, t.bytesSent)
	counter(d.bytesReceived, t.bytesReceived)

	ch <- t.latency.metric(d.latency, e.buckets)
	if t.scheduled.seen {
		ch <- t.scheduled.metric(d.scheduled, e.buckets)
	}

	if !t.seen {
		return
	}
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	gauge(d.inFlight, float64(t.inFlight))
	if t.mode == load.Concurrency || t.mode == load.Rate {
		gauge(d.target, t.target, string(t.mode))
	}
	gauge(d.step, float64(t.step))
	gauge(d.processCPU, t.processCPU)
}
