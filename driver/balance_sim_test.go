package driver

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
)

// startSimAt starts a simulator whose gRPC endpoint is addr ("127.0.0.1:0"
// for a free port).
func startSimAt(t *testing.T, addr string) *sim.Server {
	t.Helper()
	s, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: addr, HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
	})
	if err != nil {
		t.Fatalf("start simulator at %s: %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// simSuccesses is a simulator's own count of a model's successes.
func simSuccesses(t *testing.T, s *sim.Server, model string) int64 {
	t.Helper()
	st, err := s.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, m := range st.ModelStats {
		n += int64(m.InferenceStats.Success.Count)
	}
	return n
}

// TestBalancerOverSimulators runs load over two simulators, unary and
// streaming: each replica's successes in the results are exactly its
// server's count; when one stops, its load goes to the other within a
// second; restarted on the same port, it is put back and serves again.
// (A stopped simulator's count cannot be read: it is read just before the
// stop, and the requests in flight then may finish during it; a graceful
// stop lets open streams go on until its drain timeout.)
func TestBalancerOverSimulators(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		name := "unary"
		if streaming {
			name = "streaming"
		}
		t.Run(name, func(t *testing.T) {
			s1, s2 := startSimAt(t, "127.0.0.1:0"), startSimAt(t, "127.0.0.1:0")
			c1, c2 := dial(t, s1, "grpc", 1), dial(t, s2, "grpc", 1)
			b, err := NewBalancer([]ReplicaClient{c1, c2}, BalancerOptions{ProbeInterval: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			began := time.Now()
			s := start(t, context.Background(), Options{
				Client: b, Requests: identityRequests(t, c1),
				Load:      load.Target{Mode: load.Concurrency, Concurrency: 4},
				Streaming: streaming, Streams: 4,
			})
			eventually(t, 5*time.Second, "both replicas serve", func() bool {
				return simSuccesses(t, s1, "identity") > 100 && simSuccesses(t, s2, "identity") > 100
			})
			addr2 := s2.GRPCAddr()
			read := time.Now()
			beforeStop := simSuccesses(t, s2, "identity")
			s2.Close()
			stopped := time.Now()
			// Requests go on between the read and the stop (on a busy host
			// for some milliseconds): at most replica 2's rate over that
			// gap more than the 4 in flight may still succeed.
			rate2 := float64(beforeStop) / read.Sub(began).Seconds()
			slack := int64(rate2*stopped.Sub(read).Seconds()) + 4
			took := eventually(t, 2*time.Second, "replica 2 taken out", func() bool { return !b.Up(1) })
			t.Logf("replica 2 taken out %v after it stopped", took)
			served := simSuccesses(t, s1, "identity")
			eventually(t, time.Second, "replica 1 takes the load", func() bool { return simSuccesses(t, s1, "identity") > served+200 })
			t.Logf("replica 1 took the load within %v of the stop", time.Since(stopped))

			s3 := startSimAt(t, addr2)
			took = eventually(t, 3*time.Second, "replica 2 put back", func() bool { return b.Up(1) })
			t.Logf("replica 2 put back %v after its restart", took)
			if !streaming {
				// Streams stay where they are; unary requests come back at once.
				eventually(t, 2*time.Second, "the restarted replica serves", func() bool { return simSuccesses(t, s3, "identity") > 100 })
			}
			s.d.Stop(5 * time.Second)
			var ok [2]int64
			for _, r := range s.wait(t) {
				if r.OK() {
					ok[r.Endpoint]++
				}
			}
			if n := simSuccesses(t, s1, "identity"); ok[0] != n {
				t.Errorf("replica 1: %d successes in the results, %d counted by the server", ok[0], n)
			}
			restarted := simSuccesses(t, s3, "identity")
			if n := ok[1] - restarted; n < beforeStop || !streaming && n > beforeStop+slack {
				t.Errorf("replica 2: %d successes in the results before the restart, the server had counted %d just before it stopped (4 in flight, %d more allowed for the %v until the stop)",
					n, beforeStop, slack-4, stopped.Sub(read).Round(time.Microsecond))
			}
		})
	}
}
