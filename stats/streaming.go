package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/driver"
)

// StreamingStats is what the client measured of a decoupled model's
// responses (an LLM's tokens, when one response is one token), over the
// successful requests of a span. The request latency to the final response
// is ClientStats.Latency.
type StreamingStats struct {
	// Requests counts the successful requests whose responses were timed.
	Requests int64 `json:"requests"`
	// Responses counts their responses with outputs (an empty final
	// response is none): output tokens when a response is a token.
	Responses int64 `json:"responses"`
	// ResponsesPerS is Responses over the span's duration.
	ResponsesPerS float64 `json:"responses_per_s"`
	// PerRequest is the distribution of responses per request.
	PerRequest Counts `json:"responses_per_request"`
	// TTFT is the time from send to the first response (time to first
	// token), over requests that had one.
	TTFT Latency `json:"ttft"`
	// ITL is the time between consecutive responses of a request
	// (inter-token latency), one value per gap.
	ITL Latency `json:"itl"`
	// TTFTScheduled is the time to first response from the request's
	// scheduled time, in open loop (coordinated omission, as the request
	// latency from the schedule); nil in closed loop.
	TTFTScheduled *Latency `json:"ttft_from_schedule,omitempty"`
	// OutputTokens counts their output tokens (driver.ResponseTiming's
	// Tokens): the server's count where it sent one (a text endpoint's
	// usage), else one per response of a model that generates text; 0 for
	// a model whose responses are not tokens (a decoupled model without a
	// text_input), which then has no token throughput anywhere.
	// OutputTokensPerS is OutputTokens over the span's duration.
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	OutputTokensPerS float64 `json:"output_tokens_per_s,omitempty"`
	// Goodput counts the requests that met every --slo at once (Goodput);
	// nil when none was given.
	Goodput *GoodputStats `json:"goodput,omitempty"`
}

// Counts summarizes a distribution of counts (responses per request).
type Counts struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P95   int64   `json:"p95"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
}

// streamTally is the streaming counters of a span, part of its tally.
// Response counts are kept in extremes as plain numbers in a Duration.
type streamTally struct {
	seen      bool // the span had results of a decoupled model
	requests  int64
	responses int64
	tokens    int64
	ttft      extremes
	itl       extremes
	perReq    extremes
	// ttftSched is the time to first response from the schedule; open is
	// set once a request was scheduled apart from its send (open loop).
	ttftSched extremes
	open      bool
	// good counts the requests that met the span's goodput objectives;
	// goodput is set when there were any.
	good    int64
	goodput bool
}

func (t *streamTally) merge(o *streamTally) {
	t.seen = t.seen || o.seen
	t.requests += o.requests
	t.responses += o.responses
	t.tokens += o.tokens
	t.ttft.merge(o.ttft)
	t.itl.merge(o.itl)
	t.perReq.merge(o.perReq)
	t.ttftSched.merge(o.ttftSched)
	t.open = t.open || o.open
	t.good += o.good
	t.goodput = t.goodput || o.goodput
}

// streamHists are a span's histograms of a decoupled model's responses:
// time to first response and gaps in µs, responses per request as counts.
// Spans of other models never allocate them.
type streamHists struct {
	ttft, itl, perReq, ttftSched *hdrhistogram.Histogram
}

func newStreamHists() *streamHists {
	return &streamHists{ttft: newHistogram(), itl: newHistogram(), perReq: newHistogram(), ttftSched: newHistogram()}
}

func (h *streamHists) reset() {
	h.ttft.Reset()
	h.itl.Reset()
	h.perReq.Reset()
	h.ttftSched.Reset()
}

// packedStreamHists are streamHists kept in the window ring.
type packedStreamHists struct {
	ttft, itl, perReq, ttftSched *hdrhistogram.PackedHistogram
}

func newPackedStreamHists() *packedStreamHists {
	return &packedStreamHists{ttft: newPacked(), itl: newPacked(), perReq: newPacked(), ttftSched: newPacked()}
}

// set replaces p's contents with h's (an empty set when h is nil).
func (p *packedStreamHists) set(h *streamHists) {
	p.ttft.Reset()
	p.itl.Reset()
	p.perReq.Reset()
	p.ttftSched.Reset()
	if h != nil {
		p.ttft.MergeFrom(h.ttft)
		p.itl.MergeFrom(h.itl)
		p.perReq.MergeFrom(h.perReq)
		p.ttftSched.MergeFrom(h.ttftSched)
	}
}

// mergeInto adds p's counts to h.
func (p *packedStreamHists) mergeInto(h *streamHists) {
	p.ttft.MergeInto(h.ttft)
	p.itl.MergeInto(h.itl)
	p.perReq.MergeInto(h.perReq)
	p.ttftSched.MergeInto(h.ttftSched)
}

// countValue converts a count to a histogram value, clamped into range.
func countValue(n int64) int64 { return min(max(n, 0), histogramMax) }

// addStream counts the responses of a successful request to a decoupled
// model. Like the rest of the per-result path it takes no lock; it
// allocates only the span's histograms, once.
func (sp *span) addStream(r *driver.Result) {
	if sp.stream == nil {
		sp.stream = newStreamHists()
	}
	st := &sp.t.stream
	st.requests++
	st.responses += int64(r.Responses)
	if r.Timing != nil {
		st.tokens += int64(r.Timing.Tokens)
	}
	st.perReq.add(time.Duration(r.Responses))
	_ = sp.stream.perReq.RecordValue(countValue(int64(r.Responses)))
	if g := sp.goodput; g != nil {
		st.goodput = true
		if g.met(r) {
			st.good++
		}
	}
	if r.Timing == nil || r.Timing.First == 0 && len(r.Timing.Gaps) == 0 {
		return
	}
	ttft := max(r.Timing.First-r.Sent, 0)
	st.ttft.add(ttft)
	_ = sp.stream.ttft.RecordValue(histogramValue(ttft))
	if r.Scheduled != r.Sent {
		st.open = true
	}
	sched := max(r.Timing.First-r.Scheduled, 0)
	st.ttftSched.add(sched)
	_ = sp.stream.ttftSched.RecordValue(histogramValue(sched))
	for _, g := range r.Timing.Gaps {
		g = max(g, 0)
		st.itl.add(g)
		_ = sp.stream.itl.RecordValue(histogramValue(g))
	}
}

// streamingStats builds a span's StreamingStats over duration d; h may be
// nil when the span timed no response.
func (t *streamTally) streamingStats(d time.Duration, h *streamHists) *StreamingStats {
	s := &StreamingStats{Requests: t.requests, Responses: t.responses, OutputTokens: t.tokens, Goodput: goodputStats(t.goodput, t.good, d)}
	if secs := d.Seconds(); secs > 0 {
		s.ResponsesPerS = float64(t.responses) / secs
		s.OutputTokensPerS = float64(t.tokens) / secs
	}
	if h != nil {
		s.TTFT = latency(h.ttft, t.ttft)
		s.ITL = latency(h.itl, t.itl)
		if t.open {
			l := latency(h.ttftSched, t.ttftSched)
			s.TTFTScheduled = &l
		}
		s.PerRequest = counts(h.perReq, t.perReq)
	}
	return s
}

// counts summarizes a histogram of counts with the exact min, max and mean
// of e, percentiles clamped into [min, max].
func counts(h *hdrhistogram.Histogram, e extremes) Counts {
	if e.count == 0 || h.TotalCount() == 0 {
		return Counts{}
	}
	c := Counts{Count: h.TotalCount(), Min: int64(e.min), Max: int64(e.max),
		Mean: float64(e.sum) / float64(e.count)}
	setCountPercentiles(&c, h)
	return c
}

func setCountPercentiles(c *Counts, h *hdrhistogram.Histogram) {
	v := h.ValueAtPercentilesSlice(latencyPercentiles[:])
	c.P50, c.P90, c.P95, c.P99, c.P999 = v[0], v[1], v[2], v[3], v[4]
	for _, p := range []*int64{&c.P50, &c.P90, &c.P95, &c.P99, &c.P999} {
		*p = min(max(*p, c.Min), c.Max)
	}
}

// CountsFromHistogram summarizes a histogram of counts, as decoded from a
// Snapshot's ResponsesHistogram. Min, max and mean are the histogram's
// (exact for counts under 2048, within 3 significant digits above).
func CountsFromHistogram(h *hdrhistogram.Histogram) Counts {
	if h == nil || h.TotalCount() == 0 {
		return Counts{}
	}
	c := Counts{Count: h.TotalCount(), Min: h.Min(), Max: h.Max(), Mean: h.Mean()}
	setCountPercentiles(&c, h)
	return c
}

// Add adds o's counters to s; rates and distributions are left alone (see
// ClientStats.Add).
func (s *StreamingStats) Add(o *StreamingStats) {
	s.Requests += o.Requests
	s.Responses += o.Responses
	s.OutputTokens += o.OutputTokens
	addGoodput(&s.Goodput, o.Goodput)
}

// CountsMerge adds up the Counts of several spans, exactly through their
// histograms when every span with requests carries one, otherwise by
// weighting each span's percentiles by its count. The zero value is ready
// to use.
type CountsMerge struct {
	count    int64
	min, max int64
	sum      float64
	hist     *hdrhistogram.Histogram
	missing  bool
	pct      [5]float64
}

// Add includes one span's counts and its histogram in a Snapshot's
// encoding ("" when the span stored none).
func (m *CountsMerge) Add(c Counts, encoded string) {
	if c.Count <= 0 {
		return
	}
	if m.missing {
		m.addSummary(c)
		return
	}
	h, err := DecodeHistogram(encoded)
	if err != nil || encoded == "" {
		h = nil
	}
	m.AddDecoded(c, h)
}

// AddDecoded is Add with the span's histogram already decoded (nil when
// the span stored none).
func (m *CountsMerge) AddDecoded(c Counts, h *hdrhistogram.Histogram) {
	if c.Count <= 0 {
		return
	}
	m.addSummary(c)
	if m.missing {
		return
	}
	if h == nil || h.TotalCount() == 0 {
		m.missing, m.hist = true, nil
		return
	}
	if m.hist == nil {
		m.hist = newHistogram()
	}
	m.hist.Merge(h)
}

// addSummary includes one span's count, extremes, mean and percentiles.
func (m *CountsMerge) addSummary(c Counts) {
	if m.count == 0 || c.Min < m.min {
		m.min = c.Min
	}
	m.max = max(m.max, c.Max)
	m.count += c.Count
	n := float64(c.Count)
	m.sum += c.Mean * n
	for i, p := range [...]int64{c.P50, c.P90, c.P95, c.P99, c.P999} {
		m.pct[i] += float64(p) * n
	}
}

// Histogram returns the merged histogram of counts, nil when a span lacked
// one or none was added. The caller must not modify it.
func (m *CountsMerge) Histogram() *hdrhistogram.Histogram {
	if m.missing {
		return nil
	}
	return m.hist
}

// Counts returns the merged counts and whether the percentiles are
// approximate (a span lacked a histogram).
func (m *CountsMerge) Counts() (Counts, bool) {
	if m.count == 0 {
		return Counts{}, false
	}
	c := Counts{Count: m.count, Min: m.min, Max: m.max, Mean: m.sum / float64(m.count)}
	approx := m.missing || m.hist == nil
	if !approx {
		setCountPercentiles(&c, m.hist)
		return c, false
	}
	n := float64(m.count)
	for i, p := range []*int64{&c.P50, &c.P90, &c.P95, &c.P99, &c.P999} {
		*p = min(max(int64(math.Round(m.pct[i]/n)), c.Min), c.Max)
	}
	return c, true
}

// encodeStream returns the tick's streaming histograms in a Snapshot's
// encoding ("" for those without values).
func encodeStream(h *streamHists) (ttft, itl, perReq string, err error) {
	if h == nil {
		return "", "", "", nil
	}
	if ttft, err = encodeHistogram(h.ttft); err != nil {
		return "", "", "", fmt.Errorf("time to first response: %w", err)
	}
	if itl, err = encodeHistogram(h.itl); err != nil {
		return "", "", "", fmt.Errorf("inter-response latency: %w", err)
	}
	if perReq, err = encodeHistogram(h.perReq); err != nil {
		return "", "", "", fmt.Errorf("responses per request: %w", err)
	}
	return ttft, itl, perReq, nil
}
