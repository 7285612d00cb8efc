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

	cur       tally
	samples   errorSamples
	msgs      errorMessages
	tickHist  *hdrhistogram.Histogram
	tickSched *hdrhistogram.Histogram

	win       *window
	winLength time.Duration

	run      tally
	runDur   time.Duration
	runHist  *hdrhistogram.Histogram
	runSched *hdrhistogram.Histogram

	// Requests from other goroutines, applied by Tick.
	newWindow atomic.Int64 // nanoseconds; 0 when none is pending
	resetReq  atomic.Bool
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
		tickHist:  newHistogram(),
		tickSched: newHistogram(),
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

// Add counts a batch of finished requests. It does not allocate and takes no
// lock; the batch may be reused by the caller once Add returns.
func (a *Aggregator) Add(batch []driver.Result) {
	for i := range batch {
		r := &batch[i]
		if !a.cur.addResult(r, &a.samples) {
			continue
		}
		lat := max(r.Done-r.Sent, 0)
		a.cur.latency.add(lat)
		// Recording cannot fail: histogramValue clamps into range.
		_ = a.tickHist.RecordValue(histogramValue(lat))
		sched := max(r.Done-r.Scheduled, 0)
		a.cur.sched.add(sched)
		_ = a.tickSched.RecordValue(histogramValue(sched))
	}
}

// Tick closes the current tick, which lasted d, and fills the client fields
// of s: Tick, Window, WindowLength, Run, Histogram and ScheduledHistogram.
// rateMode marks the tick as open loop even if no result showed a schedule
// different from its send. The error is an encoding failure; the Snapshot is
// complete apart from the histogram strings.
func (a *Aggregator) Tick(d time.Duration, rateMode bool, s *Snapshot) error {
	a.applyControls()
	a.cur.openLoop = a.cur.openLoop || rateMode
	a.samples.drain(&a.msgs)

	s.Tick = a.stats(&a.cur, d, a.tickHist, a.tickSched)
	hist, err := encodeHistogram(a.tickHist)
	var schedHist string
	if err == nil && a.cur.openLoop {
		schedHist, err = encodeHistogram(a.tickSched)
	}
	s.Histogram, s.ScheduledHistogram = hist, schedHist

	slot := a.win.push(d, &a.cur, a.tickHist, a.tickSched)
	wd, wt := a.win.merge()
	s.Window = a.stats(&wt, wd, a.win.hist, a.win.sched)
	s.WindowLength = a.winLength

	a.run.merge(&a.cur)
	a.runDur += d
	slot.hist.MergeInto(a.runHist)
	slot.sched.MergeInto(a.runSched)
	s.Run = a.stats(&a.run, a.runDur, a.runHist, a.runSched)

	a.cur = tally{}
	a.tickHist.Reset()
	a.tickSched.Reset()
	return err
}

// applyControls applies SetWindow and ResetWindows requests.
func (a *Aggregator) applyControls() {
	if d := time.Duration(a.newWindow.Swap(0)); d > 0 {
		a.winLength = d
		a.win.resize(a.windowTicks(d))
	}
	if a.resetReq.Swap(false) {
		a.win.reset()
		a.run = tally{}
		a.runDur = 0
		a.runHist.Reset()
		a.runSched.Reset()
	}
}

// stats builds ClientStats for a span from its counters and histograms.
func (a *Aggregator) stats(t *tally, d time.Duration, hist, sched *hdrhistogram.Histogram) ClientStats {
	s := t.clientStats(d, &a.msgs)
	s.Latency = latency(hist, t.latency)
	if t.openLoop {
		l := latency(sched, t.sched)
		s.Scheduled = &l
	}
	return s
}
