package stats

import (
	"cmp"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Add adds o's counters to s: duration, requests, successes, errors,
// inferences, cancellations, retries, late sends, bytes, errors by code, a
// decoupled model's request and response counts and the sequences ended.
// Rates are left alone (SetRates derives them once the adding is done) and
// so is latency, which only histograms can add (see LatencyMerge). Spans of
// the same run add up: ticks into a step, workers' ticks into one tick.
func (s *ClientStats) Add(o *ClientStats) {
	s.Duration += o.Duration
	s.Requests += o.Requests
	s.Successes += o.Successes
	s.Errors += o.Errors
	s.Inferences += o.Inferences
	s.Cancelled += o.Cancelled
	s.Retries += o.Retries
	s.Late += o.Late
	s.BytesSent += o.BytesSent
	s.BytesReceived += o.BytesReceived
	s.Timed += o.Timed
	s.SendTotal += o.SendTotal
	s.RecvTotal += o.RecvTotal
	for _, e := range o.ErrorsByCode {
		s.addError(e)
	}
	if o.Streaming != nil {
		if s.Streaming == nil {
			s.Streaming = &StreamingStats{}
		}
		s.Streaming.Add(o.Streaming)
	}
	if o.Sequences != nil {
		if s.Sequences == nil {
			s.Sequences = &SequenceStats{}
		}
		s.Sequences.Add(o.Sequences)
	}
}

// addError counts e under its code, keeping the latest non-empty message, and
// keeps ErrorsByCode most frequent first.
func (s *ClientStats) addError(e ErrorCount) {
	i := slices.IndexFunc(s.ErrorsByCode, func(x ErrorCount) bool { return x.Code == e.Code })
	if i < 0 {
		s.ErrorsByCode = append(s.ErrorsByCode, e)
	} else {
		s.ErrorsByCode[i].Count += e.Count
		if e.Message != "" {
			s.ErrorsByCode[i].Message = e.Message
		}
	}
	sortErrors(s.ErrorsByCode)
}

// sortErrors orders errors most frequent first, then by code.
func sortErrors(errs []ErrorCount) {
	slices.SortFunc(errs, func(a, b ErrorCount) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Code, b.Code)
	})
}

// SetRates derives RequestsPerS, InferPerS, Streaming.ResponsesPerS and
// Sequences.EndedPerS from the counters over Duration, and LateShare from Late over Requests.
func (s *ClientStats) SetRates() {
	s.RequestsPerS, s.InferPerS, s.LateShare = 0, 0, 0
	if s.Streaming != nil {
		s.Streaming.ResponsesPerS, s.Streaming.OutputTokensPerS = 0, 0
	}
	if s.Sequences != nil {
		s.Sequences.EndedPerS = 0
	}
	if secs := s.Duration.Seconds(); secs > 0 {
		s.RequestsPerS = float64(s.Requests) / secs
		s.InferPerS = float64(s.Inferences) / secs
		if s.Streaming != nil {
			s.Streaming.ResponsesPerS = float64(s.Streaming.Responses) / secs
			s.Streaming.OutputTokensPerS = float64(s.Streaming.OutputTokens) / secs
			if g := s.Streaming.Goodput; g != nil {
				g.PerS = float64(g.Requests) / secs
			}
		}
		if s.Sequences != nil {
			s.Sequences.EndedPerS = float64(s.Sequences.Ended) / secs
		}
	}
	if s.Requests > 0 {
		s.LateShare = float64(s.Late) / float64(s.Requests)
	}
}

// Clamp moves the percentiles into [Min, Max]: a histogram's percentile is
// the highest value of its bucket, which may lie past the exact maximum, and
// a summary must never show a p50 above its max.
func (l *Latency) Clamp() {
	for _, p := range []*time.Duration{&l.P50, &l.P90, &l.P95, &l.P99, &l.P999} {
		*p = min(max(*p, l.Min), l.Max)
	}
}

// LatencyMerge adds up the latency of several spans (ticks into a step,
// workers' ticks into one): exactly through their histograms when every span
// with successes carries one, otherwise by weighting each span's own
// percentiles by its count. Count, min, max and mean are exact either way.
// The zero value is ready to use.
type LatencyMerge struct {
	count    int64
	min, max time.Duration
	sum      float64 // Σ mean × count, ns
	hist     *hdrhistogram.Histogram
	missing  bool       // a span with successes had no usable histogram
	pct      [5]float64 // Σ percentile × count, ns
}

// Add includes one span's latency summary and its histogram in a Snapshot's
// encoding ("" when the span stored none).
func (m *LatencyMerge) Add(l Latency, encoded string) {
	if l.Count <= 0 {
		return
	}
	m.addSummary(l)
	if m.missing {
		return
	}
	h, err := DecodeHistogram(encoded)
	if err != nil || encoded == "" || h.TotalCount() == 0 {
		m.missing, m.hist = true, nil
		return
	}
	m.AddHistogram(h)
}

// AddDecoded is Add with the span's histogram already decoded (nil when
// the span stored none): merging the same spans into several sums (a
// window and the whole run) then decodes each once.
func (m *LatencyMerge) AddDecoded(l Latency, h *hdrhistogram.Histogram) {
	if l.Count <= 0 {
		return
	}
	m.addSummary(l)
	if m.missing {
		return
	}
	if h == nil || h.TotalCount() == 0 {
		m.missing, m.hist = true, nil
		return
	}
	m.AddHistogram(h)
}

// addSummary includes one span's count, extremes, mean and percentiles.
func (m *LatencyMerge) addSummary(l Latency) {
	if m.count == 0 || l.Min < m.min {
		m.min = l.Min
	}
	m.max = max(m.max, l.Max)
	m.count += l.Count
	n := float64(l.Count)
	m.sum += float64(l.Mean) * n
	for i, p := range [...]time.Duration{l.P50, l.P90, l.P95, l.P99, l.P999} {
		m.pct[i] += float64(p) * n
	}
}

// Count is the number of latencies added.
func (m *LatencyMerge) Count() int64 { return m.count }

// AddHistogram merges a decoded histogram into the merged one without a
// summary (the caller adds the summary with Add or not at all).
func (m *LatencyMerge) AddHistogram(h *hdrhistogram.Histogram) {
	if m.hist == nil {
		m.hist = newHistogram()
	}
	m.hist.Merge(h)
}

// Histogram returns the merged histogram (values in µs), nil when a span
// lacked one or none was added. The caller must not modify it.
func (m *LatencyMerge) Histogram() *hdrhistogram.Histogram {
	if m.missing {
		return nil
	}
	return m.hist
}

// Latency returns the merged latency and whether its percentiles are
// approximate (a span lacked a histogram).
func (m *LatencyMerge) Latency() (Latency, bool) {
	if m.count == 0 {
		return Latency{}, false
	}
	var l Latency
	approx := m.missing || m.hist == nil
	if approx {
		n := float64(m.count)
		l = Latency{
			P50:  time.Duration(m.pct[0] / n),
			P90:  time.Duration(m.pct[1] / n),
			P95:  time.Duration(m.pct[2] / n),
			P99:  time.Duration(m.pct[3] / n),
			P999: time.Duration(m.pct[4] / n),
		}
	} else {
		l = LatencyFromHistogram(m.hist)
	}
	// The spans' own count, min, max and mean are exact; the histogram's
	// are within its precision.
	l.Count, l.Min, l.Max = m.count, m.min, m.max
	l.Mean = time.Duration(m.sum / float64(m.count))
	l.Clamp()
	return l, approx
}

// ClientSend is the average time to encode a request and hand it to the
// transport over the timed requests, and whether any was timed.
func (s *ClientStats) ClientSend() (time.Duration, bool) {
	if s.Timed <= 0 {
		return 0, false
	}
	return s.SendTotal / time.Duration(s.Timed), true
}

// ClientRecv is the average time to receive and decode a response over the
// timed requests, and whether any was timed.
func (s *ClientStats) ClientRecv() (time.Duration, bool) {
	if s.Timed <= 0 {
		return 0, false
	}
	return s.RecvTotal / time.Duration(s.Timed), true
}
