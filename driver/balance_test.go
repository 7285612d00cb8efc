package driver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// fakeReplica is one replica of a balancer test: it answers after delay,
// or fails as a dead server (a transport error, no liveness) or as a live
// one that rejects (UNAVAILABLE from the server, or HTTP 503).
type fakeReplica struct {
	nopClient
	dead     atomic.Bool
	rejects  atomic.Bool // gRPC UNAVAILABLE from a live server
	http503  atomic.Bool
	probes   atomic.Int64
	failures atomic.Int64
	streams  atomic.Int64
}

func (c *fakeReplica) Send(ctx context.Context, p triton.Prepared) (int, error) {
	if _, ok := p.(nopPrepared); !ok {
		return 0, errors.New("not this replica's request")
	}
	switch {
	case c.dead.Load():
		c.failures.Add(1)
		return 0, errors.New("connection refused")
	case c.rejects.Load():
		c.failures.Add(1)
		return 0, &triton.Error{Code: codes.Unavailable, Message: "Exceeds maximum queue size"}
	case c.http503.Load():
		c.failures.Add(1)
		return 0, &triton.Error{Code: codes.Unavailable, HTTPStatus: 503, Message: "Exceeds maximum queue size"}
	}
	return c.nopClient.Send(ctx, p)
}

func (c *fakeReplica) OpenStream(ctx context.Context) (triton.Stream, error) {
	if c.dead.Load() {
		return nil, errors.New("connection refused")
	}
	c.streams.Add(1)
	return c.nopClient.OpenStream(ctx)
}

func (c *fakeReplica) ServerLive(ctx context.Context) (bool, error) {
	c.probes.Add(1)
	if c.dead.Load() {
		return false, errors.New("connection refused")
	}
	return true, nil
}

func newBalancer(t *testing.T, policy Balance, reps ...*fakeReplica) *Balancer {
	t.Helper()
	rc := make([]ReplicaClient, len(reps))
	for i, r := range reps {
		rc[i] = r
	}
	b, err := NewBalancer(rc, BalancerOptions{Policy: policy, ProbeInterval: 20 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// byEndpoint counts results per replica, and the failures among them.
func byEndpoint(results []Result, n int) (all, failed []int) {
	all, failed = make([]int, n), make([]int, n)
	for _, r := range results {
		all[r.Endpoint]++
		if !r.OK() && !r.Cancelled {
			failed[r.Endpoint]++
		}
	}
	return all, failed
}

// TestBalancerPolicies: round robin gives replicas equal shares whatever
// their speed; least-outstanding gives the faster one more. Every result
// names the replica that served it.
func TestBalancerPolicies(t *testing.T) {
	t.Parallel()
	for _, policy := range []Balance{RoundRobin, LeastOutstanding} {
		t.Run(string(policy), func(t *testing.T) {
			fast, slow := &fakeReplica{}, &fakeReplica{}
			fast.delay, slow.delay = time.Millisecond, 8*time.Millisecond
			b := newBalancer(t, policy, fast, slow)
			s := startFor(t, context.Background(), 800*time.Millisecond, Options{
				Client: b, Requests: []*triton.InferRequest{{Model: "m"}},
				Load: load.Target{Mode: load.Concurrency, Concurrency: 8},
			})
			all, failed := byEndpoint(s.wait(t), 2)
			if failed[0]+failed[1] > 0 {
				t.Fatalf("failures %v", failed)
			}
			if int64(all[0]) != fast.sends.Load() || int64(all[1]) != slow.sends.Load() {
				t.Fatalf("results by replica %v, sends %d and %d", all, fast.sends.Load(), slow.sends.Load())
			}
			ratio := float64(all[0]) / float64(all[1])
			t.Logf("%s: fast %d, slow %d (%.2f×)", policy, all[0], all[1], ratio)
			switch policy {
			case RoundRobin:
				if ratio < 0.9 || ratio > 1.1 {
					t.Errorf("round robin sent %d and %d requests: not equal shares", all[0], all[1])
				}
			case LeastOutstanding:
				// With 8 in flight, the slow replica holds about one per 8
				// ms and the fast one the rest.
				if ratio < 3 {
					t.Errorf("least outstanding sent the fast replica only %.2f× the slow one's requests", ratio)
				}
			}
		})
	}
}

// TestBalancerTakesOutAndPutsBack: a replica that dies is taken out (its
// load goes to the other), probed, and put back once it is live again.
func TestBalancerTakesOutAndPutsBack(t *testing.T) {
	for _, policy := range []Balance{RoundRobin, LeastOutstanding} {
		t.Run(string(policy), func(t *testing.T) {
			a, bb := &fakeReplica{}, &fakeReplica{}
			a.delay, bb.delay = time.Millisecond, time.Millisecond
			b := newBalancer(t, policy, a, bb)
			s := start(t, context.Background(), Options{
				Client: b, Requests: []*triton.InferRequest{{Model: "m"}},
				Load: load.Target{Mode: load.Concurrency, Concurrency: 4},
			})
			eventually(t, 2*time.Second, "both replicas serve", func() bool { return a.sends.Load() > 50 && bb.sends.Load() > 50 })
			bb.dead.Store(true)
			eventually(t, 2*time.Second, "the dead replica is taken out", func() bool { return !b.Up(1) })
			if b.UpCount() != 1 || b.Downs(1) != 1 {
				t.Errorf("up %d, replica 2 taken out %d times", b.UpCount(), b.Downs(1))
			}
			// Out, it gets no request: its failures stop while the other
			// replica keeps serving.
			failures, served := bb.failures.Load(), a.sends.Load()
			time.Sleep(100 * time.Millisecond)
			if got := bb.failures.Load(); got != failures {
				t.Errorf("the replica taken out still got %d requests", got-failures)
			}
			if a.sends.Load()-served < 20 {
				t.Errorf("the replica left served %d requests in 100 ms", a.sends.Load()-served)
			}
			probes := bb.probes.Load()
			time.Sleep(100 * time.Millisecond)
			if n := bb.probes.Load() - probes; n < 2 || n > 8 {
				t.Errorf("%d probes in 100 ms at one per 20 ms", n)
			}
			bb.dead.Store(false)
			eventually(t, time.Second, "the replica is put back", func() bool { return b.Up(1) })
			back := bb.sends.Load()
			eventually(t, time.Second, "the replica put back serves again", func() bool { return bb.sends.Load() > back+50 })
			s.d.Stop(time.Second)
			all, failed := byEndpoint(s.wait(t), 2)
			if int64(failed[1]) != bb.failures.Load() || failed[0] != 0 {
				t.Errorf("failures by replica %v, replica 2 failed %d", failed, bb.failures.Load())
			}
			if int64(all[0]) != a.sends.Load() || int64(all[1]-failed[1]) != bb.sends.Load() {
				t.Errorf("results by replica %v, sends %d and %d", all, a.sends.Load(), bb.sends.Load())
			}
		})
	}
}

// TestBalancerKeepsLiveRejectingReplica: a replica that rejects requests
// but answers its liveness probe is overloaded, not gone: it stays in and
// is checked at most once per probe interval, however many it rejects.
// An HTTP 503 is the server speaking and is not even checked.
func TestBalancerKeepsLiveRejectingReplica(t *testing.T) {
	a, bb := &fakeReplica{}, &fakeReplica{}
	a.delay = time.Millisecond
	bb.rejects.Store(true)
	b := newBalancer(t, RoundRobin, a, bb)
	s := startFor(t, context.Background(), 300*time.Millisecond, Options{
		Client: b, Requests: []*triton.InferRequest{{Model: "m"}},
		Load: load.Target{Mode: load.Concurrency, Concurrency: 4},
	})
	res := s.wait(t)
	if b.Downs(1) != 0 || !b.Up(1) {
		t.Errorf("a live replica was taken out %d times", b.Downs(1))
	}
	_, failed := byEndpoint(res, 2)
	// 300 ms at one check per 20 ms: about 15 checks for all the rejections.
	if p := bb.probes.Load(); p == 0 || p > 25 || int64(failed[1]) < 4*p {
		t.Errorf("%d checks for %d rejections", p, failed[1])
	}

	c, d := &fakeReplica{}, &fakeReplica{}
	d.http503.Store(true)
	b2 := newBalancer(t, RoundRobin, c, d)
	s = startFor(t, context.Background(), 100*time.Millisecond, Options{
		Client: b2, Requests: []*triton.InferRequest{{Model: "m"}},
		Load: load.Target{Mode: load.Concurrency, Concurrency: 2},
	})
	s.wait(t)
	if d.probes.Load() != 0 || d.failures.Load() == 0 {
		t.Errorf("HTTP 503: %d checks after %d rejections, want none", d.probes.Load(), d.failures.Load())
	}
}

// TestBalancerStreams: streams are spread over the replicas, their results
// name the replica of their stream, and a stream whose replica dies is
// opened again on the other.
func TestBalancerStreams(t *testing.T) {
	a, bb := &fakeReplica{}, &fakeReplica{}
	b := newBalancer(t, LeastOutstanding, a, bb)
	s := startFor(t, context.Background(), 200*time.Millisecond, Options{
		Client: b, Requests: []*triton.InferRequest{{Model: "m"}},
		Load:      load.Target{Mode: load.Concurrency, Concurrency: 8},
		Streaming: true, Streams: 4,
	})
	all, failed := byEndpoint(s.wait(t), 2)
	if a.streams.Load() != 2 || bb.streams.Load() != 2 {
		t.Errorf("streams opened: %d and %d, want 2 and 2", a.streams.Load(), bb.streams.Load())
	}
	if all[0] == 0 || all[1] == 0 || failed[0]+failed[1] > 0 {
		t.Errorf("results by replica %v, failed %v", all, failed)
	}

	// A replica that is down when streams open gets none.
	bb.dead.Store(true)
	b.failed(1, errors.New("connection refused"))
	eventually(t, time.Second, "replica 2 taken out", func() bool { return !b.Up(1) })
	before := a.streams.Load()
	s = startFor(t, context.Background(), 100*time.Millisecond, Options{
		Client: b, Requests: []*triton.InferRequest{{Model: "m"}},
		Load:      load.Target{Mode: load.Concurrency, Concurrency: 4},
		Streaming: true, Streams: 2,
	})
	all, _ = byEndpoint(s.wait(t), 2)
	if a.streams.Load()-before != 2 || all[1] != 0 {
		t.Errorf("with replica 2 out: %d new streams on replica 1, %d results from replica 2", a.streams.Load()-before, all[1])
	}
}

func TestNewBalancerRejectsBadOptions(t *testing.T) {
	if _, err := NewBalancer(nil, BalancerOptions{}); err == nil {
		t.Error("no replicas accepted")
	}
	if _, err := NewBalancer([]ReplicaClient{&fakeReplica{}}, BalancerOptions{Policy: "random"}); err == nil {
		t.Error("unknown policy accepted")
	}
	b, err := NewBalancer([]ReplicaClient{&fakeReplica{}}, BalancerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Policy() != LeastOutstanding {
		t.Errorf("default policy %q", b.Policy())
	}
	if _, err := b.Send(context.Background(), nopPrepared{}); !errors.Is(err, errNotBalanced) {
		t.Errorf("a request another client prepared: %v", err)
	}
}
