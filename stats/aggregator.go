package stats

import (
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/driver"
)

// Aggregator turns the driver's Results into the client half of a Snapshot:
// this tick, the last WindowLength and the whole run. One goroutine owns it
// and calls Add and Tick; SetWindow and ResetWindows may be called from any
// goroutine and take effect at the next Tick.
//
// Latency histograms hold microseconds with 3 significant digits over
// 1 µs..1 h. Min, max and mean are kept exactly beside them.
type Aggregator struct {
	interval time.Duration

	// cur is the tick being counted. While a tick boundary is set (split),
	// results done at or after it go to next instead: the tick that
	// follows the one about to be cut.
	cur, next *span
	split     time.Duration
	splitting bool
	samples   errorSamples
	msgs      errorMessages

	win       *window
	winLength time.Duration

	run       tally
	runDur    time.Duration
	runHist   *hdrhistogram.Histogram
	runSched  *hdrhistogram.Histogram
	runStream *streamHists            // nil until a decoupled model's results come
	runSeq    *hdrhistogram.Histogram // nil until a sequence ends

	// decoupled makes every span report StreamingStats, even one in which
	// no request of the decoupled model finished.
	decoupled atomic.Bool
	// epMsgs are each replica's latest error messages (SetEndpoints).
	epMsgs []errorMessages

	// Requests from other goroutines, applied by Tick.
	newWindow atomic.Int64 // nanoseconds; 0 when none is pending
	resetReq  atomic.Bool
	levelReq  atomic.Bool
}

// NewAggregator returns an Aggregator for ticks of the given interval and a
// sliding window of the given length (rounded up to whole ticks). Zero or
// negative values take the defaults: 1 s ticks, a 10 s window.
func NewAggregator(interval, windowLength time.Duration) *Aggregator {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if windowLength <= 0 {
		windowLength = DefaultWindow
	}
	a := &Aggregator{
		interval:  interval,
		cur:       newSpan(),
		next:      newSpan(),
		runHist:   newHistogram(),
		runSched:  newHistogram(),
		winLength: windowLength,
	}
	a.win = newWindow(a.windowTicks(windowLength))
	return a
}

// windowTicks is the number of ticks that cover d.
func (a *Aggregator) windowTicks(d time.Duration) int {
	return int((d + a.interval - 1) / a.interval)
}

// SetWindow changes the sliding window's length from the next tick on. The
// ticks already kept stay in the window as far as they fit.
func (a *Aggregator) SetWindow(d time.Duration) {
	if d > 0 {
		a.newWindow.Store(int64(d))
	}
}

// ResetWindows empties the sliding window and the whole-run totals at the
// next tick, so that both start again from that tick.
func (a *Aggregator) ResetWindows() { a.resetReq.Store(true) }

// StartLevel says that the next tick is the first at a new load level (a
// step, a key press): the sliding window restarts with it, so that it never
// blends two levels' latencies. The whole-run totals go on.
func (a *Aggregator) StartLevel() { a.levelReq.Store(true) }

// SetDecoupled says that the model is decoupled: every tick, window and
// run then carries ClientStats.Streaming, zero while no request finished,
// so that readers can tell a decoupled run from its first tick on. Without
// it Streaming appears once a decoupled model's result is counted.
func (a *Aggregator) SetDecoupled() { a.decoupled.Store(true) }

// SetEndpoints makes the aggregator count the results of each of n
// replicas apart as well (Result.Endpoint), for Snapshot.Replicas' Tick
// and Histogram. Call it before the first Add.
func (a *Aggregator) SetEndpoints(n int) {
	if n <= 0 {
		return
	}
	a.epMsgs = make([]errorMessages, n)
	for _, sp := range []*span{a.cur, a.next} {
		sp.ep = make([]endpointSpan, n)
		for i := range sp.ep {
			sp.ep[i].hist = newHistogram()
		}
	}
}

// span is the results of one tick: its counters and latency histograms.
type span struct {
	t      tally
	hist   *hdrhistogram.Histogram
	sched  *hdrhistogram.Histogram
	stream *streamHists            // nil until the span counts a decoupled model's result
	seq    *hdrhistogram.Histogram // nil until a sequence ends in the span
	ep     []endpointSpan
	// goodput, when set, is what a good request meets (SetGoodput).
	goodput *Goodput
}

// endpointSpan is one replica's share of a span.
type endpointSpan struct {
	t       tally
	hist    *hdrhistogram.Histogram
	samples errorSamples
}

// addEndpoint counts a result in its replica's share too.
func (sp *span) addEndpoint(r *driver.Result) {
	i := int(r.Endpoint)
	if i >= len(sp.ep) {
		return
	}
	e := &sp.ep[i]
	if !e.t.addResult(r, &e.samples) {
		return
	}
	lat := max(r.Done-r.Sent, 0)
	e.t.latency.add(lat)
	_ = e.hist.RecordValue(histogramValue(lat))
}

func newSpan() *span { return &span{hist: newHistogram(), sched: newHistogram()} }

// add counts one result into the span.
func (sp *span) add(r *driver.Result, samples *errorSamples) {
	if sp.ep != nil {
		sp.addEndpoint(r)
	}
	if !sp.t.addResult(r, samples) {
		return
	}
	lat := max(r.Done-r.Sent, 0)
	sp.t.latency.add(lat)
	// Recording cannot fail: histogramValue clamps into range.
	_ = sp.hist.RecordValue(histogramValue(lat))
	sched := max(r.Done-r.Scheduled, 0)
	sp.t.sched.add(sched)
	_ = sp.sched.RecordValue(histogramValue(sched))
	if r.Decoupled {
		sp.addStream(r)
	}
	if r.SequenceLatency() > 0 {
		sp.addSequence(r)
	}
}

// reset empties the span for reuse.
func (sp *span) reset() {
	sp.t = tally{}
	sp.hist.Reset()
	sp.sched.Reset()
	if sp.stream != nil {
		sp.stream.reset()
	}
	if sp.seq != nil {
		sp.seq.Reset()
	}
	for i := range sp.ep {
		sp.ep[i].t = tally{}
		sp.ep[i].hist.Reset()
	}
}

// Add counts a batch of finished requests. It does not allocate and takes no
// lock; the batch may be reused by the caller once Add returns.
func (a *Aggregator) Add(batch []driver.Result) {
	for i := range batch {
		r := &batch[i]
		sp := a.cur
		if a.splitting && r.Done >= a.split {
			sp = a.next
		}
		sp.add(r, &a.samples)
	}
}

// Split sets the end of the current tick at boundary, an offset on the
// results' clock: until the next Tick, results done at or after it are
// counted in the tick after, so that Tick can be called a little later and
// still take the results done before boundary that arrive meanwhile.
func (a *Aggregator) Split(boundary time.Duration) {
	a.split, a.splitting = boundary, true
}

// Tick closes the current tick, which lasted d, and fills the client fields
// of s: Tick, Window, WindowLength, Run, Histogram and ScheduledHistogram,
// and with SetEndpoints each replica's Tick and Histogram in Replicas.
// rateMode marks the tick as open loop even if no result showed a schedule
// different from its send. The error is an encoding failure; the Snapshot is
// complete apart from the histogram strings. After Split, the results done
// past the boundary are not part of this tick but start the next one.
func (a *Aggregator) Tick(d time.Duration, rateMode bool, s *Snapshot) error {
	a.applyControls()
	cur := a.cur
	cur.t.openLoop = cur.t.openLoop || rateMode
	a.samples.drain(&a.msgs)

	s.Tick = a.stats(&cur.t, d, cur.hist, cur.sched, cur.stream, cur.seq)
	hist, err := encodeHistogram(cur.hist)
	var schedHist string
	if err == nil && cur.t.openLoop {
		schedHist, err = encodeHistogram(cur.sched)
	}
	s.Histogram, s.ScheduledHistogram = hist, schedHist
	if err == nil && cur.t.stream.seen {
		s.TTFTHistogram, s.ITLHistogram, s.ResponsesHistogram, err = encodeStream(cur.stream)
		if err == nil && cur.t.stream.open {
			s.TTFTScheduledHistogram, err = encodeHistogram(cur.stream.ttftSched)
		}
	}
	if err == nil && cur.t.seq.count > 0 {
		s.SequenceHistogram, err = encodeHistogram(cur.seq)
	}

	slot := a.win.push(d, &cur.t, cur.hist, cur.sched, cur.stream, cur.seq)
	wd, wt := a.win.merge()
	s.Window = a.stats(&wt, wd, a.win.hist, a.win.sched, a.win.stream, a.win.seq)
	s.WindowLength = a.winLength

	a.run.merge(&cur.t)
	a.runDur += d
	slot.hist.MergeInto(a.runHist)
	slot.sched.MergeInto(a.runSched)
	if slot.stream != nil {
		if a.runStream == nil {
			a.runStream = newStreamHists()
		}
		slot.stream.mergeInto(a.runStream)
	}
	if slot.seq != nil {
		if a.runSeq == nil {
			a.runSeq = newHistogram()
		}
		slot.seq.MergeInto(a.runSeq)
	}
	s.Run = a.stats(&a.run, a.runDur, a.runHist, a.runSched, a.runStream, a.runSeq)
	if cur.ep != nil {
		s.Replicas = make([]Replica, len(cur.ep))
		for i := range cur.ep {
			e := &cur.ep[i]
			e.samples.drain(&a.epMsgs[i])
			r := &s.Replicas[i]
			r.Tick = e.t.clientStats(d, &a.epMsgs[i])
			r.Tick.Latency = latency(e.hist, e.t.latency)
			h, herr := encodeHistogram(e.hist)
			if err == nil {
				err = herr
			}
			r.Histogram = h
		}
	}

	cur.reset()
	if a.splitting {
		// The results already counted past the boundary open the new tick.
		a.cur, a.next = a.next, cur
		a.splitting = false
	}
	return err
}

// applyControls applies SetWindow and ResetWindows requests.
func (a *Aggregator) applyControls() {
	if d := time.Duration(a.newWindow.Swap(0)); d > 0 {
		a.winLength = d
		a.win.resize(a.windowTicks(d))
	}
	if a.levelReq.Swap(false) {
		a.win.reset()
	}
	if a.resetReq.Swap(false) {
		a.win.reset()
		a.run = tally{}
		a.runDur = 0
		a.runHist.Reset()
		a.runSched.Reset()
		if a.runStream != nil {
			a.runStream.reset()
		}
		if a.runSeq != nil {
			a.runSeq.Reset()
		}
	}
}

// stats builds ClientStats for a span from its counters and histograms.
func (a *Aggregator) stats(t *tally, d time.Duration, hist, sched *hdrhistogram.Histogram, stream *streamHists,
	seq *hdrhistogram.Histogram) ClientStats {
	s := t.clientStats(d, &a.msgs)
	s.Latency = latency(hist, t.latency)
	if t.openLoop {
		l := latency(sched, t.sched)
		s.Scheduled = &l
	}
	if t.stream.seen || a.decoupled.Load() {
		s.Streaming = t.stream.streamingStats(d, stream)
	}
	s.Sequences = sequenceStats(t.seq, d, seq)
	return s
}
