package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton"
)

// Balance is how a Balancer picks the replica for each request.
type Balance string

// Balance policies.
const (
	// LeastOutstanding sends each request to the replica with the fewest
	// requests in flight from this client (ties in turn). It is the
	// default: a replica that is slower (a busier or smaller GPU, a longer
	// queue, a stall) holds its requests longer and so gets fewer new ones,
	// where round robin would keep giving it an equal share and, in a
	// closed loop, let the slowest replica set everyone's pace.
	LeastOutstanding Balance = "least"
	// RoundRobin sends requests to the replicas in turn, equal shares
	// whatever their speed: what a plain L4 balancer or a Kubernetes
	// Service spreading connections does.
	RoundRobin Balance = "rr"
)

// Defaults of BalancerOptions.
const (
	// DefaultProbeInterval is how often a replica that was taken out is
	// asked whether it is live again.
	DefaultProbeInterval = time.Second
	// DefaultProbeTimeout bounds one liveness probe.
	DefaultProbeTimeout = time.Second
)

// ReplicaClient is what a Balancer needs of each replica's client: what
// the driver needs, and a liveness probe. A triton.Client is one.
type ReplicaClient interface {
	Client
	// ServerLive reports whether the server is live.
	ServerLive(ctx context.Context) (bool, error)
}

var _ ReplicaClient = triton.Client(nil)

// BalancerOptions configures a Balancer.
type BalancerOptions struct {
	// Policy picks the replica of each request (default LeastOutstanding).
	Policy Balance
	// ProbeInterval is how often a replica taken out is probed
	// (default DefaultProbeInterval); ProbeTimeout bounds each probe
	// (default DefaultProbeTimeout).
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
}

// Balancer is a Client over several replicas of the same model: each
// request goes to one of them, picked by the policy among the replicas
// that are up. The driver records which one in Result.Endpoint, the
// replica's index in the order given to NewBalancer.
//
// A request that fails with UNAVAILABLE without an HTTP answer (a refused
// or broken connection, a gRPC transport error, a server answering
// UNAVAILABLE) makes the balancer ask the replica at once whether it is
// live (ServerLive). A replica that does not answer is taken out: no
// request goes to it while it is out, and it is probed every
// ProbeInterval until it answers, then put back. A live replica that
// answered UNAVAILABLE (a full queue) stays in: it is overloaded, not
// gone, and the run should show it.
//
// While every replica is out, requests still go to them in turn and fail
// with their own errors, so that every request belongs to a replica.
type Balancer struct {
	eps     []*endpoint
	policy  Balance
	every   time.Duration
	timeout time.Duration
	// next rotates round robin, and the start of least-outstanding's scan
	// so that ties are shared.
	next    atomic.Uint64
	streams atomic.Uint64 // rotates the replicas of new streams

	ctx    context.Context // cancelled by Close; bounds the probes
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed against wg.Add after Close
	closed bool
	wg     sync.WaitGroup
}

// endpoint is one replica. It is padded to two cache lines so that the
// in-flight counters of two replicas, written by every request, never
// share one.
type endpoint struct {
	c        ReplicaClient
	inFlight atomic.Int64
	down     atomic.Bool
	// watching is set while a goroutine checks or probes the replica.
	watching atomic.Bool
	// liveUntil is when (UnixNano) a check that found the replica live
	// stops excusing its UNAVAILABLE answers: an overloaded replica that
	// rejects many requests is checked once per probe interval, not once
	// per rejection.
	liveUntil atomic.Int64
	downs     atomic.Int64
	_         [128 - 48]byte
}

// NewBalancer returns a Balancer over replicas, all taken as up. Close
// stops its probes; it does not close the replicas' clients.
func NewBalancer(replicas []ReplicaClient, o BalancerOptions) (*Balancer, error) {
	if len(replicas) == 0 {
		return nil, errors.New("driver: balancer: no replicas")
	}
	if len(replicas) > MaxReplicas {
		return nil, fmt.Errorf("driver: balancer: %d replicas, at most %d", len(replicas), MaxReplicas)
	}
	switch o.Policy {
	case "":
		o.Policy = LeastOutstanding
	case LeastOutstanding, RoundRobin:
	default:
		return nil, fmt.Errorf("driver: balancer: unknown policy %s: use %s or %s", textsafe.Quote(string(o.Policy)), RoundRobin, LeastOutstanding)
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	b := &Balancer{policy: o.Policy, every: o.ProbeInterval, timeout: o.ProbeTimeout}
	for _, c := range replicas {
		if c == nil {
			return nil, errors.New("driver: balancer: a replica without a client")
		}
		b.eps = append(b.eps, &endpoint{c: c})
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b, nil
}

// MaxReplicas is the most replicas a Balancer takes: Result.Endpoint is a
// uint16.
const MaxReplicas = math.MaxUint16 + 1

// MaxBatchSize is the largest batch size (Options.BatchSize) a request may
// have: Result.Inferences is a uint16, which leaves room in a Result for
// Endpoint without growing it.
const MaxBatchSize = math.MaxUint16

// Len is the number of replicas.
func (b *Balancer) Len() int { return len(b.eps) }

// Policy is the balancing policy in use.
func (b *Balancer) Policy() Balance { return b.policy }

// Up reports whether replica i is in (not taken out after a failure).
func (b *Balancer) Up(i int) bool { return !b.eps[i].down.Load() }

// UpCount is the number of replicas in.
func (b *Balancer) UpCount() int {
	n := 0
	for _, e := range b.eps {
		if !e.down.Load() {
			n++
		}
	}
	return n
}

// Downs is how many times replica i was taken out.
func (b *Balancer) Downs(i int) int64 { return b.eps[i].downs.Load() }

// InFlight is the number of unary requests in flight to replica i.
func (b *Balancer) InFlight(i int) int64 { return b.eps[i].inFlight.Load() }

// Close stops the probes and waits for them; requests may still be sent,
// but a replica that fails is no longer taken out.
func (b *Balancer) Close() {
	b.mu.Lock()
	b.closed = true
	b.cancel()
	b.mu.Unlock()
	b.wg.Wait()
}

// balancedPrepared is a request prepared once for each replica.
type balancedPrepared struct {
	per  []triton.Prepared
	size int
}

func (p *balancedPrepared) Size() int { return p.size }

// Prepare encodes req for every replica.
func (b *Balancer) Prepare(req *triton.InferRequest) (triton.Prepared, error) {
	bp := &balancedPrepared{per: make([]triton.Prepared, len(b.eps))}
	for i, e := range b.eps {
		p, err := e.c.Prepare(req)
		if err != nil {
			return nil, fmt.Errorf("replica %d: %w", i+1, err)
		}
		bp.per[i] = p
		if i == 0 {
			bp.size = p.Size()
		}
	}
	return bp, nil
}

// errNotBalanced is Send's error for a request another client prepared.
var errNotBalanced = errors.New("driver: balancer: request not prepared by this balancer")

// Send sends p to the replica the policy picks.
func (b *Balancer) Send(ctx context.Context, p triton.Prepared) (int, error) {
	n, _, err := b.SendTo(ctx, p)
	return n, err
}

// SendTo is Send that also returns the replica the request went to.
func (b *Balancer) SendTo(ctx context.Context, p triton.Prepared) (n, replica int, err error) {
	bp, ok := p.(*balancedPrepared)
	if !ok {
		return 0, 0, errNotBalanced
	}
	i := b.pick()
	e := b.eps[i]
	e.inFlight.Add(1)
	n, err = e.c.Send(ctx, bp.per[i])
	e.inFlight.Add(-1)
	if err != nil && ctx.Err() == nil {
		b.failed(i, err)
	}
	return n, i, err
}

// pick chooses the replica of the next request among those up; when all
// are out, the next in turn.
func (b *Balancer) pick() int {
	n := uint64(len(b.eps))
	if n == 1 {
		return 0
	}
	start := int(b.next.Add(1) % n)
	if b.policy == RoundRobin {
		for k := range len(b.eps) {
			i := start + k
			if i >= len(b.eps) {
				i -= len(b.eps)
			}
			if !b.eps[i].down.Load() {
				return i
			}
		}
		return start
	}
	best, fewest := start, int64(math.MaxInt64)
	for k := range len(b.eps) {
		i := start + k
		if i >= len(b.eps) {
			i -= len(b.eps)
		}
		e := b.eps[i]
		if e.down.Load() {
			continue
		}
		if f := e.inFlight.Load(); f < fewest {
			best, fewest = i, f
		}
	}
	return best
}

// suspect reports whether a failure may mean that the replica is gone: an
// UNAVAILABLE that is not an HTTP answer (HTTP 503 is a live server
// speaking). A gRPC UNAVAILABLE may be either, which the check tells apart.
func suspect(err error) bool {
	if triton.ErrorCode(err) != codes.Unavailable {
		return false
	}
	var te *triton.Error
	return !errors.As(err, &te) || te.HTTPStatus == 0
}

// failed looks into a failure of replica i: if it may mean the replica is
// gone, one goroutine checks it, and takes it out and probes it if it does
// not answer.
func (b *Balancer) failed(i int, err error) {
	if !suspect(err) {
		return
	}
	e := b.eps[i]
	if e.down.Load() || time.Now().UnixNano() < e.liveUntil.Load() {
		return
	}
	if !e.watching.CompareAndSwap(false, true) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		e.watching.Store(false)
		return
	}
	b.wg.Add(1)
	go b.watch(e)
}

// watch checks a replica that failed: a live one stays in; one that does
// not answer is taken out and probed every interval until it answers.
func (b *Balancer) watch(e *endpoint) {
	defer b.wg.Done()
	defer e.watching.Store(false)
	if b.live(e) {
		e.liveUntil.Store(time.Now().Add(b.every).UnixNano())
		return
	}
	if b.ctx.Err() != nil {
		return
	}
	e.down.Store(true)
	e.downs.Add(1)
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
		if b.probe(e) {
			e.down.Store(false)
			return
		}
	}
}

// live asks a replica whether it is live, within the probe timeout, and
// fails at once when its connection is down: a replica that fails
// requests fast must be found out fast, since least outstanding would
// send it more of them.
func (b *Balancer) live(e *endpoint) bool {
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	ok, err := e.c.ServerLive(ctx)
	return err == nil && ok
}

// probe asks a replica that is out whether it is live again. A gRPC
// connection that failed waits longer and longer before it dials again
// (up to two minutes): the probe has it dial now, and waits for it within
// the probe timeout, so that a replica restarted on the same port is seen
// as soon as it serves.
func (b *Balancer) probe(e *endpoint) bool {
	if r, ok := e.c.(interface{ ResetConnectBackoff() }); ok {
		r.ResetConnectBackoff()
	}
	w, ok := e.c.(interface {
		ServerLiveWait(context.Context) (bool, error)
	})
	if !ok {
		return b.live(e)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	live, err := w.ServerLiveWait(ctx)
	return err == nil && live
}

// OpenStream opens a stream on the next replica in turn that is up, or
// that opens when the ones before it do not. A stream stays on its
// replica: when that replica fails, the stream fails, and the driver's
// next OpenStream goes to a replica that is up.
func (b *Balancer) OpenStream(ctx context.Context) (triton.Stream, error) {
	n := len(b.eps)
	start := int(b.streams.Add(1)-1) % n
	var firstErr error
	for pass := 0; pass < 2; pass++ {
		for k := range n {
			i := (start + k) % n
			e := b.eps[i]
			// The first pass tries the replicas in; the second, when none
			// opened, the ones out too.
			if e.down.Load() != (pass == 1) {
				continue
			}
			s, err := e.c.OpenStream(ctx)
			if err == nil {
				return &balancedStream{b: b, s: s, i: i}, nil
			}
			if ctx.Err() != nil {
				return nil, err
			}
			b.failed(i, err)
			if firstErr == nil {
				firstErr = fmt.Errorf("replica %d: %w", i+1, err)
			}
		}
	}
	return nil, firstErr
}

// balancedStream is a stream on one replica.
type balancedStream struct {
	b *Balancer
	s triton.Stream
	i int
}

// Endpoint is the replica the stream is on.
func (s *balancedStream) Endpoint() int { return s.i }

func (s *balancedStream) Send(p triton.Prepared, id string) error {
	bp, ok := p.(*balancedPrepared)
	if !ok {
		return errNotBalanced
	}
	err := s.s.Send(bp.per[s.i], id)
	if err != nil && !errors.Is(err, io.EOF) {
		s.b.failed(s.i, err)
	}
	return err
}

func (s *balancedStream) Recv() (triton.StreamResponse, error) {
	r, err := s.s.Recv()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		s.b.failed(s.i, err)
	}
	return r, err
}

func (s *balancedStream) CloseSend() error { return s.s.CloseSend() }

// send sends one unary request for the worker and notes which replica
// took it. With one server it adds a nil check and a call to the client's
// Send (BenchmarkClosedLoopNop).
func (w *worker) send(ctx context.Context, p triton.Prepared) (int, error) {
	if b := w.r.d.balancer; b != nil {
		n, i, err := b.SendTo(ctx, p)
		w.endpoint = uint16(i)
		return n, err
	}
	return w.r.d.opts.Client.Send(ctx, p)
}

// streamEndpoint is the replica a stream opened by the client is on: a
// Balancer's stream says, any other is the one server's.
func streamEndpoint(s triton.Stream) uint16 {
	if e, ok := s.(interface{ Endpoint() int }); ok {
		return uint16(e.Endpoint())
	}
	return 0
}
