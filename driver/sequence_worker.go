package driver

import (
	"errors"
	"math/rand/v2"
	"time"
)

// nextInSequence puts the worker's next request of a sequence in w.cur,
// unless endSequence put one there already: in closed loop the next of
// the worker's own sequence, in open loop the next of one of the shared
// sequences, picked at random as perf_analyzer does (passing over those
// whose next request must wait for others), or with Serial the one whose
// last request ended longest ago. It waits while every shared sequence is
// busy or every correlation id is held, and then moves *sent to the end
// of the wait. It reports false when the load changed or the run stopped
// first, or with the error that kept a sequence from being prepared.
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
		return w.nextShared(sent)
	}
	for {
		if w.open {
			sl.mu.Lock()
		}
		// The slot is this worker's alone: its own, or taken off q.free.
		sr, wait, err := q.take(sl, *sent, false)
		if w.open {
			sl.mu.Unlock()
		}
		if errors.Is(err, errStopping) {
			if w.open {
				q.free <- sl
			}
			return false, nil
		}
		if err == nil && wait == nil {
			w.cur = sr
			return true, nil
		}
		if err != nil || !w.waitFor(wait) {
			if w.open {
				q.free <- sl
			}
			return false, err
		}
		*sent = r.now()
	}
}

// nextShared is nextInSequence in open loop without Serial: from a random
// sequence on, the first whose next request may go now; when none may,
// it waits for the random one.
func (w *worker) nextShared(sent *time.Duration) (bool, error) {
	q := w.r.seqs
	first := w.pick.IntN(len(q.open))
	for {
		var wait <-chan struct{}
		for i := range q.open {
			sl := q.open[(first+i)%len(q.open)]
			sl.mu.Lock()
			sr, ch, err := q.take(sl, *sent, true)
			sl.mu.Unlock()
			switch {
			case errors.Is(err, errStopping):
				continue // only the sequences under way take requests now
			case err != nil:
				return false, err
			case ch == nil:
				w.cur = sr
				return true, nil
			case i == 0:
				wait = ch
			}
		}
		if !w.waitFor(wait) {
			return false, nil
		}
		*sent = w.r.now()
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
	q.ended(sr, res, w.open, w.open && !q.serial)
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
// running, once the sequence's other requests in flight are answered.
func (w *worker) endSlot(sl *seqSlot, now time.Duration) bool {
	q := w.r.seqs
	for {
		sl.mu.Lock()
		if !sl.finish() {
			sl.mu.Unlock()
			return false
		}
		sr, wait, err := q.take(sl, now, !q.serial)
		sl.mu.Unlock()
		switch {
		case err != nil:
			return false
		case wait != nil:
			select {
			case <-wait:
				now = w.r.now()
				continue
			case <-w.r.reqCtx.Done():
				return false
			}
		}
		w.cur = sr
		w.do(now, now)
		return true
	}
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
