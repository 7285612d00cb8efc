package promexport

import (
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritontop/tritontop/stats"
)

// DefaultBuckets are the latency histograms' upper bounds in seconds: 0.5 ms
// to 60 s in a 1-2-5 sequence (each bound 2 to 2.5 times the one before),
// then 30 s and 60 s. That covers a small model on a local GPU (sub-ms
// compute plus a loopback round trip) up to a long generation or a request
// stuck behind a full queue, with 17 buckets per series; a latency over 60 s
// lands only in +Inf. histogram_quantile interpolates inside a bucket, so a
// quantile read from these is good to about a bucket's width; the run file's
// HDR histograms are the exact record.
var DefaultBuckets = []float64{
	0.0005, 0.001, 0.002, 0.005,
	0.01, 0.02, 0.05,
	0.1, 0.2, 0.5,
	1, 2, 5,
	10, 20, 30, 60,
}

// checkBuckets says what is wrong with a list of upper bounds, if anything.
func checkBuckets(b []float64) error {
	if len(b) == 0 {
		return fmt.Errorf("prometheus latency buckets: none given; give at least one upper bound in seconds")
	}
	for i, v := range b {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("prometheus latency bucket %v: an upper bound must be a positive, finite number of seconds", v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Errorf("prometheus latency buckets %v, %v: upper bounds must be strictly increasing", b[i-1], v)
		}
	}
	return nil
}

// bucketCounts is one latency histogram's cumulative state: per-bucket
// counts (not cumulative across buckets; the last one is +Inf), the total
// count and the sum of latencies in seconds.
type bucketCounts struct {
	counts []uint64
	count  uint64
	sum    float64
	// seen is set once a tick with this kind of latency was added.
	seen bool
}

func newBucketCounts(n int) bucketCounts {
	return bucketCounts{counts: make([]uint64, n+1)}
}

// decodeTick decodes a tick's encoded histogram (a Snapshot's Histogram or
// ScheduledHistogram: V2 compressed, values in µs, the encoding that
// stats.DecodeHistogram reads); nil for an empty one. It decodes into
// hdrhistogram's sparse form, which holds only the populated buckets: a
// dense decode allocates the whole counts array and a walk over it costs
// milliseconds per tick (BenchmarkAdd).
func decodeTick(enc string) (*hdrhistogram.PackedHistogram, error) {
	if enc == "" {
		return nil, nil
	}
	h, err := hdrhistogram.DecodePacked([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("decode latency histogram: %w", err)
	}
	return h, nil
}

// add folds one tick's HDR histogram (values in µs) into the buckets.
//
// HDR keeps each value in a bucket of equivalent values at most 1/1024 of
// the value wide (3 significant digits); each such bucket is counted where
// its lowest value falls. A latency a hair above a bound (by less than
// 0.1%) can so be counted under it: far finer than the buckets themselves.
//
// The sum comes from the tick's exact mean (l, over the same successes)
// when it describes the same count, else from the histogram's own mean.
func (b *bucketCounts) add(bounds []float64, h *hdrhistogram.PackedHistogram, l stats.Latency) {
	b.seen = true
	if h == nil || h.TotalCount() == 0 {
		return
	}
	i := 0
	for value, count := range h.ForEachBucket {
		// One correctly rounded division: a value exactly on a bound
		// (500 µs, 0.0005) compares equal to it.
		v := float64(value) / 1e6
		for i < len(bounds) && v > bounds[i] {
			i++
		}
		b.counts[i] += uint64(count)
	}
	n := h.TotalCount()
	b.count += uint64(n)
	if l.Count == n {
		b.sum += l.Mean.Seconds() * float64(n)
	} else {
		b.sum += h.Mean() / 1e6 * float64(n)
	}
}

// metric returns the buckets as a constant Prometheus histogram with the
// given label values.
func (b *bucketCounts) metric(desc *prometheus.Desc, bounds []float64, labels ...string) prometheus.Metric {
	cum := make(map[float64]uint64, len(bounds))
	var acc uint64
	for i, ub := range bounds {
		acc += b.counts[i]
		cum[ub] = acc
	}
	return prometheus.MustNewConstHistogram(desc, b.count, b.sum, cum, labels...)
}
