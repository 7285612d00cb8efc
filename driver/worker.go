package driver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// worker sends one request at a time. Closed-loop workers send back to
// back; open-loop workers send when the pacer hands them a ticket. Each
// worker batches its own results, so that the request path shares no lock
// with other workers.
type worker struct {
	r     *run
	id    int   // position in run.workers, encoded in stream request ids
	index int   // position among the workers of its kind
	open  bool  // open-loop (ticket) worker
	next  int   // next request to send, rotating through the prepared ones
	req   int32 // the request a ticket names, -1 for the next in turn
	timer *time.Timer
	// unavailable is the closed-loop pause after an UNAVAILABLE answer,
	// doubled while they last; 0 after a request that was not.
	unavailable time.Duration
	// endpoint is the replica the last try went to (see Balancer).
	endpoint uint16

	// Unary timeouts: a context cancelled by ttimer, see try.
	tctx   context.Context
	ttimer *time.Timer
	// phases times the client's part of each unary request; pctx, made
	// once, carries it (triton.WithPhases).
	phases triton.Phases
	pctx   context.Context

	mu         sync.Mutex // guards batch against the flusher
	batch      []Result
	batchFirst time.Duration // Done of the oldest result in batch

	// Streaming only.
	stream  *stream
	idBuf   []byte
	seq     uint64
	pending atomic.Uint64 // seq of the request awaiting its response; 0: none
	reply   chan streamReply
	last    streamReply // the last try's reply, decoupled models only
	sphases streamPhases

	// Sequences only: a closed-loop worker's own sequence slot, the
	// random pick of an open-loop one (without Serial), and the request
	// taken for the next send.
	slot *seqSlot
	pick *rand.Rand
	cur  seqRequest
}

// The closed-loop pause after an UNAVAILABLE answer starts at
// minUnavailableBackoff and doubles up to maxUnavailableBackoff.
const (
	minUnavailableBackoff = time.Millisecond
	maxUnavailableBackoff = 100 * time.Millisecond
)

// streamReply is what the receiver hands the worker when its request
// ends. For a decoupled model it also carries the responses' timing, taken
// by the receiver as they arrived.
type streamReply struct {
	size int
	err  error
	// arrived is when the final response reached the client, sent when
	// the request was written where the transport reports it apart (text
	// endpoints), on the run's clock; 0 when unknown.
	arrived, sent time.Duration
	// Decoupled models only.
	done      time.Duration
	responses int32
	timing    *ResponseTiming
}

func newWorker(r *run, id, index int, open bool) *worker {
	w := &worker{r: r, id: id, index: index, open: open, req: -1, timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	if len(r.streams) > 0 {
		w.stream = r.streams[id%len(r.streams)]
		w.reply = make(chan streamReply, 1)
	}
	if r.seqs != nil && !open {
		w.slot = r.seqs.newSlot(r.d.opts.Seed, index)
	}
	return w
}

// loop runs until the run quits. A worker that the current load does not
// need (closed loop: index ≥ concurrency; open loop: index ≥ MaxInFlight)
// or that belongs to the other mode waits for the next change of state.
func (w *worker) loop() {
	r := w.r
	defer r.wg.Done()
	if r.d.opts.LockThreads {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	defer w.flushAll()
	for {
		st := r.d.state.Load()
		select {
		case <-r.quit:
			w.endSequences()
			return
		default:
		}
		if !w.wanted(st) {
			// Sequences end before the worker rests, as perf_analyzer
			// completes them when its load stops.
			if r.seqs != nil && w.endSequence() {
				continue
			}
			select {
			case <-st.wake:
			case <-r.quit:
				w.endSequences()
				return
			}
			continue
		}
		if !w.open {
			now := r.now()
			if w.do(now, now) == codes.Unavailable {
				// An unreachable or refusing server fails requests at
				// once: without a pause a closed loop would spin, turning
				// the client into the bottleneck it measures. The failures
				// still count.
				w.unavailable = min(max(2*w.unavailable, minUnavailableBackoff), maxUnavailableBackoff)
				w.sleep(w.unavailable)
			} else {
				w.unavailable = 0
			}
			continue
		}
		// The pacer, not this worker, takes the ticket's worker off the
		// idle count: it dispatches the next ticket before this goroutine
		// may run, and a stale count would make it wait for a busy worker
		// instead of starting a new one.
		r.idle.Add(1)
		select {
		case t := <-r.tickets:
			w.req = t.req
			w.do(t.at, r.now())
		case <-st.wake:
			r.idle.Add(-1)
		case <-r.quit:
			r.idle.Add(-1)
			w.endSequences()
			return
		}
	}
}

func (w *worker) wanted(st *runState) bool {
	if st.paused {
		return false
	}
	if w.open {
		return st.load.Mode == load.Rate && (st.load.MaxInFlight == 0 || w.index < st.load.MaxInFlight)
	}
	return st.load.Mode == load.Concurrency && w.index < st.concurrency(w.r.d.opts.Plan != nil)
}

// do sends one request, with its retries, records its Result and returns
// its code.
func (w *worker) do(scheduled, sent time.Duration) codes.Code {
	r := w.r
	d := r.d
	i := w.next
	if w.req >= 0 {
		i, w.req = int(w.req), -1
	} else if w.next++; w.next == len(d.prepared) {
		w.next = 0
	}
	p, size := d.prepared[i], d.sizes[i]
	var sr *seqRequest
	if r.seqs != nil {
		if ok, err := w.nextInSequence(&sent); !ok {
			if err == nil {
				return codes.OK // the load changed while waiting: nothing sent
			}
			w.add(Result{Scheduled: scheduled, Sent: sent, Done: r.now(), Code: codes.Internal, Err: err,
				Inferences: uint16(d.opts.BatchSize)})
			return codes.Internal
		}
		sr = &w.cur
		p, size = sr.p, int32(min(sr.p.Size(), math.MaxInt32))
	}
	d.inFlight.Add(1)
	res := Result{
		Scheduled:  scheduled,
		Sent:       sent,
		BytesSent:  size,
		Inferences: uint16(d.opts.BatchSize),
		Late:       w.open && sent-scheduled > d.opts.LateThreshold,
	}
	for attempt := 0; ; attempt++ {
		n, err := w.try(p)
		if err == nil {
			res.BytesReceived = int32(min(n, 1<<31-1))
			if w.stream == nil {
				res.ClientSend, res.ClientRecv = nsU32(w.phases.Send), nsU32(w.phases.Recv)
			}
			break
		}
		if r.reqCtx.Err() != nil {
			res.Code, res.Err, res.Cancelled = codes.Canceled, err, true
			break
		}
		code := triton.ErrorCode(err)
		if attempt >= d.opts.Retries || !d.retry.retryable(code) {
			res.Code, res.Err = code, err
			break
		}
		if !w.sleep(d.retry.backoff(attempt, jitter())) {
			res.Code, res.Err, res.Cancelled = codes.Canceled, err, true
			break
		}
		res.Retries++
	}
	res.Done = r.now()
	res.Endpoint = w.endpoint
	if d.opts.Decoupled {
		res.Decoupled = true
		if w.last.done > 0 {
			// The receiver's clock, as for the responses before it.
			res.Done = w.last.done
			if res.Code == codes.OK && res.Err == nil {
				res.Responses, res.Timing = w.last.responses, w.last.timing
			}
		}
		w.last = streamReply{}
	}
	if w.stream != nil && res.Code == codes.OK && res.Err == nil {
		w.sphases.fill(&res)
	}
	if sr != nil {
		w.endedInSequence(&res)
	}
	if d.inFlight.Add(-1) == 0 && d.pausing.Load() {
		d.pauseDrained()
	}
	w.add(res)
	return res.Code
}

// try sends once, over the worker's stream or as a unary call.
func (w *worker) try(p triton.Prepared) (int, error) {
	if w.stream != nil {
		return w.tryStream(p)
	}
	r := w.r
	if w.pctx == nil {
		w.pctx = triton.WithPhases(r.reqCtx, &w.phases)
	}
	t := r.d.opts.Timeout
	if t <= 0 {
		return w.send(w.pctx, p)
	}
	// A context.WithTimeout per request costs 4 allocations and about 2µs
	// (BenchmarkClosedLoopNopTimeout): the worker instead keeps one
	// cancellable context and re-arms one timer per request, and replaces
	// both only after a timeout fired.
	if w.tctx == nil {
		ctx, cancel := context.WithCancel(w.pctx)
		w.tctx = ctx
		w.ttimer = time.AfterFunc(time.Hour, cancel)
		w.ttimer.Stop()
	}
	w.ttimer.Reset(t)
	n, err := w.send(w.tctx, p)
	if !w.ttimer.Stop() {
		w.tctx = nil
		if err != nil && r.reqCtx.Err() == nil {
			err = fmt.Errorf("no response within the %v timeout: %w", t, context.DeadlineExceeded)
		}
	}
	return n, err
}

// sleep waits for d, or returns false when the run's requests are
// cancelled.
func (w *worker) sleep(d time.Duration) bool {
	w.timer.Reset(d)
	select {
	case <-w.timer.C:
		return true
	case <-w.r.reqCtx.Done():
		w.timer.Stop()
		return false
	}
}

// add appends a result to the worker's batch and hands the batch over when
// full.
func (w *worker) add(res Result) {
	var full []Result
	w.mu.Lock()
	if w.batch == nil {
		w.batch = make([]Result, 0, w.r.d.opts.ResultBatch)
		w.batchFirst = res.Done
	}
	w.batch = append(w.batch, res)
	if len(w.batch) == cap(w.batch) {
		full, w.batch = w.batch, nil
	}
	w.mu.Unlock()
	if full != nil {
		w.r.d.results <- full
	}
}

// flushOlder hands over the batch if its oldest result finished before t.
func (w *worker) flushOlder(t time.Duration) {
	var b []Result
	w.mu.Lock()
	if len(w.batch) > 0 && w.batchFirst <= t {
		b, w.batch = w.batch, nil
	}
	w.mu.Unlock()
	if b != nil {
		w.r.d.results <- b
	}
}

func (w *worker) flushAll() { w.flushOlder(1<<63 - 1) }

// nsU32 is d in ns, saturated to fit a Result's uint32.
func nsU32(d time.Duration) uint32 { return uint32(min(max(d, 0), math.MaxUint32)) }
