package driver

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// Defaults for Options fields left zero.
const (
	// DefaultStreams is the number of gRPC streams used when streaming.
	DefaultStreams = 4
	// DefaultRetryBackoff is the wait before the first retry; each further
	// retry waits twice as long.
	DefaultRetryBackoff = 10 * time.Millisecond
	// DefaultLateThreshold is how far behind its schedule an open-loop send
	// may be before it counts as late.
	DefaultLateThreshold = 5 * time.Millisecond
	// DefaultResultBatch is how many results a worker collects before
	// handing them over.
	DefaultResultBatch = 64
	// DefaultResultMaxAge bounds how long a finished request's result may
	// wait in a worker's batch before it is handed over.
	DefaultResultMaxAge = 50 * time.Millisecond
	// DefaultDrain is how long the driver waits for requests in flight when
	// a stepped schedule ends.
	DefaultDrain = 5 * time.Second
)

// Options configures a Driver.
type Options struct {
	// Client sends the requests (gRPC or HTTP); a triton.Client will do.
	Client Client
	// Requests are the requests to send; the driver rotates through them
	// (one per --input-data data set). Each is prepared once.
	Requests []*triton.InferRequest
	// BatchSize is the batch size of the requests, reported as
	// Result.Inferences; 0 means 1.
	BatchSize int
	// Load is the initial load profile. Steps of a schedule are set while
	// running, with SetStep.
	Load load.Target
	// Streaming sends over gRPC ModelStreamInfer streams instead of unary
	// calls; Streams is their number (0: DefaultStreams).
	Streaming bool
	Streams   int
	// Decoupled says that the model is decoupled (its config's
	// model_transaction_policy): with Streaming, a request ends at its
	// final response (triton_final_response, or the empty final response
	// that BuildRequests asks for), so that a closed loop keeps exactly
	// Concurrency requests open at the server, and its responses are timed
	// (Result.Responses and Timing). Other models keep the fast path that
	// ends a request at its one response.
	Decoupled bool
	// Timeout bounds each try of a request; 0 means none.
	Timeout time.Duration
	// Retries is how many times a failed request is tried again, on the
	// codes of RetryCodes (nil: DefaultRetryCodes); RetryBackoff the wait
	// before the first retry (0: DefaultRetryBackoff), doubled for each
	// further one up to RetryMaxBackoff (0: DefaultRetryMaxBackoff), each
	// wait jittered over its upper half. Timeout bounds each try, not the
	// whole. Only the final outcome is a Result: its Sent is the first
	// try's, Done the last one's, Retries the count.
	Retries         int
	RetryBackoff    time.Duration
	RetryMaxBackoff time.Duration
	RetryCodes      []codes.Code
	// LateThreshold is the lateness from which an open-loop send counts as
	// late (0: DefaultLateThreshold).
	LateThreshold time.Duration
	// ResultBatch and ResultMaxAge bound how many results, and for how
	// long, a worker collects before sending them on Results (0: defaults).
	ResultBatch  int
	ResultMaxAge time.Duration
	// Seed seeds the Poisson pacer and the sequences' lengths.
	Seed uint64
	// Sequences drives a stateful model in sequences, as perf_analyzer
	// does; nil for other models. The Client must be a SequenceClient.
	Sequences *SequenceOptions
	// LockThreads runs each worker on an OS thread of its own
	// (runtime.LockOSThread), blocked in its request until the response:
	// perf_analyzer's --sync, one blocking request per thread. Without it
	// (--async) workers are goroutines that the Go scheduler multiplexes
	// on GOMAXPROCS threads, resumed when their response arrives.
	LockThreads bool
	// CoarseTimer makes the open-loop pacer wait on Go timers, which on
	// Linux wake up to a millisecond late, instead of a timerfd (for
	// comparison: BenchmarkOpenLoopPaced).
	CoarseTimer bool
	// Plan, when set, runs a load plan (load.Plan: --stages) instead of
	// Load: its clock starts with Run, each stage is a step of the state
	// (Step is the stage's index, the target the stage's), a rate plan's
	// requests are paced by PlanPacer and a concurrency plan's workers
	// follow its level; the run stops at its end, draining for PlanDrain.
	// SetRate and SetConcurrency then scale the rest of the plan. Load
	// gives only MaxInFlight.
	Plan      *load.Plan
	PlanDrain time.Duration
	// Schedule, when set, sends requests at fixed times instead of Load's
	// (a trace, --request-intervals): see Schedule. Its clock starts with
	// Run, and the run stops after its last request, draining for
	// PlanDrain. Load gives only MaxInFlight; SetRate and SetConcurrency
	// do nothing.
	Schedule *Schedule
	// Epoch is the instant Result offsets and load changes count from
	// (zero: when New is called). Drivers whose results one collector
	// counts (one per model of a run over several models) share one, so
	// that their results fall into the same ticks.
	Epoch time.Time
}

// Driver generates load. Create one with New, change it with its Control
// methods, read its results from Results, and run it with Run.
type Driver struct {
	opts     Options
	retry    retryPolicy
	balancer *Balancer // opts.Client when it is one: Results then name the replica
	prepared []triton.Prepared
	sizes    []int32
	seqs     *sequencer // nil unless Options.Sequences
	// textTokens says the requests are an LLM's (triton's GeneratesText):
	// a response is a token where the server sends no count.
	textTokens bool
	results    chan []Result
	// epoch is the instant Result offsets count from; it is fixed in New
	// so that a consumer can relate offsets to wall time before Run.
	epoch time.Time

	mu    sync.Mutex // serializes state changes
	state atomic.Pointer[runState]

	inFlight atomic.Int64
	// pausing is set from Pause to Resume: a worker whose request was the
	// last in flight then marks the pause idle (drained).
	pausing  atomic.Bool
	started  atomic.Bool
	stopOnce sync.Once
	stopReq  chan struct{}
	drain    atomic.Int64 // Stop's drain, in ns

	onChange func(load.Change) // called under mu
}

// runState is an immutable snapshot of what the driver should do; a change
// replaces it and closes the old wake channel, which wakes every goroutine
// waiting on it without a lock on the request path.
type runState struct {
	load   load.Target
	paused bool
	// pausedTotal sums the idle parts of the pauses that ended;
	// pausedSince is when the current one's began, on the results' clock:
	// a pause is idle once the requests in flight at it have finished,
	// and until then (pauseBusy) none of it counts. The time those
	// requests take is time the load ran: their completions are counted
	// over it, not over nothing.
	pausedTotal time.Duration
	pausedSince time.Duration
	pauseBusy   bool
	step        int
	draining    bool
	gen         uint64
	wake        chan struct{}
	plan        planState // where Options.Plan stands
}

// New checks opts, prepares the requests, and returns a driver ready to Run.
func New(opts Options) (*Driver, error) {
	if opts.Client == nil {
		return nil, errors.New("driver: no client")
	}
	if len(opts.Requests) == 0 {
		return nil, errors.New("driver: no requests to send")
	}
	if opts.Retries < 0 || opts.Retries > math.MaxUint8 {
		return nil, fmt.Errorf("driver: retries must be between 0 and %d, got %d", math.MaxUint8, opts.Retries)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("driver: timeout must not be negative, got %v", opts.Timeout)
	}
	if opts.BatchSize > MaxBatchSize {
		return nil, fmt.Errorf("driver: batch size must be at most %d, got %d", MaxBatchSize, opts.BatchSize)
	}
	if opts.Decoupled && !opts.Streaming {
		return nil, errors.New("driver: a decoupled model is served over streaming only; set Streaming")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1
	}
	if opts.Streams <= 0 {
		opts.Streams = DefaultStreams
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = DefaultRetryBackoff
	}
	if opts.RetryMaxBackoff <= 0 {
		opts.RetryMaxBackoff = DefaultRetryMaxBackoff
	}
	retry, err := newRetryPolicy(opts.RetryCodes, opts.RetryBackoff, opts.RetryMaxBackoff)
	if err != nil {
		return nil, err
	}
	if opts.LateThreshold <= 0 {
		opts.LateThreshold = DefaultLateThreshold
	}
	if opts.ResultBatch <= 0 {
		opts.ResultBatch = DefaultResultBatch
	}
	if opts.ResultMaxAge <= 0 {
		opts.ResultMaxAge = DefaultResultMaxAge
	}
	initial := opts.Load
	var ps planState
	if p := opts.Plan; p != nil {
		if opts.Load.Distribution == load.Poisson {
			return nil, errors.New("driver: a load plan paces its requests evenly; it has no Poisson schedule")
		}
		ps = planState{scale: 1, prevScale: 1, stageTarget: p.Target(0)}
		initial = p.Target(0)
		initial.MaxInFlight = opts.Load.MaxInFlight
	}
	if s := opts.Schedule; s != nil {
		if opts.Plan != nil {
			return nil, errors.New("driver: a load plan and a schedule both set the load: give one")
		}
		if err := s.check(len(opts.Requests)); err != nil {
			return nil, fmt.Errorf("driver: %w", err)
		}
		initial = load.Target{Mode: load.Rate, Rate: s.MeanRate(), MaxInFlight: opts.Load.MaxInFlight}
	}
	if err := checkLoad(initial); err != nil {
		return nil, fmt.Errorf("driver: %w", err)
	}
	epoch := opts.Epoch
	if epoch.IsZero() {
		epoch = time.Now()
	}
	d := &Driver{
		epoch:   epoch,
		opts:    opts,
		retry:   retry,
		results: make(chan []Result, 16),
		stopReq: make(chan struct{}),
	}
	for i, r := range opts.Requests {
		p, err := opts.Client.Prepare(r)
		if err != nil {
			return nil, fmt.Errorf("driver: prepare request %d: %w", i+1, err)
		}
		d.prepared = append(d.prepared, p)
		d.sizes = append(d.sizes, int32(min(p.Size(), math.MaxInt32)))
		d.textTokens = d.textTokens || r.GeneratesText()
	}
	if opts.Sequences != nil {
		var err error
		if d.seqs, err = newSequencer(d, *opts.Sequences); err != nil {
			return nil, err
		}
	}
	d.balancer, _ = opts.Client.(*Balancer)
	d.state.Store(&runState{load: initial, wake: make(chan struct{}), plan: ps})
	return d, nil
}

func checkLoad(l load.Target) error {
	switch {
	case l.Concurrency < 0:
		return fmt.Errorf("concurrency must not be negative, got %d", l.Concurrency)
	case l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0):
		return fmt.Errorf("request rate must be a non-negative number, got %v", l.Rate)
	case l.MaxInFlight < 0:
		return fmt.Errorf("max in flight must not be negative, got %d", l.MaxInFlight)
	}
	return nil
}

// Epoch returns the instant that Result's Scheduled, Sent and Done offsets
// count from, on the monotonic clock. It is fixed when the driver is
// created (Options.Epoch), so a consumer can map offsets to wall time
// before and during Run.
func (d *Driver) Epoch() time.Time { return d.epoch }

// Results delivers finished requests in batches; the receiver owns each
// slice. The channel is closed when Run returns, after every result has been
// delivered. Results must be consumed: workers block when nobody reads, and
// Run cannot return until the last batch is taken.
func (d *Driver) Results() <-chan []Result { return d.results }

// Stop stops issuing requests, lets those in flight finish for up to drain,
// then cancels the rest; they are delivered as Cancelled results. A
// stateful model's running sequences get their last request within the
// drain (see SequenceOptions). Stop
// returns at once: Run returns (and Results closes) when the drain is over.
// Like Triton's client WaitForCallbacks, but bounded.
func (d *Driver) Stop(drain time.Duration) {
	d.stopOnce.Do(func() {
		d.drain.Store(int64(max(drain, 0)))
		d.change(func(s *runState) { s.draining = true })
		close(d.stopReq)
	})
}

// OnLoadChange registers f to be told of every change of the load target or
// of the schedule step (not of a pause), and of the start of the drain, with
// the new state and when it took effect. The collector uses it to start a
// new tick at every change, so that no tick spans two loads. f runs under
// the driver's lock and must return at once; register it before Run.
func (d *Driver) OnLoadChange(f func(load.Change)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onChange = f
}

// change replaces the run state under the lock and wakes its waiters.
func (d *Driver) change(f func(s *runState)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.state.Load()
	next := *old
	f(&next)
	next.gen = old.gen + 1
	next.wake = make(chan struct{})
	d.state.Store(&next)
	close(old.wake)
	if d.onChange != nil && (next.load != old.load || next.step != old.step || next.draining != old.draining) {
		d.onChange(load.Change{At: time.Since(d.epoch), State: d.stateOf(&next)})
	}
}

// SetLoad replaces the load profile; negative values are taken as zero. Like
// every method that changes the load, it is safe from any goroutine and takes
// effect within one pacer tick.
func (d *Driver) SetLoad(l load.Target) {
	l.Concurrency = max(l.Concurrency, 0)
	l.MaxInFlight = max(l.MaxInFlight, 0)
	if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
		l.Rate = 0
	}
	d.change(func(s *runState) { s.load = l })
}

// SetConcurrency changes the closed-loop target (and switches to closed
// loop).
func (d *Driver) SetConcurrency(n int) {
	if d.opts.Schedule != nil {
		return
	}
	if p := d.opts.Plan; p != nil {
		if p.Mode == load.Concurrency {
			d.overridePlan(float64(n))
		}
		return
	}
	d.change(func(s *runState) {
		s.load.Mode = load.Concurrency
		s.load.Concurrency = max(n, 0)
	})
}

// SetRate changes the open-loop rate (and switches to open loop).
func (d *Driver) SetRate(r float64) {
	if !(r > 0) || math.IsInf(r, 0) {
		r = 0
	}
	if p := d.opts.Plan; p != nil {
		if p.Mode == load.Rate {
			d.overridePlan(r)
		}
		return
	}
	if d.opts.Schedule != nil {
		return
	}
	d.change(func(s *runState) {
		s.load.Mode = load.Rate
		s.load.Rate = r
	})
}

// SetStep sets the load of step i of a schedule: the step's index is part of
// the state, so that two steps at the same level stay apart in the record.
func (d *Driver) SetStep(i int, l load.Target) {
	l.Concurrency = max(l.Concurrency, 0)
	l.MaxInFlight = max(l.MaxInFlight, 0)
	if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
		l.Rate = 0
	}
	d.change(func(s *runState) { s.load, s.step = l, i })
}

// Pause stops issuing new requests; those in flight complete.
func (d *Driver) Pause() {
	d.pausing.Store(true)
	d.change(func(s *runState) {
		if !s.paused {
			s.paused, s.pausedSince = true, time.Since(d.epoch)
			// The worker that ends the last request in flight marks the
			// pause idle (pauseDrained): pausing is set before this load,
			// and a worker loads pausing after its decrement, so one of
			// the two sees the other.
			s.pauseBusy = d.inFlight.Load() > 0
		}
	})
}

// pauseDrained marks the current pause idle from now: the requests in
// flight at it have finished.
func (d *Driver) pauseDrained() {
	d.change(func(s *runState) {
		if s.paused && s.pauseBusy && d.inFlight.Load() == 0 {
			s.pauseBusy, s.pausedSince = false, time.Since(d.epoch)
		}
	})
}

// Resume continues after Pause. An open-loop schedule restarts from the
// moment of resuming rather than catching up on the paused time.
func (d *Driver) Resume() {
	d.pausing.Store(false)
	d.change(func(s *runState) {
		if s.paused {
			if !s.pauseBusy {
				s.pausedTotal += max(time.Since(d.epoch)-s.pausedSince, 0)
			}
			s.paused, s.pauseBusy = false, false
		}
	})
}

// State returns the current load, pause state and in-flight count.
func (d *Driver) State() load.State { return d.stateOf(d.state.Load()) }

func (d *Driver) stateOf(s *runState) load.State {
	st := load.State{Target: s.load, Paused: s.paused, InFlight: int(d.inFlight.Load()), Step: s.step,
		Draining: s.draining, PausedTotal: s.pausedTotal, PausedSince: s.pausedSince, PauseBusy: s.pauseBusy}
	if d.seqs != nil {
		st.Sequences = int(d.seqs.active.Load())
	}
	return st
}
