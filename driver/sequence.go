package driver

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// Defaults of SequenceOptions, perf_analyzer's.
const (
	// DefaultSequenceLength is a sequence's base length in requests.
	DefaultSequenceLength = 20
	// DefaultSequenceIDRange is how many correlation ids there are when
	// none is given: ids start at 1 and wrap after 2^32−1 of them.
	DefaultSequenceIDRange = math.MaxUint32
	// DefaultSequences is the number of sequences live at once in open
	// loop.
	DefaultSequences = 4
)

// SequenceOptions drives a stateful model (one whose config has
// sequence_batching) as perf_analyzer does: requests go in sequences, each
// with its own correlation id, the first request carrying
// sequence_start and the last sequence_end. In closed loop each of the
// Concurrency requests in flight runs its own sequence, so a sequence
// never has two requests in flight; in open loop Count sequences share
// the requests. When the load no longer drives a sequence (Stop, Pause,
// a lower concurrency, the other loop), its last request goes out at
// once, as perf_analyzer completes its sequences, so that none is left
// to the server's idle timeout.
type SequenceOptions struct {
	// Length is a sequence's base length in requests (perf_analyzer's
	// --sequence-length); 0 means DefaultSequenceLength.
	Length int
	// Variation is how far from Length a sequence's length may be, in
	// percent of Length either way (--sequence-length-variation): each
	// sequence draws its length uniformly from that band, at least 1.
	// 0 makes every sequence Length long.
	Variation float64
	// StartID is the first correlation id (0 means 1) and IDRange the
	// number of ids (0 means DefaultSequenceIDRange): sequences take ids
	// StartID, StartID+1, ... and wrap within the range, as
	// perf_analyzer's --sequence-id-range START:END gives them (END is
	// StartID+IDRange, excluded). An id that a live sequence holds is
	// never given to another.
	StartID, IDRange uint64
	// Count is the number of sequences live at once in open loop
	// (--num-of-sequences; 0: DefaultSequences). Closed loop ignores it.
	Count int
	// Serial keeps an open loop to one request in flight per sequence
	// (--serial-sequences): a request whose sequences are all busy waits,
	// and counts the wait as lateness. Without it a sequence's requests
	// overlap in open loop, as perf_analyzer's do, except its first and
	// last: the first is answered before the others go out, and the last
	// goes out once the others are answered, so that the server never
	// sees a request outside its sequence. A request passes over a
	// sequence that must wait and waits (late) only when all must.
	Serial bool
}

// SequenceClient is a Client that can send a stateful model's sequences;
// a triton.Client is one.
type SequenceClient interface {
	Client
	// PrepareSequence makes a prepared request into the requests of the
	// sequence with correlation id id.
	PrepareSequence(p triton.Prepared, id uint64) (triton.Sequence, error)
}

var _ SequenceClient = triton.Client(nil)

// sequencer runs a driver's sequences: it hands out correlation ids and
// lengths and keeps the open loop's shared sequences. Its lock is taken
// when a sequence starts or ends, never for a request in the middle of a
// closed-loop sequence.
type sequencer struct {
	d       *Driver
	client  SequenceClient
	length  int
	vary    float64
	startID uint64
	idRange uint64

	mu    sync.Mutex
	next  uint64 // ids handed out so far: perf_analyzer's curr_seq_id_
	live  map[uint64]struct{}
	freed chan struct{} // closed when an id is released; nil when none waits

	active atomic.Int64 // sequences started and not yet ended

	// The open loop's sequences; free holds those with no request in
	// flight, oldest first, when Serial.
	open   []*seqSlot
	free   chan *seqSlot
	serial bool
}

// seqSlot is one place a sequence runs: a closed-loop worker's own, or one
// of the open loop's shared ones (perf_analyzer's sequence status). A new
// sequence starts in it when the last one has sent its last request.
type seqSlot struct {
	mu      sync.Mutex // taken in open loop, where workers share the slot
	rng     *rand.Rand // sequence lengths
	set     int        // the data set (prepared request) of the next sequence
	id      uint64     // the current sequence's id, or the last one's
	gen     uint64     // counts the slot's sequences
	seq     triton.Sequence
	length  int
	pos     int  // requests of the sequence taken so far
	running bool // started and its last request not yet taken
	began   time.Duration
	// Open loop without Serial: the sequence's requests in flight,
	// whether its first is one of them, and a channel closed when one of
	// them ends while a request waits for it.
	inFlight int
	startOut bool
	changed  chan struct{}
}

// seqRequest is a request of a sequence on its way: what the worker sends
// and what it must do when the request ends.
type seqRequest struct {
	slot       *seqSlot
	p          triton.Prepared
	id, gen    uint64
	start, end bool
	began      time.Duration // the first send of its sequence
}

func newSequencer(d *Driver, o SequenceOptions) (*sequencer, error) {
	client, ok := d.opts.Client.(SequenceClient)
	if !ok {
		return nil, errors.New("driver: the client cannot send sequences (it has no PrepareSequence)")
	}
	if o.Length == 0 {
		o.Length = DefaultSequenceLength
	}
	if o.StartID == 0 {
		o.StartID = 1
	}
	if o.IDRange == 0 {
		o.IDRange = DefaultSequenceIDRange
	}
	if o.Count == 0 {
		o.Count = DefaultSequences
	}
	switch {
	case o.Length < 0:
		return nil, fmt.Errorf("driver: sequence length must be at least 1, got %d", o.Length)
	case o.Variation < 0 || math.IsNaN(o.Variation) || math.IsInf(o.Variation, 0):
		return nil, fmt.Errorf("driver: sequence length variation must be a percentage of at least 0, got %v", o.Variation)
	case o.Count < 0:
		return nil, fmt.Errorf("driver: the number of sequences must be at least 1, got %d", o.Count)
	case o.StartID > math.MaxInt64 || o.IDRange > math.MaxInt64-o.StartID+1:
		return nil, fmt.Errorf("driver: correlation ids %d to %d do not fit Triton's int64 sequence_id", o.StartID, o.StartID+o.IDRange-1)
	}
	q := &sequencer{d: d, client: client, length: o.Length, vary: o.Variation, startID: o.StartID, idRange: o.IDRange,
		live: map[uint64]struct{}{}, serial: o.Serial}
	// A request that cannot be made into a sequence fails here, not in
	// the middle of a run.
	for i, p := range d.prepared {
		if _, err := client.PrepareSequence(p, o.StartID); err != nil {
			return nil, fmt.Errorf("driver: prepare request %d as a sequence: %w", i+1, err)
		}
	}
	q.open = make([]*seqSlot, o.Count)
	if q.serial {
		q.free = make(chan *seqSlot, o.Count)
	}
	for i := range q.open {
		q.open[i] = q.newSlot(d.opts.Seed^0x6f70656e, i)
		if q.serial {
			q.free <- q.open[i]
		}
	}
	return q, nil
}

// newSlot makes a slot whose lengths come from its own random source, so
// that slots draw without sharing a lock.
func (q *sequencer) newSlot(seed uint64, i int) *seqSlot {
	return &seqSlot{rng: rand.New(rand.NewPCG(seed, uint64(i))), set: i % len(q.d.prepared)}
}

// drawLength is perf_analyzer's GetRandomSequenceLength: the base length
// plus an offset drawn uniformly within ±Variation percent of it,
// truncated, and at least 1.
func (q *sequencer) drawLength(rng *rand.Rand) int {
	off := int((2*rng.Float64() - 1) * q.vary / 100 * float64(q.length))
	return max(q.length+off, 1)
}

// acquire hands out the next correlation id as perf_analyzer does (the
// next of the range, wrapping), skipping ids that live sequences hold;
// when every id of the range is held it returns 0 and a channel closed
// when one is released.
func (q *sequencer) acquire(old uint64) (uint64, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	tries := min(q.idRange, uint64(len(q.live))+1)
	for i := uint64(0); i < tries; i++ {
		id := q.next%q.idRange + q.startID
		q.next++
		if _, held := q.live[id]; !held {
			q.live[id] = struct{}{}
			return id, nil
		}
		// perf_analyzer's GetNextSeqId takes the slot's last id back
		// when the next one is in use.
		if _, held := q.live[old]; i == 0 && !held && old >= q.startID && old-q.startID < q.idRange {
			q.live[old] = struct{}{}
			return old, nil
		}
	}
	if q.freed == nil {
		q.freed = make(chan struct{})
	}
	return 0, q.freed
}

// release gives an ended sequence's id back.
func (q *sequencer) release(id uint64) {
	q.mu.Lock()
	delete(q.live, id)
	if q.freed != nil {
		close(q.freed)
		q.freed = nil
	}
	q.mu.Unlock()
	q.active.Add(-1)
}

// errStopping is take's answer when a new sequence would start after the
// run was told to stop.
var errStopping = errors.New("driver: the run is stopping")

// take returns the slot's next request, starting a new sequence when none
// runs. When every id is held, or (gated: in open loop without Serial) the
// request must wait for others of its sequence, or a new sequence for the
// last one's END to be answered, it returns instead a channel to wait on
// before trying again. The caller owns the slot (holds
// its lock in open loop).
func (q *sequencer) take(sl *seqSlot, now time.Duration, gated bool) (sr seqRequest, wait <-chan struct{}, err error) {
	// A new sequence waits until the slot's last one is answered (its END
	// in flight still holds a sequence slot at the server).
	if gated && (sl.running && (sl.startOut || sl.pos == sl.length-1 && sl.inFlight > 0) || !sl.running && sl.inFlight > 0) {
		if sl.changed == nil {
			sl.changed = make(chan struct{})
		}
		return seqRequest{}, sl.changed, nil
	}
	if !sl.running {
		// Once the run is told to stop, the sequences under way end and
		// no new one starts, as perf_analyzer's do: a request that would
		// start one in the drain is not sent.
		select {
		case <-q.d.stopReq:
			return seqRequest{}, nil, errStopping
		default:
		}
		id, wait := q.acquire(sl.id)
		if id == 0 {
			return seqRequest{}, wait, nil
		}
		seq, err := q.client.PrepareSequence(q.d.prepared[sl.set], id)
		if err != nil {
			q.release(id)
			return seqRequest{}, nil, fmt.Errorf("prepare sequence %d: %w", id, err)
		}
		q.active.Add(1)
		sl.set = (sl.set + 1) % len(q.d.prepared)
		sl.id, sl.seq, sl.gen = id, seq, sl.gen+1
		sl.length, sl.pos, sl.running, sl.began = q.drawLength(sl.rng), 0, true, now
		sl.inFlight, sl.startOut = 0, false
	}
	sr = seqRequest{slot: sl, id: sl.id, gen: sl.gen, start: sl.pos == 0, end: sl.pos == sl.length-1, began: sl.began}
	sr.p = sl.seq.Request(sr.start, sr.end)
	sl.pos++
	sl.running = !sr.end
	if gated {
		sl.inFlight++
		sl.startOut = sr.start
	}
	return sr, nil, nil
}

// finish makes the slot's next request the last of its sequence, as
// perf_analyzer's CompleteOngoingSequence does when the load stops; it
// reports whether a sequence was running.
func (sl *seqSlot) finish() bool {
	if sl.running {
		sl.length = sl.pos + 1
	}
	return sl.running
}

// ended accounts for a sequence's request that ended with res: its last
// request releases the id and gives the sequence's latency; a first
// request that failed abandons the sequence, which the server never
// started, unless its last request is already on its way. In open loop
// without Serial (gated) it lets the requests waiting for it go.
func (q *sequencer) ended(sr *seqRequest, res *Result, open, gated bool) {
	if sr.end {
		if res.OK() {
			if res.Timing == nil {
				res.Timing = &ResponseTiming{}
			}
			res.Timing.Sequence = max(res.Done-sr.began, 1)
		}
		q.release(sr.id)
	}
	sl := sr.slot
	if open {
		sl.mu.Lock()
		defer sl.mu.Unlock()
	}
	if sl.gen != sr.gen {
		return // a sequence already followed by another in the slot
	}
	if gated {
		sl.inFlight--
		if sr.start {
			sl.startOut = false
		}
		if sl.changed != nil {
			close(sl.changed)
			sl.changed = nil
		}
	}
	if sr.start && !sr.end && !res.OK() && sl.running {
		sl.running = false
		q.release(sr.id)
	}
}
