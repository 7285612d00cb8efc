package promexport

import (
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// modelTotals are one model's cumulative per-request counters and latency
// histograms and its last tick's gauges: the whole run's in a run of one
// model.
type modelTotals struct {
	// name is the model's name in the snapshots; labels are the values of
	// the per-request metrics' variable model label: the name, made valid
	// UTF-8, in a run over several models, none in a run of one.
	name   string
	labels []string

	// client adds up the model's ticks (stats.ClientStats.Add): its
	// counters are the counters served; its rates and latency are unused.
	client stats.ClientStats

	latency, scheduled bucketCounts
	// steps are a pipeline's composing models, in the order first seen.
	steps []stepTotals

	// Gauges, valid once a tick of the model was added.
	seen     bool
	mode     load.Mode
	target   float64
	inFlight int
}

// newModelTotals returns empty totals for n latency buckets; labelled says
// that the model's name is a label value (a run over several models).
func newModelTotals(name string, n int, labelled bool) *modelTotals {
	t := &modelTotals{
		name:      name,
		latency:   newBucketCounts(n),
		scheduled: newBucketCounts(n),
	}
	if labelled {
		// A label value that is not UTF-8 would fail every scrape.
		t.labels = []string{strings.ToValidUTF8(name, "\uFFFD")}
	}
	return t
}

// part is one model's part of a tick (the whole tick in a run of one
// model) with its histograms decoded, ready to be added under the lock. It
// holds no pointer into the snapshot: one would move every snapshot Add
// is given to the heap, as its errors are kept.
type part struct {
	lat, sched       *hdrhistogram.PackedHistogram
	latErr, schedErr error
	// hasSched says that the part is open-loop: it has a latency from the
	// schedule, possibly of no request.
	hasSched bool
}

// decodePart decodes a part's two histograms; c is its client statistics.
func decodePart(c *stats.ClientStats, hist, schedHist string) part {
	p := part{hasSched: c.Scheduled != nil || schedHist != ""}
	p.lat, p.latErr = decodeTick(hist)
	p.sched, p.schedErr = decodeTick(schedHist)
	return p
}

// add folds a part into the totals, with its client statistics c and load
// l: a few additions and one pass over each histogram that decoded.
func (t *modelTotals) add(bounds []float64, c *stats.ClientStats, l *stats.Load, p *part) {
	t.client.Add(c)

	if p.latErr == nil {
		t.latency.add(bounds, p.lat, c.Latency)
	}
	if p.schedErr == nil && p.hasSched {
		var sl stats.Latency
		if c.Scheduled != nil {
			sl = *c.Scheduled
		}
		t.scheduled.add(bounds, p.sched, sl)
	}

	t.seen = true
	t.mode = l.Mode
	t.target = l.Target().Level()
	t.inFlight = l.InFlight
}

// collect sends the model's metrics.
func (t *modelTotals) collect(ch chan<- prometheus.Metric, d *descs, bounds []float64) {
	// with is the model's label values followed by more.
	with := func(more ...string) []string { return append(slices.Clip(t.labels), more...) }
	counter := func(desc *prometheus.Desc, v int64, more ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), with(more...)...)
	}
	c := &t.client
	counter(d.requests, c.Requests)
	counter(d.successes, c.Successes)
	for _, e := range c.ErrorsByCode {
		counter(d.errors, e.Count, e.Code)
	}
	counter(d.inferences, c.Inferences)
	counter(d.cancelled, c.Cancelled)
	counter(d.retries, c.Retries)
	counter(d.late, c.Late)
	counter(d.bytesSent, c.BytesSent)
	counter(d.bytesReceived, c.BytesReceived)

	t.collectSteps(ch, &d.steps, with)
	ch <- t.latency.metric(d.latency, bounds, t.labels...)
	if t.scheduled.seen {
		ch <- t.scheduled.metric(d.scheduled, bounds, t.labels...)
	}

	if !t.seen {
		return
	}
	ch <- prometheus.MustNewConstMetric(d.inFlight, prometheus.GaugeValue, float64(t.inFlight), t.labels...)
	if t.mode == load.Concurrency || t.mode == load.Rate {
		ch <- prometheus.MustNewConstMetric(d.target, prometheus.GaugeValue, t.target, with(string(t.mode))...)
	}
}
