package sim

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// corrID is a request's correlation ID: a number or a string.
type corrID struct {
	num   uint64
	str   string
	isStr bool
}

// inSequence reports whether the ID names a sequence: 0 and "" do not.
func (c corrID) inSequence() bool {
	if c.isStr {
		return c.str != ""
	}
	return c.num != 0
}

func (c corrID) String() string {
	if c.isStr {
		return c.str
	}
	return strconv.FormatUint(c.num, 10)
}

// seqInfo is what a request to a sequence model carries: its correlation
// ID and flags, and the lane, record and arrival index the sequence
// batcher gives it. Other requests do without it.
type seqInfo struct {
	corrID     corrID
	start, end bool
	lane       *seqLane
	record     *SequenceRecord
	index      uint64
}

// SequenceOutcome says how a sequence ended.
type SequenceOutcome string

// Sequence outcomes.
const (
	// SequenceActive: the sequence has not ended.
	SequenceActive SequenceOutcome = "active"
	// SequenceEnded: its request with sequence_end has executed.
	SequenceEnded SequenceOutcome = "ended"
	// SequenceTimedOut: it was released after max_sequence_idle_microseconds
	// without a request.
	SequenceTimedOut SequenceOutcome = "timed_out"
	// SequenceRestarted: a new START on its correlation ID replaced it
	// before its END, which Triton accepts with a warning.
	SequenceRestarted SequenceOutcome = "restarted"
)

// SequenceRecord is one sequence as the sequence batcher saw it.
type SequenceRecord struct {
	// CorrelationID is the sequence's ID, a decimal number unless
	// StringID.
	CorrelationID string
	StringID      bool
	// Requests counts the requests accepted into the sequence, its START
	// included; Executed those the model has executed (a request
	// cancelled while queued never executes).
	Requests, Executed uint64
	// OutOfOrder counts requests executed before a request that arrived
	// earlier in the same sequence. The sequence batcher never reorders, so
	// it stays 0; it is counted so that tests can show it.
	OutOfOrder uint64
	Outcome    SequenceOutcome
}

// SequenceStats is the sequence batcher's account of one loaded model
// version since it was loaded.
type SequenceStats struct {
	Model, Version string
	// Active counts the sequences started and not yet ended, timed out or
	// restarted; Backlog those of them waiting for a free sequence slot.
	Active, Backlog int
	// Started counts sequences begun by a request with sequence_start;
	// Ended, TimedOut and Restarted how they finished.
	Started, Ended, TimedOut, Restarted uint64
	// OutOfOrder sums the records' OutOfOrder, including records no longer
	// listed.
	OutOfOrder uint64
	// Sequences lists the active sequences, then the most recently
	// finished ones (at most MaxSequenceRecords), oldest first.
	Sequences []SequenceRecord
}

// MaxSequenceRecords bounds the finished sequences SequenceStats lists, so
// that memory does not grow with run time.
const MaxSequenceRecords = 4096

// seqLane is one active correlation ID in a sequence slot (or waiting for
// one in the backlog): its queued requests, in arrival order, and what the
// model keeps for it. Guarded by the scheduler's mu, except acc, which only
// the instance executing the lane's request touches (at most one at a time).
type seqLane struct {
	id          corrID
	inst, slot  int // sequence slot; inst -1 while in the backlog
	queue       []*request
	busy        bool // one of its requests is executing
	closed      bool // ended, timed out or replaced: takes no more requests
	outstanding int  // requests queued or executing
	lastSeen    int64
	nextIndex   uint64 // arrival index of the next request
	doneIndex   uint64 // arrival index the next execution must have
	rec         *SequenceRecord
	acc         []int64 // BehaviourAccumulate's running sums
}

// sequencer is a model version's sequence batcher (Triton's
// SequenceBatchScheduler): it maps correlation IDs to sequence slots on
// instances, keeps each sequence's requests in order, forms batches of at
// most one request per sequence, and releases idle sequences. All its
// fields are guarded by the scheduler's mu.
type sequencer struct {
	s         *scheduler
	oldest    bool
	slotCount int // sequence slots per instance
	maxBatch  int
	maxPref   int
	pref      map[int]bool
	delay     int64 // oldest: max queue delay, ns
	idle      int64 // max sequence idle, ns

	slots   [][]*seqLane // per instance, per slot; nil = free
	lanes   map[corrID]*seqLane
	backlog []*seqLane
	queued  int // requests queued in lanes
	changed chan struct{}
	scratch [][]*seqLane // per instance: candidate lanes

	started, ended, timedOut, restarted, outOfOrder uint64
	finished                                        []*SequenceRecord // ring
	finishedNext                                    int
}

func newSequencer(s *scheduler) *sequencer {
	spec := s.mv.model.spec
	sb := spec.SequenceBatching
	q := &sequencer{
		s:         s,
		maxBatch:  max(1, spec.MaxBatchSize),
		slotCount: max(1, spec.MaxBatchSize),
		idle:      int64(min(sb.MaxSequenceIdleMicroseconds, 1<<53)) * 1000,
		lanes:     map[corrID]*seqLane{},
		changed:   make(chan struct{}),
		pref:      map[int]bool{},
	}
	q.maxPref = q.maxBatch
	if o := sb.Oldest; o != nil {
		q.oldest = true
		if o.MaxCandidateSequences > 0 {
			q.slotCount = o.MaxCandidateSequences
		}
		q.delay = int64(min(o.MaxQueueDelayMicroseconds, 1<<53)) * 1000
		q.maxPref = 0
		for _, p := range o.PreferredBatchSize {
			q.pref[p] = true
			q.maxPref = max(q.maxPref, p)
		}
		if q.maxPref == 0 {
			q.maxPref = q.maxBatch
		}
	}
	n := len(s.mv.model.placements)
	q.slots = make([][]*seqLane, n)
	q.scratch = make([][]*seqLane, n)
	for i := range q.slots {
		q.slots[i] = make([]*seqLane, q.slotCount)
	}
	return q
}

// notify wakes every instance waiting for work.
func (q *sequencer) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// admit checks a sequence request the way Triton's sequence batcher does
// when it is enqueued, with its messages, and puts it in its sequence's
// lane.
func (q *sequencer) admit(r *request, now int64) error {
	name := q.s.mv.model.name
	if r.batch > 1 {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(
			"inference request to model '%s' must specify batch-size 1 due to requirements of sequence batcher", name)}
	}
	if !r.seq.corrID.inSequence() {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(
			"inference request to model '%s' must specify a non-zero or non-empty correlation ID", name)}
	}
	l := q.lanes[r.seq.corrID]
	if l == nil && !r.seq.start {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(
			"inference request for sequence %s to model '%s' must specify the START flag on the first request of the sequence", r.seq.corrID, name)}
	}
	switch {
	case l == nil:
		l = &seqLane{id: r.seq.corrID, inst: -1}
		q.lanes[r.seq.corrID] = l
		q.place(l)
		q.begin(l)
	case r.seq.start:
		// Triton warns that the previous sequence did not end and goes on
		// in the same slot: the old requests run first, then the new ones.
		l.rec.Outcome = SequenceRestarted
		q.restarted++
		q.retire(l.rec)
		q.begin(l)
	}
	l.lastSeen = now
	r.seq.lane, r.seq.record = l, l.rec
	r.seq.index = l.nextIndex
	l.nextIndex++
	l.outstanding++
	l.rec.Requests++
	l.queue = append(l.queue, r)
	q.queued++
	if r.seq.end {
		// Forget the ID now: a new START may reuse it at once.
		delete(q.lanes, r.seq.corrID)
		l.closed = true
	}
	q.notify()
	return nil
}

// begin starts a new record for a lane.
func (q *sequencer) begin(l *seqLane) {
	q.started++
	l.rec = &SequenceRecord{CorrelationID: l.id.String(), StringID: l.id.isStr, Outcome: SequenceActive}
}

// place gives a new lane a free sequence slot, on the instance with the
// most free slots, or puts it in the backlog.
func (q *sequencer) place(l *seqLane) {
	best, bestFree := -1, 0
	for i, slots := range q.slots {
		free := 0
		for _, x := range slots {
			if x == nil {
				free++
			}
		}
		if free > bestFree {
			best, bestFree = i, free
		}
	}
	if best < 0 {
		q.backlog = append(q.backlog, l)
		return
	}
	for j, x := range q.slots[best] {
		if x == nil {
			q.slots[best][j] = l
			l.inst, l.slot = best, j
			return
		}
	}
}

// release frees a closed lane's slot once nothing of it is left, and hands
// the slot to the oldest backlogged sequence.
func (q *sequencer) release(l *seqLane) {
	if !l.closed || l.outstanding > 0 {
		return
	}
	if l.inst < 0 {
		for i, b := range q.backlog {
			if b == l {
				q.backlog = append(q.backlog[:i], q.backlog[i+1:]...)
				break
			}
		}
		return
	}
	inst, slot := l.inst, l.slot
	q.slots[inst][slot] = nil
	l.inst = -1
	for len(q.backlog) > 0 {
		b := q.backlog[0]
		q.backlog[0] = nil
		q.backlog = q.backlog[1:]
		if b.closed && b.outstanding == 0 {
			continue
		}
		q.slots[inst][slot] = b
		b.inst, b.slot = inst, slot
		break
	}
	q.notify()
}

// retire keeps a finished record among the most recent ones.
func (q *sequencer) retire(rec *SequenceRecord) {
	if len(q.finished) < MaxSequenceRecords {
		q.finished = append(q.finished, rec)
		return
	}
	q.finished[q.finishedNext] = rec
	q.finishedNext = (q.finishedNext + 1) % MaxSequenceRecords
}

// drop takes a request that will never execute (cancelled while queued)
// off its lane's books.
func (q *sequencer) drop(r *request) {
	l := r.seq.lane
	l.outstanding--
	l.doneIndex = r.seq.index + 1
	q.release(l)
}

// done records the execution of a batch's requests: their lanes are free
// for their next request, and an END closes its sequence.
func (q *sequencer) done(batch []*request) {
	for _, r := range batch {
		l := r.seq.lane
		l.busy = false
		l.outstanding--
		if r.seq.index != l.doneIndex {
			q.outOfOrder++
			r.seq.record.OutOfOrder++
		}
		l.doneIndex = r.seq.index + 1
		r.seq.record.Executed++
		if r.seq.end && r.seq.record.Outcome == SequenceActive {
			r.seq.record.Outcome = SequenceEnded
			q.ended++
			q.retire(r.seq.record)
		}
		q.release(l)
	}
	q.notify()
}

// reap releases the sequences idle for max_sequence_idle_microseconds and
// returns how long until the next one could be; like Triton's reaper it
// leaves backlogged sequences alone.
func (q *sequencer) reap(now int64) int64 {
	next := q.idle
	for id, l := range q.lanes {
		if l.inst < 0 {
			continue
		}
		if idle := now - l.lastSeen; idle < q.idle {
			next = min(next, q.idle-idle)
			continue
		}
		delete(q.lanes, id)
		l.closed = true
		l.rec.Outcome = SequenceTimedOut
		q.timedOut++
		q.retire(l.rec)
		q.release(l)
	}
	return max(next, int64(time.Millisecond))
}

// stats copies the counters and records.
func (q *sequencer) stats() SequenceStats {
	st := SequenceStats{
		Model: q.s.mv.model.name, Version: q.s.mv.label,
		Backlog: len(q.backlog),
		Started: q.started, Ended: q.ended, TimedOut: q.timedOut, Restarted: q.restarted,
		OutOfOrder: q.outOfOrder,
	}
	seen := map[*SequenceRecord]bool{}
	add := func(l *seqLane) {
		if l != nil && l.rec.Outcome == SequenceActive && !seen[l.rec] {
			seen[l.rec] = true
			st.Sequences = append(st.Sequences, *l.rec)
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
	st.Active = len(st.Sequences)
	n := len(q.finished)
	for i := range n {
		st.Sequences = append(st.Sequences, *q.finished[(q.finishedNext+i)%n])
	}
	return st
}

// SequenceStats returns the sequence batcher's account of a model's latest
// loaded version: how many sequences started, ended, timed out, and each
// recent sequence's requests. A model without sequence batching, or not
// loaded, is an error.
func (e *Engine) SequenceStats(model string) (SequenceStats, error) {
	e.mu.RLock()
	m, ok := e.models[model]
	var mv *modelVersion
	if ok && len(m.versions) > 0 {
		mv = m.versions[len(m.versions)-1]
	}
	e.mu.RUnlock()
	switch {
	case !ok:
		return SequenceStats{}, unknownModel(model)
	case !m.seq:
		return SequenceStats{}, fmt.Errorf("model '%s' has no sequence batching", textsafe.Bound(model))
	case mv == nil:
		return SequenceStats{}, fmt.Errorf("model '%s' is not loaded", textsafe.Bound(model))
	}
	s := mv.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq.stats(), nil
}
