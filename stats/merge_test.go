package stats

import (
	"testing"
	"time"
)

func TestClientStatsAddAndRates(t *testing.T) {
	a := ClientStats{Duration: time.Second, Requests: 10, Successes: 8, Errors: 2, Inferences: 16, Late: 5,
		BytesSent: 100, BytesReceived: 200,
		ErrorsByCode: []ErrorCount{{Code: "UNAVAILABLE", Count: 2, Message: "old"}}}
	b := ClientStats{Duration: 3 * time.Second, Requests: 30, Successes: 27, Errors: 3, Inferences: 27, Retries: 4,
		Cancelled: 1, ErrorsByCode: []ErrorCount{
			{Code: "INTERNAL", Count: 1, Message: "boom"},
			{Code: "UNAVAILABLE", Count: 2, Message: "new"},
		}}
	var s ClientStats
	s.Add(&a)
	s.Add(&b)
	s.SetRates()
	if s.Duration != 4*time.Second || s.Requests != 40 || s.Successes != 35 || s.Errors != 5 || s.Inferences != 43 ||
		s.Retries != 4 || s.Cancelled != 1 || s.Late != 5 || s.BytesSent != 100 || s.BytesReceived != 200 {
		t.Errorf("sum %+v", s)
	}
	// 40 requests and 43 inferences in 4 s; 5 late of 40.
	if s.RequestsPerS != 10 || s.InferPerS != 10.75 || s.LateShare != 0.125 {
		t.Errorf("rates %v req/s, %v infer/s, late share %v", s.RequestsPerS, s.InferPerS, s.LateShare)
	}
	want := []ErrorCount{{Code: "UNAVAILABLE", Count: 4, Message: "new"}, {Code: "INTERNAL", Count: 1, Message: "boom"}}
	if len(s.ErrorsByCode) != 2 || s.ErrorsByCode[0] != want[0] || s.ErrorsByCode[1] != want[1] {
		t.Errorf("errors by code %+v, want %+v", s.ErrorsByCode, want)
	}
	// Adding does not alias the added span's slice.
	if a.ErrorsByCode[0].Count != 2 {
		t.Errorf("Add changed its argument: %+v", a.ErrorsByCode)
	}
	var zero ClientStats
	zero.SetRates()
	if zero.RequestsPerS != 0 || zero.LateShare != 0 {
		t.Errorf("rates of nothing %+v", zero)
	}
}

// span builds a tick's latency and histogram from latencies in µs, as the
// aggregator does.
func spanOf(t *testing.T, us ...int64) (Latency, string) {
	t.Helper()
	h := newHistogram()
	var e extremes
	for _, v := range us {
		h.RecordValue(v)
		e.add(time.Duration(v) * time.Microsecond)
	}
	enc, err := encodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return latency(h, e), enc
}

func TestLatencyMergeIsExactWithHistograms(t *testing.T) {
	var all []int64
	var m LatencyMerge
	for i := range 3 {
		var us []int64
		for j := range 100 {
			us = append(us, int64(1000*(i+1)+j))
		}
		all = append(all, us...)
		l, enc := spanOf(t, us...)
		m.Add(l, enc)
	}
	want, _ := spanOf(t, all...)
	got, approx := m.Latency()
	if approx {
		t.Fatal("merge with every histogram marked approximate")
	}
	if got != want {
		t.Errorf("merged %+v\nwant  %+v (one histogram of all the values)", got, want)
	}
	if m.Count() != 300 || m.Histogram().TotalCount() != 300 {
		t.Errorf("count %d, histogram %d", m.Count(), m.Histogram().TotalCount())
	}
}

func TestLatencyMergeWithoutHistogramIsWeighted(t *testing.T) {
	var m LatencyMerge
	l1, enc := spanOf(t, 1000, 1000, 1000)
	m.Add(l1, enc)
	l2, _ := spanOf(t, 5000)
	m.Add(l2, "") // a tick that stored no histogram
	got, approx := m.Latency()
	if !approx {
		t.Fatal("merge without a histogram not marked approximate")
	}
	// p50 weighted by count: (3·1 ms + 1·5 ms)/4 = 2 ms; min/max exact.
	if got.P50 != 2*time.Millisecond || got.Min != time.Millisecond || got.Max != 5*time.Millisecond || got.Count != 4 {
		t.Errorf("merged %+v", got)
	}
	if m.Histogram() != nil {
		t.Error("a histogram offered for an approximate merge")
	}
}

func TestClampKeepsPercentilesWithinMinMax(t *testing.T) {
	l := Latency{Min: 2 * time.Millisecond, Max: 3 * time.Millisecond, P50: time.Millisecond, P99: 4 * time.Millisecond,
		P90: 2500 * time.Microsecond}
	l.Clamp()
	if l.P50 != 2*time.Millisecond || l.P99 != 3*time.Millisecond || l.P90 != 2500*time.Microsecond {
		t.Errorf("clamped %+v", l)
	}
}
