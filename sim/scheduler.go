package sim

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// Request states. A request moves queued → executing → done, or to
// cancelled from queued or executing; whoever wins the transition records
// its statistics, so each request is counted exactly once.
const (
	stateQueued int32 = iota
	stateExecuting
	stateDone
	stateCancelled
	// stateResponding is a decoupled backend's request whose responses
	// are being sent: it holds no instance, and cancelling it stops them
	// without counting a failure (the backend reported its statistics).
	stateResponding
)

// request is one validated inference request on its way through a
// scheduler.
type request struct {
	req     *pb.ModelInferRequest
	version *modelVersion
	data    [][]byte  // raw data per model input, in config order
	shapes  [][]int64 // request shape per model input, in config order
	outputs []int     // model outputs to return, in config order
	batch   int       // batch elements, max(1, N)
	itemLen int       // elements per item of the first input (latency scale)
	varKey  uint64    // hash of variable dims: only equal keys batch together
	timeout int64     // queue timeout from the "timeout" parameter, ns; 0 = none
	// classify holds, per model output, the number of classes asked for
	// with the "classification" parameter; nil when none was.
	classify []uint32

	seq *seqInfo // sequence models only
	// promptTokens is an LLM request's prompt length in tokens, counted
	// when it arrived.
	promptTokens int

	start      int64 // request start, engine clock (ns)
	queueStart int64
	state      atomic.Int32
	done       chan struct{}
	// onDone, when set, is called once the request completes; it must not
	// block. A request cancelled while queued never completes; one
	// cancelled while executing still does.
	onDone func(*request)
	// onResponse, when set, takes a decoupled model's responses before
	// the final one, which completes the request as resp, and the errors
	// such responses carry (resp nil); it must not block. Only streams set
	// it.
	onResponse func(*request, *pb.ModelInferResponse, error)
	resp       *pb.ModelInferResponse
	err        error
	// heldAtArrival is how many requests of its model version the server
	// held when this one arrived, itself included.
	heldAtArrival int64
	// cin, cinf and cout are the compute input, infer and output times
	// recorded for the request when it succeeded, which the ensemble whose
	// step it is sums.
	cin, cinf, cout uint64
	// run is the ensemble run of a request to an ensemble.
	run *ensembleRun
	// unreported marks a request whose backend failed it without
	// reporting its statistics (Triton's sequence backends): it counts
	// neither as a success nor as a failure.
	unreported bool
	// budget is the request's part of the memory budget: its message (on
	// a stream) and its outputs.
	budget budgetShare
}

// complete ends a request with its resp or err set. The server stops
// holding it before anyone hears of the end, so that a client that sends
// its next request on hearing it never finds it still counted.
func (r *request) complete() {
	if r.version != nil {
		r.version.held.Add(-1)
	}
	close(r.done)
	if r.onDone != nil {
		r.onDone(r)
	}
}

// scheduler is one model version's queue, dynamic batcher and instances.
// The batcher goroutine waits for a free instance, forms a batch from the
// queue (Triton's dynamic batching rules, or one request at a time without
// dynamic batching) and hands it to that instance's goroutine.
type scheduler struct {
	e        *Engine
	mv       *modelVersion
	dynamic  bool
	maxBatch int
	maxPref  int          // largest preferred size, or maxBatch
	pref     map[int]bool // preferred batch sizes
	delay    int64        // max queue delay, ns
	maxQueue int64        // 0 = unlimited

	mu       sync.Mutex
	queue    []*request
	head     int
	draining bool // unloading: finish the queue, accept nothing new
	stopped  bool

	seq *sequencer // sequence models only
	llm *llmBook   // LLM models only
	// ensemble tells an ensemble's scheduler: it queues nothing and has
	// no instances; each request runs its steps (ensemble_run.go).
	ensemble bool

	pending   atomic.Int64 // queued, not executing
	wake      chan struct{}
	free      chan *instance
	stop      chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup
	instances []*instance
}

func newScheduler(e *Engine, mv *modelVersion) *scheduler {
	m := mv.model
	s := &scheduler{
		e:        e,
		mv:       mv,
		maxBatch: max(1, m.spec.MaxBatchSize),
		wake:     make(chan struct{}, 1),
		free:     make(chan *instance, len(m.placements)),
		stop:     make(chan struct{}),
	}
	if db := m.spec.DynamicBatching; db != nil {
		s.dynamic = true
		s.delay = int64(db.MaxQueueDelayMicroseconds) * 1000
		s.maxQueue = int64(db.MaxQueueSize)
		s.pref = map[int]bool{}
		for _, p := range db.PreferredBatchSize {
			s.pref[p] = true
			s.maxPref = max(s.maxPref, p)
		}
	}
	if s.maxPref == 0 {
		s.maxPref = s.maxBatch
	}
	if m.ensemble {
		s.ensemble = true
		return s
	}
	if m.seq {
		s.seq = newSequencer(s)
	}
	if m.spec.LLM != nil {
		s.llm = &llmBook{}
	}
	for i, p := range m.placements {
		seed := uint64(e.opts.Seed) ^ e.seq.Add(1)*0x9e3779b97f4a7c15
		in := &instance{
			s:       s,
			index:   i,
			work:    make(chan []*request, 1),
			rng:     rand.New(rand.NewPCG(seed, uint64(mv.version))),
			sleeper: newSleeper(),
		}
		if p.gpu >= 0 {
			in.gpu = e.gpus[p.gpu]
			in.gpuUUID = in.gpu.uuid
			in.wake = make(chan struct{}, 1)
		}
		s.instances = append(s.instances, in)
		s.wg.Add(1)
		if s.seq != nil {
			go s.runSequence(in, i)
			continue
		}
		if m.spec.LLM != nil {
			go s.runLLM(in)
			continue
		}
		s.free <- in
		go in.run()
	}
	switch {
	case s.seq != nil:
		s.wg.Add(1)
		go s.reaper()
	case m.spec.LLM == nil:
		s.wg.Add(1)
		go s.run()
	}
	return s
}

// enqueue adds a validated request to the queue, or refuses it when the
// queue is full (UNAVAILABLE, not counted, as on Triton).
func (s *scheduler) enqueue(r *request) error {
	r.done = make(chan struct{})
	s.mu.Lock()
	if s.draining || s.stopped {
		s.mu.Unlock()
		return errStopping
	}
	if s.maxQueue > 0 && s.pending.Load() >= s.maxQueue {
		s.mu.Unlock()
		// Triton's PolicyQueue::Enqueue refuses it with the request's
		// prefix and counts it nowhere: not in fail, not in
		// nv_inference_request_failure (2.73, checked on the real
		// server).
		return &kserve.Error{Code: codes.Unavailable, Message: requestPrefix(r.req) + "Exceeds maximum queue size"}
	}
	r.queueStart = s.e.now()
	if s.ensemble {
		// Triton's ensemble scheduler holds the request as executing
		// once it has passed it on.
		r.state.Store(stateExecuting)
		s.mu.Unlock()
		s.e.startEnsemble(r)
		return nil
	}
	if s.seq != nil {
		if err := s.seq.admit(r, r.queueStart); err != nil {
			s.mu.Unlock()
			return err
		}
		s.pending.Add(1)
		s.mu.Unlock()
		return nil
	}
	s.queue = append(s.queue, r)
	s.pending.Add(1)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// cancel fails a request whose caller gave up. It reports false when the
// request has already completed, in which case its result stands.
func (s *scheduler) cancel(r *request) bool {
	if s.ensemble {
		return r.run.cancel()
	}
	switch {
	case r.state.CompareAndSwap(stateQueued, stateCancelled):
		// It will never complete: the server lets go of it now.
		s.pending.Add(-1)
		s.mv.held.Add(-1)
	case r.state.CompareAndSwap(stateResponding, stateCancelled):
		// Its responses stop; it completes when they do.
		return true
	case !r.state.CompareAndSwap(stateExecuting, stateCancelled):
		return false
	}
	s.mv.stats.recordFailure(s.e.now()-r.start, reasonCanceled)
	if s.seq != nil {
		// The lane drops it when it reaches the head; look now.
		s.mu.Lock()
		s.seq.notify()
		s.mu.Unlock()
	}
	return true
}

// run is the batcher goroutine.
func (s *scheduler) run() {
	defer s.wg.Done()
	defer func() {
		for _, in := range s.instances {
			close(in.work)
		}
	}()
	sl := newSleeper()
	for {
		var in *instance
		select {
		case in = <-s.free:
		case <-s.stop:
			return
		}
		batch := s.nextBatch(sl)
		if batch == nil {
			return
		}
		in.work <- batch
	}
}

// nextBatch waits until a batch should execute and takes it off the queue.
// It returns nil when the scheduler stops.
func (s *scheduler) nextBatch(sl *sleeper) []*request {
	for {
		if wait := s.e.stallLeft(); wait > 0 {
			// Poll so that lifting the stall takes effect soon.
			if !sl.sleep(min(wait, 20*time.Millisecond), nil, s.stop) {
				return nil
			}
			continue
		}
		s.mu.Lock()
		now := s.e.now()
		for s.head < len(s.queue) && (s.queue[s.head].state.Load() == stateCancelled || s.expire(s.queue[s.head], now)) {
			s.queue[s.head] = nil
			s.head++
		}
		if s.head == len(s.queue) {
			draining := s.draining
			s.mu.Unlock()
			if draining {
				return nil
			}
			select {
			case <-s.wake:
			case <-s.stop:
				return nil
			}
			continue
		}
		count, wait := s.plan(now)
		if wait <= 0 {
			batch := s.take(count, now)
			s.mu.Unlock()
			if len(batch) > 0 {
				return batch
			}
			continue
		}
		s.mu.Unlock()
		if !sl.sleep(time.Duration(wait), s.wake, s.stop) {
			return nil
		}
	}
}

// plan decides, with the queue locked and non-empty, how many requests the
// next batch takes and whether to wait (wait > 0, in ns) for more. It
// follows Triton's DynamicBatchScheduler::GetDynamicBatch: a batch of a
// preferred size goes at once; a batch that cannot grow goes at once; else
// the batcher waits until the oldest request has been queued for the
// maximum queue delay, then sends whatever it has.
func (s *scheduler) plan(now int64) (count int, wait int64) {
	if !s.dynamic {
		return 1, 0
	}
	pending, best, bestCount := 0, 0, 0
	sendNow := false
	var oldest int64 = -1
	var key uint64
	for _, r := range s.queue[s.head:] {
		if r.state.Load() != stateQueued || (r.timeout > 0 && now-r.queueStart >= r.timeout) {
			continue
		}
		if oldest < 0 {
			oldest = r.queueStart
			key = r.varKey
		} else {
			if pending+r.batch > s.maxPref && best == 0 {
				best, bestCount = pending, count
			}
			// Requests of another shape end the batch, as in Triton.
			if pending+r.batch > s.maxBatch || r.varKey != key {
				sendNow = true
				break
			}
		}
		pending += r.batch
		count++
		if s.pref[pending] {
			best, bestCount = pending, count
		}
	}
	if count == 0 {
		return 0, 0
	}
	age := now - oldest
	delayExceeded := s.delay != 0 && age >= s.delay
	if best != 0 && !delayExceeded {
		return bestCount, 0
	}
	if sendNow || pending >= s.maxPref || delayExceeded || s.delay == 0 {
		return count, 0
	}
	return count, s.delay - age
}

// take removes up to count live requests from the head of the queue, never
// more than maxBatch elements, and marks them executing.
func (s *scheduler) take(count int, now int64) []*request {
	batch := make([]*request, 0, count)
	elems := 0
	for len(batch) < count && s.head < len(s.queue) {
		r := s.queue[s.head]
		if r.state.Load() == stateQueued && elems+r.batch > s.maxBatch {
			break
		}
		s.queue[s.head] = nil
		s.head++
		if s.expire(r, now) {
			continue
		}
		if r.state.CompareAndSwap(stateQueued, stateExecuting) {
			s.pending.Add(-1)
			batch = append(batch, r)
			elems += r.batch
		}
	}
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	} else if s.head > 1024 && s.head > len(s.queue)/2 {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	return batch
}

// expire rejects a queued request whose timeout has passed, as Triton's
// queue policy does, and reports whether it did.
func (s *scheduler) expire(r *request, now int64) bool {
	if r.timeout <= 0 || now-r.queueStart < r.timeout || !r.state.CompareAndSwap(stateQueued, stateDone) {
		return false
	}
	s.pending.Add(-1)
	s.mv.stats.recordFailure(now-r.start, reasonRejected)
	r.err = errTimeout
	r.complete()
	return true
}

// errTimeout fails requests that waited in the queue past their timeout.
var errTimeout = &kserve.Error{Code: codes.Unavailable, Message: "Request timeout expired"}

// drain stops accepting requests and lets the queued ones finish; the
// scheduler then stops by itself.
func (s *scheduler) drain() {
	s.mu.Lock()
	s.draining = true
	if s.seq != nil {
		s.seq.notify()
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	go func() {
		s.wg.Wait()
		s.close()
		s.e.mu.Lock()
		delete(s.e.scheds, s)
		s.e.mu.Unlock()
	}()
}

// close stops the scheduler at once: queued requests and executions in
// progress fail with UNAVAILABLE "Server is stopping". It waits for the
// goroutines to exit.
func (s *scheduler) close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
	s.mu.Lock()
	s.stopped = true
	rest := s.queue[s.head:]
	s.queue, s.head = nil, 0
	if s.seq != nil {
		rest = append(rest, s.seq.unqueueAll()...)
	}
	s.mu.Unlock()
	for _, r := range rest {
		if r.state.CompareAndSwap(stateQueued, stateDone) {
			s.pending.Add(-1)
			s.mv.stats.recordFailure(s.e.now()-r.start, reasonOther)
			r.err = errStopping
			r.complete()
		}
	}
}

// now is the engine clock: monotonic nanoseconds since NewEngine.
func (e *Engine) now() int64 {
	return int64(time.Since(e.start))
}

// stallLeft is how long executions must still wait for a stall to end.
func (e *Engine) stallLeft() time.Duration {
	until := e.currentFaults().StallUntil
	if until.IsZero() {
		return 0
	}
	return time.Until(until)
}
