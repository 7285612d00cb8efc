package driver

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/load"
)

// run is the state of one Run: the pacer (which is Run's own goroutine), the
// workers it starts, and the streams they share.
type run struct {
	d         *Driver
	start     time.Time       // the driver's epoch: Result offsets count from it
	reqCtx    context.Context // every request's context; cancelled at the end
	cancelReq context.CancelFunc
	quit      chan struct{} // closed when no new request may start
	tickets   chan ticket

	workers workerTable    // written by the pacer only
	closed  int            // closed-loop workers started
	open    int            // open-loop workers started
	idle    atomic.Int32   // open-loop workers waiting for a ticket
	wg      sync.WaitGroup // workers

	streams  []*stream
	streamWG sync.WaitGroup // stream receivers

	seqs *sequencer // the driver's, nil unless it runs sequences

	planHits uint64 // a rate plan's hits issued before the current segment
}

// segment is a stretch of open-loop pacing with one rate; any change of the
// run state starts a new one, so a new rate applies from the next tick and
// a resume does not catch up on paused time.
type segment struct {
	gen   uint64
	began time.Duration
	hits  uint64
	pacer Pacer
}

// Run generates load until ctx is done or Stop is called, then waits for the
// requests in flight (at most Stop's drain, none when ctx is done), delivers
// their results, and closes Results. It returns nil after a normal end and an
// error only when the load could not start (a stream could not open). Run
// may be called once.
func (d *Driver) Run(ctx context.Context) error {
	if !d.started.CompareAndSwap(false, true) {
		return errors.New("driver: Run called twice")
	}
	defer close(d.results)
	r := &run{
		d:       d,
		start:   d.epoch,
		quit:    make(chan struct{}),
		tickets: make(chan ticket),
		seqs:    d.seqs,
	}
	r.reqCtx, r.cancelReq = context.WithCancel(ctx)
	defer r.cancelReq()
	if d.opts.Streaming {
		if err := r.openStreams(); err != nil {
			r.cancelReq()
			r.streamWG.Wait()
			return err
		}
	}
	flushDone := make(chan struct{})
	stopFlush := make(chan struct{})
	go r.flushLoop(stopFlush, flushDone)

	drain := r.pace(ctx)
	close(r.quit)

	idle := make(chan struct{})
	go func() { r.wg.Wait(); close(idle) }()
	t := time.NewTimer(drain)
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done(): // ends a drain under way too
	}
	t.Stop()
	r.cancelReq() // the rest become Cancelled results
	<-idle
	for _, s := range r.streams {
		s.close()
	}
	r.streamWG.Wait()
	close(stopFlush)
	<-flushDone
	return nil
}

func (r *run) now() time.Duration { return time.Since(r.start) }

// pace is the pacer loop: it follows the run state, starts closed-loop
// workers, issues open-loop tickets, and returns the drain allowed for the
// requests in flight when it is time to stop.
func (r *run) pace(ctx context.Context) time.Duration {
	d := r.d
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var fine *fineTimer
	if !d.opts.CoarseTimer {
		if fine = newFineTimer(); fine != nil {
			defer fine.close()
		}
	}
	seg := segment{gen: ^uint64(0)}
	wasPaused := false // a pause since the last segment began
	for {
		select {
		case <-d.stopReq:
			return time.Duration(d.drain.Load())
		case <-ctx.Done():
			return 0
		default:
		}
		now := r.now()
		st := d.state.Load()
		if st.draining {
			// Stop marks the state draining just before it closes stopReq:
			// a wake in between must not start a segment and send its
			// first hit after the stop. The pacer waits for stopReq, which
			// Stop closes once the change's listeners have heard of the
			// drain, so that Run ends after them.
			select {
			case <-d.stopReq:
				return time.Duration(d.drain.Load())
			case <-ctx.Done():
				return 0
			}
		}
		wait := time.Duration(-1) // until the next tick; -1: none
		planWait := time.Duration(-1)
		if d.opts.Plan != nil {
			var changed bool
			if planWait, changed = r.followPlan(now, st); changed {
				continue
			}
		}
		if d.opts.Schedule != nil && !st.plan.started {
			r.startSchedule(now)
			continue
		}
		if !st.paused && st.load.Mode == load.Rate {
			if seg.gen != st.gen {
				seg = segment{gen: st.gen, began: now, pacer: r.segmentPacer(now, st, &seg, wasPaused)}
			}
			wasPaused = false
			w, stop := seg.pacer.Pace(now-seg.began, seg.hits)
			// now+w is the hit's scheduled time, even when the pacer itself
			// is late.
			if !stop && w <= 0 {
				if r.dispatch(ctx, ticket{at: now + w, req: r.requestOf(seg.hits)}, st) {
					seg.hits++
				}
				continue
			}
			if !stop && w > 0 {
				wait = w
			}
			if stop && r.planPacerDone(now, st) {
				continue
			}
		}
		wasPaused = wasPaused || st.paused
		if !st.paused && st.load.Mode == load.Concurrency {
			r.ensureClosed(ctx, st.concurrency(d.opts.Plan != nil), st.wake)
		}
		if planWait >= 0 && (wait < 0 || planWait < wait) {
			wait = planWait
		}
		// A wait is on the timerfd (fineTimer), which wakes on time on an
		// idle host, and on a Go timer as well: the runtime looks at its
		// poller only when a P runs out of work, and at its timers at
		// every switch, so on a busy host the Go timer is the one on time.
		var tick <-chan time.Time
		var fineTick <-chan struct{}
		if wait >= 0 {
			timer.Reset(wait)
			tick = timer.C
			if fine != nil {
				fine.reset(wait)
				fineTick = fine.C
			}
		}
		fineFired := false
		select {
		case <-st.wake:
		case <-tick:
		case <-fineTick:
			fineFired = true
		case <-d.stopReq:
		case <-ctx.Done():
		}
		timer.Stop()
		if fineTick != nil && !fineFired {
			fine.stop()
		}
	}
}

// dispatch hands one open-loop ticket to a free worker without waiting for
// one: when none is free it starts another, as vegeta does. Only when
// MaxInFlight caps the workers does it wait, and the wait shows as the
// send's lateness. It reports false when a change of state, Stop or ctx
// dropped the ticket.
func (r *run) dispatch(ctx context.Context, scheduled ticket, st *runState) bool {
	select {
	case r.tickets <- scheduled:
		r.idle.Add(-1)
		return true
	default:
	}
	// Workers just handed tickets may be about to finish and wait again
	// (a fast server): letting them run first keeps an overloaded pacer
	// from starting a goroutine per ticket.
	if r.idle.Load() == 0 {
		runtime.Gosched()
		select {
		case r.tickets <- scheduled:
			r.idle.Add(-1)
			return true
		default:
		}
	}
	// A worker about to take a ticket is not worth a new goroutine.
	if c := st.load.MaxInFlight; r.idle.Load() == 0 && (c == 0 || r.open < c) {
		r.spawn(true, r.open)
		r.open++
	}
	select {
	case r.tickets <- scheduled:
		r.idle.Add(-1)
		return true
	case <-st.wake:
	case <-r.d.stopReq:
	case <-ctx.Done():
	}
	return false
}

// ensureClosed starts closed-loop workers up to n. Starting many takes a
// while, so it stops to see whether the run was told to stop or the load
// changed: a stop is never held up by workers it no longer needs.
func (r *run) ensureClosed(ctx context.Context, n int, wake <-chan struct{}) {
	for r.closed < n {
		if r.closed%256 == 255 {
			select {
			case <-r.d.stopReq:
				return
			case <-ctx.Done():
				return
			case <-wake:
				return
			default:
			}
		}
		r.spawn(false, r.closed)
		r.closed++
	}
}

func (r *run) spawn(open bool, index int) {
	w := newWorker(r, r.workers.len(), index, open)
	r.workers.add(w)
	r.wg.Add(1)
	go w.loop()
}

// flushLoop hands over results that waited longer than ResultMaxAge in the
// batch of a worker still busy with a slow request.
func (r *run) flushLoop(stop, done chan struct{}) {
	defer close(done)
	age := r.d.opts.ResultMaxAge
	t := time.NewTicker(max(age/2, 1)) // a 1ns ResultMaxAge must not panic
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := r.now()
		r.workers.each(func(w *worker) { w.flushOlder(now - age) })
	}
}
