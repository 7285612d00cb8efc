package sim

import (
	"cmp"
	"slices"
	"time"
)

// runSequence is the loop of one instance of a sequence model: it forms
// its own batches from the lanes in its sequence slots, executes them, and
// frees the lanes for their next request.
func (s *scheduler) runSequence(in *instance, idx int) {
	defer s.wg.Done()
	sl := newSleeper()
	for {
		batch := s.seq.next(idx, sl)
		if batch == nil {
			return
		}
		in.execute(batch)
		s.mu.Lock()
		s.seq.done(batch)
		s.mu.Unlock()
	}
}

// next waits until instance idx has a batch to execute and takes it; nil
// when the scheduler stops, or drains and nothing is left.
func (q *sequencer) next(idx int, sl *sleeper) []*request {
	s := q.s
	for {
		if wait := s.e.stallLeft(); wait > 0 {
			if !sl.sleep(min(wait, 20*time.Millisecond), nil, s.stop) {
				return nil
			}
			continue
		}
		s.mu.Lock()
		batch, wait := q.take(idx, s.e.now())
		if len(batch) > 0 {
			s.mu.Unlock()
			return batch
		}
		if s.draining && q.queued == 0 {
			s.mu.Unlock()
			return nil
		}
		changed := q.changed
		s.mu.Unlock()
		switch {
		case wait == 0:
		case wait > 0:
			if !sl.sleep(time.Duration(wait), changed, s.stop) {
				return nil
			}
		default:
			select {
			case <-changed:
			case <-s.stop:
				return nil
			}
		}
	}
}

// take forms instance idx's next batch from the heads of its lanes that
// are not executing: with the direct strategy all of them at once; with
// the oldest strategy the oldest ones, once there are as many as the
// largest preferred batch size or the oldest has waited the maximum queue
// delay. It returns the batch, or no batch and how long to wait (ns): 0 to
// look again at once, < 0 until something changes.
func (q *sequencer) take(idx int, now int64) ([]*request, int64) {
	s := q.s
	cands := q.scratch[idx][:0]
	for j := range q.slots[idx] {
		for {
			l := q.slots[idx][j]
			if l == nil || l.busy || len(l.queue) == 0 {
				break
			}
			if r := l.queue[0]; r.state.Load() == stateCancelled {
				// Dropping it may release the slot to a backlogged
				// lane: look at the slot again.
				q.pop(l)
				q.drop(r)
				continue
			}
			cands = append(cands, l)
			break
		}
	}
	q.scratch[idx] = cands
	if len(cands) == 0 {
		return nil, -1
	}
	if q.oldest {
		slices.SortFunc(cands, func(a, b *seqLane) int {
			return cmp.Compare(a.queue[0].queueStart, b.queue[0].queueStart)
		})
		n := min(len(cands), q.maxBatch)
		age := now - cands[0].queue[0].queueStart
		if n < q.maxPref && !q.pref[n] && q.delay > 0 && age < q.delay {
			return nil, q.delay - age
		}
		cands = cands[:n]
	}
	batch := make([]*request, 0, len(cands))
	for _, l := range cands {
		r := l.queue[0]
		q.pop(l)
		if !r.state.CompareAndSwap(stateQueued, stateExecuting) {
			q.drop(r) // cancelled since the look above
			continue
		}
		s.pending.Add(-1)
		l.busy = true
		batch = append(batch, r)
	}
	clear(cands)
	if len(batch) == 0 {
		return nil, 0
	}
	return batch, 0
}

// pop removes a lane's first queued request.
func (q *sequencer) pop(l *seqLane) {
	l.queue[0] = nil
	l.queue = l.queue[1:]
	if len(l.queue) == 0 {
		l.queue = nil
	}
	q.queued--
}

// reaper releases idle sequences until the scheduler stops.
func (s *scheduler) reaper() {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		wait := s.seq.reap(s.e.now())
		s.mu.Unlock()
		timer.Reset(time.Duration(wait))
		select {
		case <-timer.C:
		case <-s.stop:
			return
		}
	}
}

// unqueueAll takes every queued request off the lanes, for close.
func (q *sequencer) unqueueAll() []*request {
	var out []*request
	add := func(l *seqLane) {
		if l == nil {
			return
		}
		for len(l.queue) > 0 {
			out = append(out, l.queue[0])
			q.pop(l)
		}
	}
	for _, slots := range q.slots {
		for _, l := range slots {
			add(l)
		}
	}
	for _, l := range q.backlog {
		add(l)
	}
	return out
}
