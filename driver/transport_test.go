package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

func TestStreamingAndHTTP(t *testing.T) {
	s := startSim(t)
	for _, tc := range []struct {
		name      string
		protocol  string
		streaming bool
	}{
		{"grpc-stream", "grpc", true},
		{"http", "http", false},
		{"grpc", "grpc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s, tc.protocol, 2)
			reqs := requests(t, c, "simple", triton.InputOptions{BatchSize: 2, Seed: 9})
			// The request the driver sends gets the right answer.
			resp, err := c.Infer(context.Background(), reqs[0])
			if err != nil {
				t.Fatal(err)
			}
			in0, in1 := triton.Int32s(reqs[0].Inputs[0].Data), triton.Int32s(reqs[0].Inputs[1].Data)
			out0, ok0 := resp.Output("OUTPUT0")
			out1, ok1 := resp.Output("OUTPUT1")
			if !ok0 || !ok1 {
				t.Fatalf("outputs missing: %+v", resp.Outputs)
			}
			sum, diff := triton.Int32s(out0.Data), triton.Int32s(out1.Data)
			if len(sum) != 32 || len(diff) != 32 {
				t.Fatalf("got %d and %d output elements, want 32", len(sum), len(diff))
			}
			for i := range sum {
				if sum[i] != in0[i]+in1[i] || diff[i] != in0[i]-in1[i] {
					t.Fatalf("element %d: %d+%d gave %d, %d", i, in0[i], in1[i], sum[i], diff[i])
				}
			}
			before, _ := serverCounts(t, c, "simple")
			run := startFor(t, context.Background(), 300*time.Millisecond, Options{
				Client:    c,
				Requests:  reqs,
				BatchSize: 2,
				Streaming: tc.streaming,
				Streams:   2,
				Timeout:   5 * time.Second,
				Load:      load.Target{Mode: load.Concurrency, Concurrency: 4},
			})
			res := run.wait(t)
			if len(res) < 10 {
				t.Fatalf("only %d requests in 300ms", len(res))
			}
			for _, r := range res {
				if !r.OK() {
					t.Fatalf("request failed: %v", r.Err)
				}
				if r.Inferences != 2 || r.BytesSent <= 0 || r.BytesReceived <= 0 {
					t.Fatalf("result %+v: want 2 inferences and byte counts", r)
				}
			}
			after, _ := serverCounts(t, c, "simple")
			if after-before != uint64(len(res)) {
				t.Errorf("server counted %d requests, driver %d", after-before, len(res))
			}
		})
	}
}

func TestRetriesCounted(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	s.Engine().SetFaults(sim.Faults{ErrorRate: 0.5})
	run := startFor(t, context.Background(), 500*time.Millisecond, Options{
		Client:       c,
		Requests:     identityRequests(t, c),
		Retries:      3,
		RetryBackoff: time.Millisecond,
		// The simulator's faults answer INTERNAL, which is retried only
		// when asked for.
		RetryCodes: []codes.Code{codes.Internal},
		Load:       load.Target{Mode: load.Concurrency, Concurrency: 4},
	})
	res := run.wait(t)
	tries, failed, retried := 0, 0, 0
	for _, r := range res {
		tries += 1 + int(r.Retries)
		if r.Retries > 0 {
			retried++
		}
		if !r.OK() {
			failed++
			if r.Code != codes.Internal || r.Retries != 3 {
				t.Fatalf("failed result %+v: want INTERNAL after 3 retries", r)
			}
		}
	}
	success, fail := serverCounts(t, c, "identity")
	// Only the final outcome is a Result, but every try reached the server.
	if uint64(tries) != success+fail {
		t.Errorf("results account for %d tries, server saw %d", tries, success+fail)
	}
	if uint64(len(res)-failed) != success {
		t.Errorf("%d successful results, server counted %d successes", len(res)-failed, success)
	}
	if retried == 0 || failed == 0 {
		t.Errorf("at error rate 0.5: %d retried, %d failed of %d; want some of each", retried, failed, len(res))
	}
	t.Logf("%d results, %d tries, %d retried, %d failed", len(res), tries, retried, failed)
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	s := startSim(t)
	for _, streaming := range []bool{false, true} {
		c := dial(t, s, "grpc", 1)
		s.Engine().SetFaults(sim.Faults{StallUntil: time.Now().Add(10 * time.Second)})
		run := startFor(t, context.Background(), 450*time.Millisecond, Options{
			Client:    c,
			Requests:  identityRequests(t, c),
			Streaming: streaming,
			Streams:   1,
			Timeout:   100 * time.Millisecond,
			Retries:   1,
			// The timeout is per try: a retried deadline takes two.
			RetryCodes: []codes.Code{codes.DeadlineExceeded},
			Load:       load.Target{Mode: load.Concurrency, Concurrency: 2},
		})
		res := run.wait(t)
		s.Engine().SetFaults(sim.Faults{})
		if len(res) < 2 {
			t.Fatalf("streaming %v: %d results", streaming, len(res))
		}
		for _, r := range res {
			if r.Cancelled {
				continue
			}
			// Each try waits 100ms, then one retry after 10ms.
			if r.Code != codes.DeadlineExceeded || r.Retries != 1 {
				t.Fatalf("streaming %v: result %+v, want DEADLINE_EXCEEDED after 1 retry", streaming, r)
			}
			if l := r.Latency(); l < 200*time.Millisecond || l > 2*time.Second {
				t.Errorf("streaming %v: timed-out request took %v, want about 210ms", streaming, l)
			}
		}
	}
}

func TestStreamingOverHTTPFails(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "http", 1)
	d, err := New(Options{Client: c, Requests: identityRequests(t, c), Streaming: true, Load: load.Target{Concurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range d.Results() {
		}
	}()
	err = d.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "streaming") {
		t.Fatalf("Run = %v, want a streaming error", err)
	}
	if err := d.Run(context.Background()); err == nil {
		t.Error("a second Run was accepted")
	}
}
