package driver

import (
	"testing"

	"github.com/tritontop/tritontop/load"
)

// BenchmarkClosedLoopBalancedNop is BenchmarkClosedLoopNop over a Balancer
// of two replicas that answer at once: what picking a replica (and, for
// least-outstanding, counting each one's requests in flight) adds.
func BenchmarkClosedLoopBalancedNop(b *testing.B) {
	for _, policy := range []Balance{RoundRobin, LeastOutstanding} {
		b.Run(string(policy), func(b *testing.B) {
			bal, err := NewBalancer([]ReplicaClient{&fakeReplica{}, &fakeReplica{}}, BalancerOptions{Policy: policy})
			if err != nil {
				b.Fatal(err)
			}
			defer bal.Close()
			benchDriver(b, bal, Options{Load: load.Target{Mode: load.Concurrency, Concurrency: 4}})
		})
	}
}
