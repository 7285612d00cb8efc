package driver

import (
	"math/rand/v2"
	"time"
)

// nextInSequence puts the worker's next request of a sequence in w.cur,
// unless endSequence put one there already: in closed loop the next of
// the worker's own sequence, in open loop the next of one of the shared
// sequences, picked at random as perf_analyzer does, or with Serial the
// one whose last request ended longest ago. It waits while every shared
// sequence has a request in flight (Serial) or every correlation id is
// held, and then moves *sent to the end of the wait. It reports false when
// the load changed or the run stopped first, or with the error that kept
// a sequence from being prepared.
func (w *worker) nextInSequence(sent *time.Duration) (bool, error) {
	if w.cur.slot != nil {
		return true, nil
	}
	r := w.r
	q := r.seqs
	var sl *seqSlot
	switch {
	case !w.open:
		sl = w.slot
	case q.serial:
		select {
		case sl = <-q.free:
		default:
			st := r.d.state.Load()
			if !w.wanted(st) {
				return false, nil
			}
			select {
			case sl = <-q.free:
			case <-st.wake:
				return false, nil
			case <-r.quit:
				return false, nil
			}
			*sent = r.now()
		}
	default:
		if w.pick == nil {
			w.pick = rand.New(rand.NewPCG(r.d.opts.Seed^0x7069636b, uint64(w.id)))
		}
		sl = q.open[w.pick.IntN(len(q.open))]
	}
	for {
		if w.open {
			sl.mu.Lock()
		}
		sr, wait, err := q.take(sl, *sent)
		if w.open {
			sl.mu.Unlock()
		}
		if err == nil && wait == nil {
			w.cur = sr
			return true, nil
		}
		if err != nil || !w.waitFor(wait) {
			if w.open && q.serial {
				q.free <- sl
			}
			return false, err
		}
		*sent = r.now()
	}
}

// waitFor waits until ch is closed, or reports false when the load changes
// or the run stops first.
func (w *worker) waitFor(ch <-chan struct{}) bool {
	st := w.r.d.state.Load()
	if !w.wanted(st) {
		return false
	}
	select {
	case <-ch:
		return true
	case <-st.wake:
	case <-w.r.quit:
	}
	return false
}

// endedInSequence accounts for the end of w.cur's request and clears it.
func (w *worker) endedInSequence(res *Result) {
	q := w.r.seqs
	sr := &w.cur
	q.ended(sr, res, w.open)
	if w.open && q.serial {
		q.free <- sr.slot
	}
	w.cur = seqRequest{}
}

// endSequence sends the last request of a sequence still running, when
// the load no longer needs the worker or the run stops: a closed-loop
// worker ends its own, an open-loop one any of the shared sequences (with
// Serial, any of those without a request in flight; the others are ended
// by the workers whose requests return). It reports whether it sent one.
func (w *worker) endSequence() bool {
	r := w.r
	q := r.seqs
	if r.reqCtx.Err() != nil {
		return false
	}
	now := r.now()
	if !w.open {
		if !w.slot.finish() {
			return false
		}
		w.do(now, now)
		return true
	}
	if !q.serial {
		for _, sl := range q.open {
			if w.endSlot(sl, now) {
				return true
			}
		}
		return false
	}
	for range len(q.free) {
		select {
		case sl := <-q.free:
			if w.endSlot(sl, now) {
				return true
			}
			q.free <- sl
		default:
			return false
		}
	}
	return false
}

// endSlot sends the last request of the shared sequence in sl if one is
// running.
func (w *worker) endSlot(sl *seqSlot, now time.Duration) bool {
	sl.mu.Lock()
	if !sl.finish() {
		sl.mu.Unlock()
		return false
	}
	sr, _, err := w.r.seqs.take(sl, now)
	sl.mu.Unlock()
	if err != nil {
		return false
	}
	w.cur = sr
	w.do(now, now)
	return true
}

// endSequences ends every sequence endSequence can reach, when the run
// stops.
func (w *worker) endSequences() {
	if w.r.seqs == nil {
		return
	}
	for w.endSequence() {
	}
}
