package stats

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// windowSlot is one tick kept for the sliding window. Its histograms are
// sparse, so a slot costs memory in proportion to the distinct latencies of
// its tick, not the histogram's range.
type windowSlot struct {
	dur    time.Duration
	t      tally
	hist   *hdrhistogram.PackedHistogram
	sched  *hdrhistogram.PackedHistogram
	stream *packedStreamHists            // nil until a tick had a decoupled model's results
	seq    *hdrhistogram.PackedHistogram // nil until a sequence ended in a tick
}

// window is a ring of the last ticks. Merging its slots gives exactly the
// histogram that recording every value of those ticks would give, because
// all histograms share one geometry and merging adds bucket counts. Memory
// depends on the window's length in ticks, never on the run's.
type window struct {
	slots []windowSlot
	next  int // the slot the next push fills
	n     int // filled slots
	// hist and sched are the merged histograms, reused every tick; stream
	// too, once a tick had a decoupled model's results.
	hist   *hdrhistogram.Histogram
	sched  *hdrhistogram.Histogram
	stream *streamHists
	seq    *hdrhistogram.Histogram
}

// newWindow returns an empty window of the given number of ticks (at least 1).
func newWindow(ticks int) *window {
	w := &window{hist: newHistogram(), sched: newHistogram()}
	w.resize(ticks)
	return w
}

// resize changes the window's length, keeping the most recent slots that fit.
func (w *window) resize(ticks int) {
	ticks = max(ticks, 1)
	if ticks == len(w.slots) {
		return
	}
	keep := min(w.n, ticks)
	slots := make([]windowSlot, ticks)
	for i := range keep {
		// The i-th most recent slot goes to the end of the new ring.
		old := (w.next - 1 - i + 2*len(w.slots)) % len(w.slots)
		slots[keep-1-i] = w.slots[old]
	}
	w.slots = slots
	w.n = keep
	w.next = keep % ticks
}

// push adds a finished tick, dropping the oldest slot when the ring is full,
// and returns the slot it filled.
func (w *window) push(dur time.Duration, t *tally, hist, sched *hdrhistogram.Histogram, stream *streamHists,
	seq *hdrhistogram.Histogram) *windowSlot {
	s := &w.slots[w.next]
	if s.hist == nil {
		s.hist, s.sched = newPacked(), newPacked()
	}
	s.dur = dur
	s.t = *t
	s.hist.Reset()
	s.hist.MergeFrom(hist)
	s.sched.Reset()
	s.sched.MergeFrom(sched)
	if stream != nil && s.stream == nil {
		s.stream = newPackedStreamHists()
	}
	if s.stream != nil {
		s.stream.set(stream)
	}
	s.seq = packedInto(s.seq, seq)
	w.next = (w.next + 1) % len(w.slots)
	w.n = min(w.n+1, len(w.slots))
	return s
}

// reset empties the window, keeping its length and storage.
func (w *window) reset() {
	w.n = 0
	w.next = 0
}

// merge sums the filled slots into w.hist, w.sched and the returned duration
// and counters.
func (w *window) merge() (time.Duration, tally) {
	var d time.Duration
	var t tally
	w.hist.Reset()
	w.sched.Reset()
	if w.stream != nil {
		w.stream.reset()
	}
	if w.seq != nil {
		w.seq.Reset()
	}
	for i := range w.n {
		s := &w.slots[(w.next-1-i+2*len(w.slots))%len(w.slots)]
		d += s.dur
		t.merge(&s.t)
		s.hist.MergeInto(w.hist)
		s.sched.MergeInto(w.sched)
		if s.stream != nil {
			if w.stream == nil {
				w.stream = newStreamHists()
			}
			s.stream.mergeInto(w.stream)
		}
		if s.seq != nil {
			if w.seq == nil {
				w.seq = newHistogram()
			}
			s.seq.MergeInto(w.seq)
		}
	}
	return d, t
}
