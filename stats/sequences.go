package stats

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/driver"
)

// SequenceStats is what the client measured of a stateful model's
// sequences (driver.Options.Sequences) over a span: those that ended in
// it, their last request successful. A span in which none ended has none.
type SequenceStats struct {
	// Ended counts the sequences that ended in the span.
	Ended int64 `json:"ended"`
	// EndedPerS is Ended over the span's duration.
	EndedPerS float64 `json:"ended_per_s"`
	// Latency is the sequence latency: from a sequence's first send to
	// its last response.
	Latency Latency `json:"latency"`
}

// Add adds o's count to s; latency only histograms can add (see
// LatencyMerge), and the rate is SetRates'.
func (s *SequenceStats) Add(o *SequenceStats) { s.Ended += o.Ended }

// addSequence counts a sequence that ended with r. Like the rest of the
// per-result path it takes no lock; it allocates only the span's
// histogram, once.
func (sp *span) addSequence(r *driver.Result) {
	if sp.seq == nil {
		sp.seq = newHistogram()
	}
	sp.t.seq.add(r.SequenceLatency())
	_ = sp.seq.RecordValue(histogramValue(r.SequenceLatency()))
}

// sequenceStats is a span's SequenceStats, nil when no sequence ended in
// it.
func sequenceStats(e extremes, d time.Duration, h *hdrhistogram.Histogram) *SequenceStats {
	if e.count == 0 || h == nil {
		return nil
	}
	s := &SequenceStats{Ended: e.count, Latency: latency(h, e)}
	if secs := d.Seconds(); secs > 0 {
		s.EndedPerS = float64(e.count) / secs
	}
	return s
}

// packedInto replaces p's contents with h's (none when h is nil),
// allocating p when h has values; it returns p.
func packedInto(p *hdrhistogram.PackedHistogram, h *hdrhistogram.Histogram) *hdrhistogram.PackedHistogram {
	if p == nil && (h == nil || h.TotalCount() == 0) {
		return nil
	}
	if p == nil {
		p = newPacked()
	}
	p.Reset()
	if h != nil {
		p.MergeFrom(h)
	}
	return p
}
