package stats

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms record microseconds: 1 µs is finer than any network
// round trip worth measuring, and a microsecond unit keeps the dense counts
// array (and so every per-tick percentile scan) about a quarter smaller than
// nanoseconds over the same range would.
const (
	// histogramUnit is the duration of one histogram value.
	histogramUnit = time.Microsecond
	// histogramMax is the largest value recorded (one hour in µs); longer
	// latencies are recorded as one hour.
	histogramMax = int64(time.Hour / histogramUnit)
	// histogramDigits is the number of significant decimal digits kept.
	histogramDigits = 3
)

// latencyPercentiles are the quantiles a Latency reports, in its field order.
var latencyPercentiles = [...]float64{50, 90, 95, 99, 99.9}

// newHistogram returns an empty latency histogram with the package's range
// and precision.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, histogramMax, histogramDigits)
}

// newPacked returns an empty sparse histogram with the same geometry as
// newHistogram, for the window ring.
func newPacked() *hdrhistogram.PackedHistogram {
	return hdrhistogram.NewPacked(1, histogramMax, histogramDigits)
}

// histogramValue converts a latency to a histogram value, clamped to the
// recordable range so that recording never fails and never drops a sample.
func histogramValue(d time.Duration) int64 {
	v := int64(d / histogramUnit)
	if v < 0 {
		return 0
	}
	if v > histogramMax {
		return histogramMax
	}
	return v
}

// encodeHistogram returns h in hdrhistogram's V2 compressed encoding (base64
// text), or "" for an empty histogram.
func encodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	if h.TotalCount() == 0 {
		return "", nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode latency histogram: %w", err)
	}
	return string(b), nil
}

// EncodeHistogram returns h in a Snapshot's histogram encoding
// (hdrhistogram's V2 compressed encoding as base64 text), "" for an empty
// histogram: what a merge of several runs' ticks writes back.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) { return encodeHistogram(h) }

// DecodeHistogram decodes a Snapshot's Histogram or ScheduledHistogram
// field. Values are microseconds. An empty string decodes to an empty
// histogram, since a tick without successful requests stores none.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return newHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode latency histogram: %w", err)
	}
	return h, nil
}

// LatencyFromHistogram summarizes a latency histogram whose values are
// microseconds (as DecodeHistogram returns them). Min, max and mean are the
// histogram's approximations (within its 3 significant digits); live
// Snapshots carry the exact min, max and mean instead.
func LatencyFromHistogram(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	l := Latency{
		Count: h.TotalCount(),
		Min:   time.Duration(h.Min()) * histogramUnit,
		Max:   time.Duration(h.Max()) * histogramUnit,
		Mean:  time.Duration(h.Mean() * float64(histogramUnit)),
	}
	setPercentiles(&l, h)
	return l
}

// setPercentiles fills l's percentile fields from h.
func setPercentiles(l *Latency, h *hdrhistogram.Histogram) {
	v := h.ValueAtPercentilesSlice(latencyPercentiles[:])
	l.P50 = time.Duration(v[0]) * histogramUnit
	l.P90 = time.Duration(v[1]) * histogramUnit
	l.P95 = time.Duration(v[2]) * histogramUnit
	l.P99 = time.Duration(v[3]) * histogramUnit
	l.P999 = time.Duration(v[4]) * histogramUnit
}

// extremes are the exact count, sum, minimum and maximum of a set of
// latencies, kept beside a histogram that only knows them approximately.
type extremes struct {
	count int64
	sum   time.Duration
	min   time.Duration
	max   time.Duration
}

// add includes one latency.
func (e *extremes) add(d time.Duration) {
	if e.count == 0 || d < e.min {
		e.min = d
	}
	if d > e.max {
		e.max = d
	}
	e.count++
	e.sum += d
}

// merge includes another set.
func (e *extremes) merge(o extremes) {
	if o.count == 0 {
		return
	}
	if e.count == 0 || o.min < e.min {
		e.min = o.min
	}
	if o.max > e.max {
		e.max = o.max
	}
	e.count += o.count
	e.sum += o.sum
}

// latency summarizes h with the exact min, max and mean of e. Percentiles
// are the histogram's (the highest value equivalent to the rank's bucket)
// clamped into [min, max], so that a summary never shows a p50 above its max.
func latency(h *hdrhistogram.Histogram, e extremes) Latency {
	if e.count == 0 || h.TotalCount() == 0 {
		return Latency{}
	}
	l := Latency{
		Count: h.TotalCount(),
		Min:   e.min,
		Max:   e.max,
		Mean:  e.sum / time.Duration(e.count),
	}
	setPercentiles(&l, h)
	l.Clamp()
	return l
}
