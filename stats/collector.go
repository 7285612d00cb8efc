package stats

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
)

// Defaults of the collector's tick interval and sliding window.
const (
	DefaultInterval = time.Second
	DefaultWindow   = 10 * time.Second
)

// MaxCutGrace bounds how long, with an Epoch, a tick stays open after its
// end for results that finished before the end but are still on their way
// from the driver's workers (ReadWait bounds it too).
const MaxCutGrace = 100 * time.Millisecond

// CollectorOptions configures a Collector. Only Results is required.
type CollectorOptions struct {
	// Interval is the tick length (default 1 s).
	Interval time.Duration
	// Window is the sliding window's length (default 10 s).
	Window time.Duration
	// Goodput, when set, is what a good request of a decoupled model
	// meets (StreamingStats.Goodput).
	Goodput Goodput
	// Results are the driver's finished requests; when the channel closes
	// the collector emits a last, partial tick and returns.
	Results <-chan []driver.Result
	// Control reports the driver's load and in-flight count; nil leaves
	// Snapshot.Load with only the mode that the results show.
	Control LoadState
	// Server, Metrics and System are optional sources.
	Server  *ServerPoller
	Metrics *MetricsScraper
	System  *SystemSampler
	// Replicas, for a run over several replicas of the model, replace
	// Server and Metrics: each replica is read on its own, its results
	// (Result.Endpoint, its index here) counted apart, and every Snapshot
	// has a Replicas entry for each, with the aggregate at the top.
	Replicas []ReplicaSource
	// Models, for a run over several models, replace Results, Control
	// and Server (and each replica's Server): each model's results come
	// on its own channel and are counted apart as well as together, its
	// load is its own, its statistics are read from each server, and
	// every Snapshot has a Models entry for each, with the aggregate at
	// the top. Metrics (or each replica's) are read once per server: the
	// models share its GPUs. A change of any model's load ends the tick
	// for all (ModelLoadChanged), so that no tick spans two loads of any
	// model.
	Models []ModelSource
	// ReadWait bounds how long a tick waits after its end for the server's
	// statistics and metrics before it is emitted without them (default
	// half of Interval: on a busy host a read often takes more than a
	// quarter). Results keep being counted meanwhile.
	ReadWait time.Duration
	// ReadTimeout bounds one statistics or metrics read (default two
	// intervals).
	ReadTimeout time.Duration
	// Decoupled says that the model is decoupled: every Snapshot's client
	// stats carry Streaming (see Aggregator.SetDecoupled).
	Decoupled bool
	// Epoch is the instant the results' Done offsets count from (the
	// driver's Epoch). With it a result belongs to the tick in which it
	// finished, whenever its batch arrives; without it (zero), to the tick
	// in which its batch arrives, which trails the server's by the time
	// results wait in the driver's workers.
	Epoch time.Time
}

// LoadState reports a load generator's state; *driver.Driver is one.
type LoadState interface {
	State() load.State
}

// Collector runs the measuring side of a run: it counts the driver's
// results, and at every tick reads the server's statistics and metrics and
// the client's CPU, and emits one Snapshot.
type Collector struct {
	opts   CollectorOptions
	agg    *Aggregator
	latest atomic.Pointer[Snapshot]
	// models count each model's results apart, in a run over several
	// models; agg counts them all.
	models []*Aggregator

	// Load changes and hooks handed over from other goroutines.
	changeMu sync.Mutex
	changes  []modelChange
	atNext   []func()
	changed  chan struct{} // signalled when either is added to
}

// modelChange is a change of the load of model i (0 with one model).
type modelChange struct {
	i int
	load.Change
}

// NewCollector returns a Collector with opts' defaults filled in.
func NewCollector(opts CollectorOptions) *Collector {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.ReadWait <= 0 {
		opts.ReadWait = opts.Interval / 2
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = 2 * opts.Interval
	}
	c := &Collector{opts: opts, agg: NewAggregator(opts.Interval, opts.Window), changed: make(chan struct{}, 1)}
	if opts.Decoupled {
		c.agg.SetDecoupled()
	}
	c.agg.SetEndpoints(len(opts.Replicas))
	c.agg.SetGoodput(opts.Goodput)
	for _, m := range opts.Models {
		a := NewAggregator(opts.Interval, opts.Window)
		if m.Decoupled {
			a.SetDecoupled()
		}
		a.SetGoodput(opts.Goodput)
		c.models = append(c.models, a)
	}
	return c
}

// Prime takes every statistics poller's baseline reading now, each within
// ReadTimeout, all at once. Called before the driver sends its first
// request, it makes the first tick's server numbers count every request of
// the run; Run otherwise primes them itself when it starts, after the
// driver, and the requests that finish in between are in no tick's
// statistics. A poller that fails to read is primed again by Run.
func (c *Collector) Prime(ctx context.Context) {
	var pollers []*ServerPoller
	add := func(p *ServerPoller) {
		if p != nil {
			pollers = append(pollers, p)
		}
	}
	o := &c.opts
	switch {
	case len(o.Models) > 0:
		for _, m := range o.Models {
			for _, p := range m.Servers {
				add(p)
			}
		}
	case len(o.Replicas) > 0:
		for _, r := range o.Replicas {
			add(r.Server)
		}
	default:
		add(o.Server)
	}
	var wg sync.WaitGroup
	for _, p := range pollers {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, o.ReadTimeout)
			defer cancel()
			_ = p.Prime(rctx)
		})
	}
	wg.Wait()
}

// aggregators are the collector's aggregators: the one over every result
// and each model's.
func (c *Collector) aggregators() []*Aggregator {
	return append([]*Aggregator{c.agg}, c.models...)
}

// LoadChanged tells the collector that the load changed (the driver's
// OnLoadChange): the tick under way ends at the change, so that no tick
// spans two loads, and the ticks that follow are labelled with the new load.
// A change within a few milliseconds of a tick's boundary moves to the
// boundary instead of leaving a sliver of a tick. It is safe from any
// goroutine and never blocks.
func (c *Collector) LoadChanged(ch load.Change) { c.loadChanged(0, ch) }

// ModelLoadChanged returns LoadChanged for model i of a run over several
// models (CollectorOptions.Models): that model's driver's OnLoadChange. A
// change of one model's load ends the tick of every model, so that every
// tick is at one load level of each.
func (c *Collector) ModelLoadChanged(i int) func(load.Change) {
	return func(ch load.Change) { c.loadChanged(i, ch) }
}

func (c *Collector) loadChanged(i int, ch load.Change) {
	c.changeMu.Lock()
	c.changes = append(c.changes, modelChange{i, ch})
	c.changeMu.Unlock()
	c.signal()
}

// AtNextTick runs f on the collector's goroutine at the next tick boundary,
// as the tick opens: a load change that f makes starts exactly at the
// boundary. Stepped schedules use it so that every step is whole ticks. It is
// safe from any goroutine; f must return quickly.
func (c *Collector) AtNextTick(f func()) {
	c.changeMu.Lock()
	c.atNext = append(c.atNext, f)
	c.changeMu.Unlock()
}

func (c *Collector) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// takeChanges returns the load changes handed over since the last call.
func (c *Collector) takeChanges() []modelChange {
	c.changeMu.Lock()
	defer c.changeMu.Unlock()
	ch := c.changes
	c.changes = nil
	return ch
}

// takeHooks returns the AtNextTick functions waiting for a boundary.
func (c *Collector) takeHooks() []func() {
	c.changeMu.Lock()
	defer c.changeMu.Unlock()
	f := c.atNext
	c.atNext = nil
	return f
}

// SetWindow changes the sliding window's length from the next tick on; it
// is safe from any goroutine.
func (c *Collector) SetWindow(d time.Duration) {
	for _, a := range c.aggregators() {
		a.SetWindow(d)
	}
}

// ResetWindows restarts the sliding window and the whole-run totals from the
// next tick; it is safe from any goroutine.
func (c *Collector) ResetWindows() {
	for _, a := range c.aggregators() {
		a.ResetWindows()
	}
}

// Latest returns the last emitted Snapshot, and false before the first. It
// is safe from any goroutine; the Snapshot's slices must not be modified.
func (c *Collector) Latest() (Snapshot, bool) {
	if s := c.latest.Load(); s != nil {
		return *s, true
	}
	return Snapshot{}, false
}

// readers run one kind of server read (statistics or metrics), one
// goroutine per server, so that a slow server never stalls the counting of
// results nor the reads of another server. busy and fresh are owned by the
// Run goroutine.
type readers[T any] struct {
	out     chan tagged[T]
	trigger []chan struct{}
	busy    []bool // a read was triggered and its value not yet received
	fresh   []*T   // a value received since the last emitted tick
}

// tagged is a value read from server i.
type tagged[T any] struct {
	i int
	v T
}

// startReaders starts n goroutines, the i-th of which runs read(i) (after
// first(i), if any) each time it is triggered, until ctx ends.
func startReaders[T any](ctx context.Context, n int, timeout time.Duration, first func(context.Context, int), read func(context.Context, int) T) *readers[T] {
	r := &readers[T]{out: make(chan tagged[T], n), busy: make([]bool, n), fresh: make([]*T, n)}
	for i := range n {
		trigger := make(chan struct{}, 1)
		r.trigger = append(r.trigger, trigger)
		go func() {
			if first != nil {
				rctx, cancel := context.WithTimeout(ctx, timeout)
				first(rctx, i)
				cancel()
			}
			for {
				select {
				case <-ctx.Done():
					return
				case <-trigger:
				}
				rctx, cancel := context.WithTimeout(ctx, timeout)
				v := read(rctx, i)
				cancel()
				select {
				case r.out <- tagged[T]{i, v}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return r
}

// start triggers a read of each server unless one is still running or a
// late answer is already waiting to be used: a statistics delta then still
// spans from the previous reading, and no tick is lost.
func (r *readers[T]) start() {
	if r == nil {
		return
	}
	for i := range r.trigger {
		if r.busy[i] || r.fresh[i] != nil {
			continue
		}
		r.busy[i] = true
		r.trigger[i] <- struct{}{}
	}
}

// receive records a value read.
func (r *readers[T]) receive(t tagged[T]) {
	r.busy[t.i] = false
	r.fresh[t.i] = &t.v
}

// take returns server i's fresh value, nil when none came, and forgets it.
func (r *readers[T]) take(i int) *T {
	v := r.fresh[i]
	r.fresh[i] = nil
	return v
}

// outC returns the channel of read values, nil (never ready) without
// readers.
func (r *readers[T]) outC() <-chan tagged[T] {
	if r == nil {
		return nil
	}
	return r.out
}

// waiting reports whether a triggered read has not answered yet.
func (r *readers[T]) waiting() bool {
	if r == nil {
		return false
	}
	for _, b := range r.busy {
		if b {
			return true
		}
	}
	return false
}

// collection is the state of one Collector.Run.
type collection struct {
	c     *Collector
	ctx   context.Context
	emit  func(Snapshot)
	start time.Time
	seq   int
	// Tick boundaries are offsets from origin: the Epoch, or else start.
	origin   time.Time
	byDone   bool          // results go to ticks by Done, not by arrival
	lastEnd  time.Duration // the boundary that ended the last cut tick
	grace    *time.Timer   // the open tick's cut, with byDone
	open     bool          // a tick is past its end but not yet cut
	openAt   time.Time     // the open tick's wall-clock end
	openEnd  time.Duration // the open tick's boundary
	openLoad []load.State  // the open tick's load, per model
	// tickLoad is the load of the tick being counted, one per model (one
	// with a single model): the driver's state at its start, or the last
	// change since. controls are where the states are read.
	tickLoad []load.State
	// levels are each model's load level of the last tick cut (one entry
	// with one model), to restart the sliding windows at a new level.
	levels []levelKey
	// pausedBy is each model's paused time counted in the ticks cut so
	// far.
	pausedBy []time.Duration
	controls []LoadState
	ticker   *time.Ticker
	// sources are the servers read: the one of Server and Metrics, or
	// each replica's; replicas is set for the latter.
	sources  []ReplicaSource
	replicas bool
	// pollers read the statistics: one per server, or with several
	// models one per model and server, model by model.
	pollers  []*ServerPoller
	server   *readers[ServerStats]
	metrics  *readers[ServerMetrics]
	lastMetr []*ServerMetrics
	// lates follow each poller's late reads (see lateRead).
	lates []lateRead
	// pending is a cut tick waiting for its server reads until deadline.
	pending  *Snapshot
	deadline *time.Timer
}

// Run collects until Results closes (then it emits a last, partial tick and
// returns nil) or ctx ends (then it returns ctx's error). emit is called on
// Run's goroutine once per tick and should return quickly: results are not
// counted while it runs.
func (c *Collector) Run(ctx context.Context, emit func(Snapshot)) error {
	if c.opts.Results == nil && len(c.opts.Models) == 0 {
		return fmt.Errorf("stats collector: no results channel to read")
	}
	for _, m := range c.opts.Models {
		if m.Results == nil {
			return fmt.Errorf("stats collector: no results channel to read for model %s", textsafe.Quote(m.Name))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &collection{c: c, ctx: ctx, emit: emit, start: time.Now()}
	r.origin, r.byDone = r.start, !c.opts.Epoch.IsZero()
	if r.byDone {
		r.origin = c.opts.Epoch
	}
	// The first tick begins when Run does, whatever the clock's origin.
	r.lastEnd = r.start.Sub(r.origin)
	r.startReads(ctx)
	r.deadline = time.NewTimer(time.Hour)
	r.deadline.Stop()
	defer r.deadline.Stop()
	r.grace = time.NewTimer(time.Hour)
	r.grace.Stop()
	defer r.grace.Stop()
	r.controls = []LoadState{c.opts.Control}
	results := c.opts.Results
	var merged <-chan modelBatch
	if len(c.opts.Models) > 0 {
		r.controls = r.controls[:0]
		for _, m := range c.opts.Models {
			r.controls = append(r.controls, m.Control)
		}
		results, merged = nil, fanIn(ctx, c.opts.Models)
	}
	r.tickLoad = make([]load.State, len(r.controls))
	r.openLoad = make([]load.State, len(r.controls))
	for i, ctrl := range r.controls {
		if ctrl != nil {
			r.tickLoad[i] = ctrl.State()
		}
	}
	r.ticker = time.NewTicker(c.opts.Interval)
	defer r.ticker.Stop()
	ticker := r.ticker

	// A change of load and a tick that is due end the tick before a batch
	// is counted, so that a collector woken late does not count into the
	// closing tick what finished after it.
	catchUp := func() error {
		select {
		case <-c.changed:
			if err := r.applyChanges(); err != nil {
				return err
			}
		default:
		}
		select {
		case now := <-ticker.C:
			return r.tick(now)
		default:
		}
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case batch, ok := <-results:
			if !ok {
				if err := r.applyChanges(); err != nil {
					return err
				}
				return r.finish()
			}
			if err := catchUp(); err != nil {
				return err
			}
			c.agg.Add(batch)
		case mb, ok := <-merged:
			if !ok {
				if err := r.applyChanges(); err != nil {
					return err
				}
				return r.finish()
			}
			if err := catchUp(); err != nil {
				return err
			}
			// Each model's results are counted in its own aggregator and
			// in the one over all: the per-result work is the same as one
			// model's, twice.
			c.agg.Add(mb.batch)
			c.models[mb.i].Add(mb.batch)
		case <-c.changed:
			if err := r.applyChanges(); err != nil {
				return err
			}
		case now := <-ticker.C:
			if err := r.tick(now); err != nil {
				return err
			}
		case v := <-r.server.outC():
			r.server.receive(v)
			r.afterServerRead(v.i)
			r.emitIfReady()
		case v := <-r.metrics.outC():
			r.metrics.receive(v)
			r.emitIfReady()
		case <-r.grace.C:
			if err := r.cutOpen(); err != nil {
				return err
			}
		case <-r.deadline.C:
			// With a grace as long as ReadWait, the deadline may come first.
			if err := r.cutOpen(); err != nil {
				return err
			}
			r.emitPending()
		}
	}
}

// tick ends the tick at now and starts the server reads. By arrival, the
// client stats are cut at once; by Done, the tick stays open for the grace
// so that its results still on their way land in it. The tick is emitted
// once it is cut and the reads answer, or ReadWait passes.
func (r *collection) tick(now time.Time) error {
	if err := r.tickAt(now, now.Sub(r.origin)); err != nil {
		return err
	}
	// What waits for a boundary runs now, as the next tick begins; a load
	// change it makes belongs to the boundary, however late the collector
	// got to it, so it labels the tick that starts there.
	hooks := r.c.takeHooks()
	for _, f := range hooks {
		f()
	}
	if len(hooks) > 0 {
		for _, ch := range r.c.takeChanges() {
			r.tickLoad[ch.i] = ch.State
		}
	}
	return nil
}

// modelBatch is a batch of model i's results.
type modelBatch struct {
	i     int
	batch []driver.Result
}

// fanIn forwards every model's batches to one channel, closed once every
// model's is: the collector's loop then waits on one channel whatever the
// number of models, and knows each batch's model from the channel it came
// on, so that nothing is added to the per-result path.
func fanIn(ctx context.Context, models []ModelSource) <-chan modelBatch {
	out := make(chan modelBatch, 16)
	var wg sync.WaitGroup
	for i, m := range models {
		wg.Go(func() {
			for b := range m.Results {
				select {
				case out <- modelBatch{i, b}:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

// tickAt ends the tick being counted at end (on the boundaries' clock;
// wall-clock now), labelled with its load, and starts the server reads.
func (r *collection) tickAt(now time.Time, end time.Duration) error {
	// A tick that ends while the one before still waits for its server
	// reads (a change of load just after a boundary, ticks shorter than
	// the grace) lets those reads finish first, within their deadline, so
	// that each tick keeps its own statistics.
	if r.pending != nil {
		r.awaitReads()
		r.emitPending()
	}
	if r.open {
		// The previous tick is cut early.
		if err := r.cutOpen(); err != nil {
			return err
		}
		r.awaitReads()
		r.emitPending()
	}
	r.takeLates()
	r.server.start()
	r.metrics.start()
	r.deadline.Reset(r.c.opts.ReadWait)
	if r.byDone {
		r.open, r.openAt, r.openEnd = true, now, end
		copy(r.openLoad, r.tickLoad)
		r.countInFlight(r.openLoad)
		for _, a := range r.c.aggregators() {
			a.Split(r.openEnd)
		}
		r.grace.Reset(r.cutGrace())
		return nil
	}
	r.countInFlight(r.tickLoad)
	s, err := r.cut(now, end, r.tickLoad)
	if err != nil {
		return err
	}
	r.pending = s
	r.emitIfReady()
	return nil
}

// sliver is how close to a tick's boundary a load change moves to the
// boundary rather than ending a tick of its own.
func (r *collection) sliver() time.Duration { return min(5*time.Millisecond, r.c.opts.Interval/10) }

// applyChanges ends the tick under way at each load change handed over, and
// labels the ticks after it with the new load.
func (r *collection) applyChanges() error {
	for _, ch := range r.c.takeChanges() {
		at := ch.At
		if !r.byDone {
			// Without the driver's clock, the change is now.
			at = time.Since(r.origin)
		}
		// The tick being counted began at the open tick's boundary, or at
		// the last cut.
		begin := r.lastEnd
		if r.open {
			begin = r.openEnd
		}
		if at-begin > r.sliver() {
			now := r.origin.Add(at)
			if err := r.tickAt(now, at); err != nil {
				return err
			}
			r.ticker.Reset(r.c.opts.Interval)
		}
		// A change at (or noticed just after) a boundary applies from it.
		r.tickLoad[ch.i] = ch.State
	}
	return nil
}

// cutGrace is how long a tick stays open after its end.
func (r *collection) cutGrace() time.Duration { return min(r.c.opts.ReadWait, MaxCutGrace) }

// cutOpen cuts the open tick, if any, at its boundary; it is emitted once
// its reads answer or its deadline passes.
func (r *collection) cutOpen() error {
	if !r.open {
		return nil
	}
	r.open = false
	r.grace.Stop()
	s, err := r.cut(r.openAt, r.openEnd, r.openLoad)
	if err != nil {
		return err
	}
	r.pending = s
	r.emitIfReady()
	return nil
}

// finish emits the last, partial tick after the driver finished: every
// result is in, so an open tick is cut at once, and the last tick ends now.
// No tick comes after the last to carry a late statistics read, so it
// waits past ReadWait for its statistics reads to end: a read still running
// (whose answer it carries) and its own, each bounded by ReadTimeout.
// Metrics are gauges: a late one is left out as in any tick.
func (r *collection) finish() error {
	if err := r.cutOpen(); err != nil {
		return err
	}
	if r.pending != nil {
		r.awaitReads()
		r.emitPending()
	}
	now := time.Now()
	r.countInFlight(r.tickLoad)
	s, err := r.cut(now, now.Sub(r.origin), r.tickLoad)
	if err != nil {
		return err
	}
	r.pending = s
	// As at any tick's end: a read still running (or answered and not yet
	// carried) was started for a tick already emitted, and is carried as
	// its late answer; this tick's own read starts after the run's end. Taken
	// as the last tick's own, such a read, made before the run's last
	// requests finished, left them out of every tick's statistics.
	r.takeLates()
	r.awaitServerCount(s.Run.Successes)
	r.server.start()
	r.metrics.start()
	r.deadline.Reset(r.c.opts.ReadWait)
	r.awaitReads()
	r.awaitLastStats()
	r.emitPending()
	return nil
}

// lastCountWait bounds how long the end of a run waits for the servers to
// count its last requests.
const lastCountWait = 2 * time.Second

// awaitServerCount waits, up to lastCountWait (or ReadWait, if longer),
// until the servers have counted the want requests the client saw
// succeed, before the last tick's reads: Triton counts a request only
// after its backend has sent the response, so a reading taken as the last
// answer arrives may not have it yet, and a busy host may hold its
// backend's thread for a while. It does not wait when a server cannot tell
// (no first reading, a failed read, a reset) or counted none at all (a
// backend that reports no request statistics); a server that other
// clients use too has its count reached at once.
func (r *collection) awaitServerCount(want int64) {
	if r.server == nil || want <= 0 || len(r.pollers) == 0 {
		return
	}
	deadline := time.Now().Add(max(r.c.opts.ReadWait, lastCountWait))
	for {
		var served int64
		for _, p := range r.pollers {
			if p == nil {
				return
			}
			ctx, cancel := context.WithTimeout(r.ctx, r.c.opts.ReadTimeout)
			n, ok := p.Served(ctx)
			cancel()
			if !ok {
				return
			}
			served += n
		}
		if served == 0 || served >= want || !time.Now().Before(deadline) {
			return
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// awaitLastStats waits, for the run's last tick, for the statistics reads
// still running past its deadline: no later tick would carry their
// answer, and the requests of the run's end would be in no tick's
// statistics (a pipeline's last step requests among them). A read that
// failed (one past ReadTimeout, on a busy server) kept its poller's
// baseline: it is read once more, whose answer covers both. At most two
// ReadTimeouts in all; metrics, gauges, are not waited for.
func (r *collection) awaitLastStats() {
	if r.server == nil {
		return
	}
	limit := time.NewTimer(2 * r.c.opts.ReadTimeout)
	defer limit.Stop()
	retried := make([]bool, len(r.pollers))
	for {
		for r.server.waiting() {
			select {
			case <-r.ctx.Done():
				return
			case v := <-r.server.outC():
				r.server.receive(v)
				r.afterServerRead(v.i)
			case v := <-r.metrics.outC():
				r.metrics.receive(v)
			case <-limit.C:
				return
			}
		}
		again := false
		for i, v := range r.server.fresh {
			if v != nil && !v.Available && !retried[i] && r.pollers[i] != nil {
				r.server.fresh[i], retried[i], again = nil, true, true
			}
		}
		if !again {
			return
		}
		r.server.start()
	}
}

// awaitReads blocks until the running reads answer or the tick's deadline
// passes; it is used only once no more results can arrive.
func (r *collection) awaitReads() {
	for r.server.waiting() || r.metrics.waiting() {
		select {
		case <-r.ctx.Done():
			return
		case v := <-r.server.outC():
			r.server.receive(v)
			r.afterServerRead(v.i)
		case v := <-r.metrics.outC():
			r.metrics.receive(v)
		case <-r.deadline.C:
			return
		}
	}
}

// cut closes the client side of a tick that ended at wall-clock now and at
// end on the boundaries' clock, under the load it ran at (one state per
// model); it lasted from the previous boundary to end.
func (r *collection) cut(now time.Time, end time.Duration, at []load.State) (*Snapshot, error) {
	d := end - r.lastEnd
	r.lastEnd = end
	r.seq++
	s := &Snapshot{Seq: r.seq, Time: now, Elapsed: now.Sub(r.start), Interval: d}
	var err error
	if len(r.c.models) == 0 {
		st, ctrl := r.stateAtEnd(0, at[0])
		if r.newLevel(0, st) {
			r.c.agg.StartLevel()
		}
		s.Paused = r.pausedIn(0, st, ctrl, end, d)
		err = r.c.agg.Tick(d-s.Paused, ctrl && st.Target.Open(), s)
		s.Load = loadOf(st, ctrl, s.Tick.Scheduled != nil)
		s.Load.Planned = plannedMean(r.controls[0], end-d, end)
	} else {
		err = r.cutModels(s, end, d, at)
	}
	if sys := r.c.opts.System; sys != nil {
		s.System = sys.Sample(r.ctx, s.Tick.Requests)
	}
	return s, err
}

// levelKey is what makes a load level: the target and the step.
type levelKey struct {
	target load.Target
	step   int
}

// newLevel reports whether model i's tick, at st, runs another load level
// than its last one (not its first tick: the window is empty then), and
// remembers st's.
func (r *collection) newLevel(i int, st load.State) bool {
	if r.levels == nil {
		r.levels = make([]levelKey, len(r.tickLoad))
		for j := range r.levels {
			r.levels[j].step = -1
		}
	}
	k := levelKey{st.Target, st.Step}
	prev := r.levels[i]
	r.levels[i] = k
	return prev.step >= 0 && prev != k
}

// countInFlight sets each model's requests in flight in at from its
// driver, as a tick ends. It is counted then, not as the tick is cut (a
// grace later, with an epoch): by then the next tick's sends are in the
// count (at a level's start, a grace of sends that its finished requests
// cannot yet show), and the sends the diagnosis and the stepper count
// (finished plus the growth of those in flight) would come out short.
func (r *collection) countInFlight(at []load.State) {
	for i, ctrl := range r.controls {
		if ctrl != nil {
			at[i].InFlight = ctrl.State().InFlight
		}
	}
}

// stateAtEnd is model i's load during the tick with the sequence count and
// the pause as at its end (the in-flight count, countInFlight's, is at's),
// and whether its driver's state is known at all.
func (r *collection) stateAtEnd(i int, st load.State) (load.State, bool) {
	ctrl := r.controls[i]
	if ctrl == nil {
		return st, false
	}
	cur := ctrl.State()
	st.Paused, st.Sequences = cur.Paused, cur.Sequences
	st.PausedTotal, st.PausedSince, st.PauseBusy = cur.PausedTotal, cur.PausedSince, cur.PauseBusy
	return st, true
}

// pausedIn is how much of model i's tick of length d that ended at end its
// load was paused, from its driver's state at the cut; what the cut read
// late (a pause that began after end) counts in the next tick, so the
// ticks' pauses add up to the run's.
func (r *collection) pausedIn(i int, st load.State, known bool, end, d time.Duration) time.Duration {
	if !known {
		return 0
	}
	if r.pausedBy == nil {
		r.pausedBy = make([]time.Duration, len(r.tickLoad))
	}
	by := st.PausedBy(end)
	p := min(max(by-r.pausedBy[i], 0), d)
	r.pausedBy[i] += p
	return p
}

// cutModels closes the client side of a tick of a run over several models:
// each model's entry from its own aggregator, the top from the one over
// every result, with the models' loads together.
func (r *collection) cutModels(s *Snapshot, end, d time.Duration, at []load.State) error {
	var err error
	// The run's load was paused while every model's was.
	s.Paused = d
	s.Models = make([]Model, len(r.c.models))
	loads := make([]Load, len(r.c.models))
	anyOpen, anyNew := false, false
	for i, a := range r.c.models {
		src := &r.c.opts.Models[i]
		st, ctrl := r.stateAtEnd(i, at[i])
		open := ctrl && st.Target.Open()
		anyOpen = anyOpen || open
		if r.newLevel(i, st) {
			a.StartLevel()
			anyNew = true
		}
		p := r.pausedIn(i, st, ctrl, end, d)
		s.Paused = min(s.Paused, p)
		var ms Snapshot
		if e := a.Tick(d-p, open, &ms); e != nil && err == nil {
			err = e
		}
		m := &s.Models[i]
		m.Name, m.Version = src.Name, src.Version
		m.Load = loadOf(st, ctrl, ms.Tick.Scheduled != nil)
		m.Load.Planned = plannedMean(r.controls[i], end-d, end)
		m.Tick, m.Window, m.Run = ms.Tick, ms.Window, ms.Run
		m.Histogram, m.ScheduledHistogram = ms.Histogram, ms.ScheduledHistogram
		m.TTFTHistogram, m.ITLHistogram, m.ResponsesHistogram = ms.TTFTHistogram, ms.ITLHistogram, ms.ResponsesHistogram
		m.SequenceHistogram = ms.SequenceHistogram
		loads[i] = m.Load
	}
	if anyNew {
		r.c.agg.StartLevel()
	}
	if e := r.c.agg.Tick(d-s.Paused, anyOpen, s); e != nil && err == nil {
		err = e
	}
	s.Load = AggregateLoad(loads)
	return err
}

// loadOf describes the driver's state; without a Control only the mode that
// the results showed is known.
func loadOf(st load.State, known, openLoop bool) Load {
	if !known {
		if openLoop {
			return Load{Mode: load.Rate}
		}
		return Load{Mode: load.Concurrency}
	}
	return LoadOf(st)
}

// emitIfReady emits the pending tick once no read is outstanding.
func (r *collection) emitIfReady() {
	if r.pending != nil && !r.server.waiting() && !r.metrics.waiting() {
		r.emitPending()
	}
}

// emitPending completes the pending tick with whatever the reads gave and
// emits it. A statistics read that has not answered leaves Server
// unavailable (its answer, when it comes, goes to the next tick and covers
// both); a metrics read that has not answered repeats the last reading,
// since its values are gauges. With replicas, each replica's reads go to
// its entry and the Snapshot's Server and Metrics are their aggregate.
func (r *collection) emitPending() {
	s := r.pending
	if s == nil {
		return
	}
	r.pending = nil
	r.deadline.Stop()
	n := len(r.sources)
	servers := make([]ServerStats, len(r.pollers))
	metrics := make([]ServerMetrics, n)
	var lates []lateCell
	for i := range servers {
		servers[i] = r.serverOf(i)
		if l := r.noteLate(i, s.Seq, servers[i].Available); l.v != nil {
			if lates == nil {
				lates = make([]lateCell, len(servers))
			}
			lates[i] = l
		}
	}
	for i := range n {
		metrics[i] = r.metricsOf(i)
	}
	if len(r.c.models) > 0 {
		r.serverOfModels(s, servers, metrics)
		lateOfModels(s, lates, n, r.replicas)
	} else if r.replicas {
		if len(s.Replicas) != n {
			// Without SetEndpoints' counts (not expected), the entries
			// still name the replicas.
			s.Replicas = make([]Replica, n)
		}
		for i, src := range r.sources {
			rep := &s.Replicas[i]
			rep.URL, rep.Up = src.URL, src.Up == nil || src.Up()
			rep.Server, rep.Metrics = servers[i], metrics[i]
		}
		if r.server != nil {
			s.Server = AggregateServer(servers)
		}
		if r.metrics != nil {
			s.Metrics = AggregateMetrics(metrics)
		}
		lateOfReplicas(s, lates)
	} else if n == 1 {
		if r.server != nil {
			s.Server = servers[0]
			if lates != nil {
				s.ServerLate, s.ServerLateSeq = lates[0].v, lates[0].seq
			}
		}
		if r.metrics != nil {
			s.Metrics = metrics[0]
		}
	}
	r.emit(*s)
	r.c.latest.Store(s)
}

// serverOfModels fills the server side of a tick of a run over several
// models from cells, each model's statistics on each server (model by
// model): a model's entry adds its servers', a replica's adds its models',
// and the top adds them all. Metrics are each server's, once.
func (r *collection) serverOfModels(s *Snapshot, cells []ServerStats, metrics []ServerMetrics) {
	n := len(r.sources)
	if r.server != nil && len(s.Models) == len(r.c.models) {
		for m := range s.Models {
			parts := cells[m*n : (m+1)*n]
			if n == 1 {
				s.Models[m].Server = parts[0]
			} else {
				s.Models[m].Server = AggregateServer(parts)
			}
		}
	}
	if r.replicas {
		if len(s.Replicas) != n {
			s.Replicas = make([]Replica, n)
		}
		col := make([]ServerStats, len(r.c.models))
		for i, src := range r.sources {
			rep := &s.Replicas[i]
			rep.URL, rep.Up = src.URL, src.Up == nil || src.Up()
			rep.Metrics = metrics[i]
			if r.server != nil {
				for m := range col {
					col[m] = cells[m*n+i]
				}
				rep.Server = acrossModels(col)
			}
		}
	}
	if r.server != nil {
		s.Server = acrossModels(cells)
	}
	if r.metrics != nil {
		if r.replicas {
			s.Metrics = AggregateMetrics(metrics)
		} else {
			s.Metrics = metrics[0]
		}
	}
}

// acrossModels adds the statistics of several models: counts add and
// averages are per request of any of them (AggregateServer), and it names
// no model.
func acrossModels(parts []ServerStats) ServerStats {
	s := aggregateServer(parts, false)
	s.Model, s.Version = "", ""
	return s
}

// serverOf is statistics reading i's answer for the pending tick.
func (r *collection) serverOf(i int) ServerStats {
	if r.server == nil {
		return ServerStats{}
	}
	if v := r.server.take(i); v != nil {
		return *v
	}
	p := r.pollers[i]
	if p == nil {
		return ServerStats{Err: "statistics not read"}
	}
	return ServerStats{Model: p.model, Version: p.version, Err: "statistics " + r.noAnswer()}
}

// metricsOf is server i's metrics for the pending tick.
func (r *collection) metricsOf(i int) ServerMetrics {
	if r.metrics == nil {
		return ServerMetrics{}
	}
	if v := r.metrics.take(i); v != nil {
		r.lastMetr[i] = v
		return *v
	}
	if r.lastMetr[i] != nil {
		return *r.lastMetr[i]
	}
	if r.sources[i].Metrics == nil {
		return ServerMetrics{Err: "metrics not read"}
	}
	return ServerMetrics{Err: "metrics " + r.noAnswer()}
}

func (r *collection) noAnswer() string {
	return fmt.Sprintf("no answer within %v", r.c.opts.ReadWait)
}

// startReads starts the server reads: one server's (Server, Metrics) or
// each replica's. A kind that no server has is not read at all.
func (r *collection) startReads(ctx context.Context) {
	o := &r.c.opts
	r.sources, r.replicas = o.Replicas, len(o.Replicas) > 0
	if !r.replicas {
		r.sources = []ReplicaSource{{Server: o.Server, Metrics: o.Metrics}}
	}
	anyServer, anyMetrics := false, false
	for _, src := range r.sources {
		anyServer = anyServer || src.Server != nil
		anyMetrics = anyMetrics || src.Metrics != nil
	}
	n := len(r.sources)
	if len(o.Models) > 0 {
		anyServer = false
		for _, m := range o.Models {
			for i := range n {
				var p *ServerPoller
				if i < len(m.Servers) {
					p = m.Servers[i]
				}
				r.pollers = append(r.pollers, p)
				anyServer = anyServer || p != nil
			}
		}
	} else {
		for _, src := range r.sources {
			r.pollers = append(r.pollers, src.Server)
		}
	}
	if anyServer {
		prime := func(ctx context.Context, i int) {
			if p := r.pollers[i]; p != nil {
				_ = p.Prime(ctx)
			}
		}
		poll := func(ctx context.Context, i int) ServerStats {
			p := r.pollers[i]
			if p == nil {
				return ServerStats{Err: "statistics not read"}
			}
			return p.Poll(ctx)
		}
		r.server = startReaders(ctx, len(r.pollers), o.ReadTimeout, prime, poll)
		r.lates = make([]lateRead, len(r.pollers))
	}
	if anyMetrics {
		r.lastMetr = make([]*ServerMetrics, n)
		// Each source's reads run on one goroutine: its entry is its own.
		fresh := make([]gaugeFreshness, n)
		scrape := func(ctx context.Context, i int) ServerMetrics {
			src := r.sources[i]
			if src.Metrics == nil {
				return ServerMetrics{Err: "metrics not read"}
			}
			m := src.Metrics.Scrape(ctx)
			fresh[i].check(m.GPUs, time.Now())
			if r.replicas {
				for j := range m.GPUs {
					m.GPUs[j].Replica = src.URL
				}
			}
			return m
		}
		r.metrics = startReaders(ctx, n, o.ReadTimeout, nil, scrape)
	}
}
