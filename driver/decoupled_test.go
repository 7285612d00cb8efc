package driver

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// decoupledClient answers each streamed request with several responses,
// as a decoupled model does, and counts the requests it holds from the
// send to the final response.
type decoupledClient struct {
	responses  int           // responses with outputs per request
	gap        time.Duration // before each response
	emptyFinal bool          // the final flag comes apart, as an empty response
	failAfter  int           // > 0: an error response after this many
	open       atomic.Int64
	maxOpen    atomic.Int64
}

func (c *decoupledClient) Prepare(*triton.InferRequest) (triton.Prepared, error) {
	return nopPrepared{size: 100}, nil
}

func (c *decoupledClient) Send(context.Context, triton.Prepared) (int, error) {
	return 0, errors.New("a decoupled model is streamed only")
}

func (c *decoupledClient) OpenStream(ctx context.Context) (triton.Stream, error) {
	return &decoupledStream{ctx: ctx, c: c, out: make(chan triton.StreamResponse, 1024)}, nil
}

type decoupledStream struct {
	ctx context.Context
	c   *decoupledClient
	out chan triton.StreamResponse
}

func (s *decoupledStream) Send(_ triton.Prepared, id string) error {
	c := s.c
	n := c.open.Add(1)
	for {
		m := c.maxOpen.Load()
		if n <= m || c.maxOpen.CompareAndSwap(m, n) {
			break
		}
	}
	go func() {
		emit := func(r triton.StreamResponse) {
			if r.Final {
				// The server lets go of the request before the client
				// can hear of its end.
				c.open.Add(-1)
			}
			select {
			case s.out <- r:
			case <-s.ctx.Done():
			}
		}
		for i := range c.responses {
			time.Sleep(c.gap)
			if c.failAfter > 0 && i == c.failAfter {
				emit(triton.StreamResponse{ID: id, Size: 7, Err: &triton.Error{Code: codes.Unknown, Message: "model failed"},
					Final: true, Empty: true})
				return
			}
			emit(triton.StreamResponse{ID: id, Size: 10, Final: !c.emptyFinal && i == c.responses-1})
		}
		if c.emptyFinal {
			emit(triton.StreamResponse{ID: id, Size: 3, Final: true, Empty: true})
		}
	}()
	return nil
}

func (s *decoupledStream) Recv() (triton.StreamResponse, error) {
	select {
	case r := <-s.out:
		return r, nil
	case <-s.ctx.Done():
		return triton.StreamResponse{}, io.EOF
	}
}

func (s *decoupledStream) CloseSend() error { return nil }

// runDecoupled runs a closed loop at concurrency against c until n results
// arrived and returns them.
func runDecoupled(t *testing.T, c *decoupledClient, concurrency, n int, timeout time.Duration) []Result {
	t.Helper()
	d, err := New(Options{Client: c, Requests: []*triton.InferRequest{{Model: "llm"}}, Streaming: true, Streams: 2,
		Decoupled: true, Timeout: timeout, Load: load.Target{Mode: load.Concurrency, Concurrency: concurrency}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	var got []Result
	for batch := range d.Results() {
		got = append(got, batch...)
		if len(got) >= n {
			d.Stop(5 * time.Second)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDecoupledRequestEndsAtFinalResponse(t *testing.T) {
	for _, emptyFinal := range []bool{false, true} {
		c := &decoupledClient{responses: 5, gap: 2 * time.Millisecond, emptyFinal: emptyFinal}
		results := runDecoupled(t, c, 3, 30, 0)
		if m := c.maxOpen.Load(); m != 3 {
			t.Errorf("empty final %t: the server held up to %d requests at concurrency 3", emptyFinal, m)
		}
		ok := 0
		for _, r := range results {
			if r.Cancelled {
				continue
			}
			ok++
			wantBytes := int32(50)
			if emptyFinal {
				wantBytes += 3
			}
			if !r.OK() || !r.Decoupled || r.Responses != 5 || r.Timing == nil || len(r.Timing.Gaps) != 4 || r.BytesReceived != wantBytes {
				t.Fatalf("empty final %t: result %+v", emptyFinal, r)
			}
			first := r.Timing.First
			if !(r.Sent < first && first <= r.Done) || r.FirstResponse() != first-r.Sent {
				t.Errorf("empty final %t: sent %v first %v done %v", emptyFinal, r.Sent, first, r.Done)
			}
			var sum time.Duration
			for _, g := range r.Timing.Gaps {
				if g <= 0 {
					t.Errorf("gap %v", g)
				}
				sum += g
			}
			// The gaps span the first response to the last one with
			// outputs, which is the final one unless it comes apart.
			if last := first + sum; last > r.Done || !emptyFinal && last != r.Done {
				t.Errorf("empty final %t: first %v + gaps %v vs done %v", emptyFinal, first, sum, r.Done)
			}
		}
		if ok < 30 {
			t.Errorf("empty final %t: %d successful results", emptyFinal, ok)
		}
	}
}

func TestDecoupledErrorEndsTheRequest(t *testing.T) {
	c := &decoupledClient{responses: 5, gap: time.Millisecond, failAfter: 2}
	for _, r := range runDecoupled(t, c, 2, 10, 0) {
		if r.Cancelled {
			continue
		}
		if r.OK() || r.Code != codes.Unknown || r.Responses != 0 || r.Timing != nil || !r.Decoupled {
			t.Fatalf("result %+v; want the model's failure, without response timing", r)
		}
	}
}

func TestDecoupledTimeoutDropsLateResponses(t *testing.T) {
	// Requests take 5 × 4 ms; the timeout gives up on each after 6 ms,
	// and the responses that keep coming for it must not count for the
	// worker's next request.
	c := &decoupledClient{responses: 5, gap: 4 * time.Millisecond}
	results := runDecoupled(t, c, 2, 10, 6*time.Millisecond)
	for _, r := range results {
		if r.Cancelled {
			continue
		}
		if r.OK() || r.Code != codes.DeadlineExceeded || r.Responses != 0 {
			t.Fatalf("result %+v; want DEADLINE_EXCEEDED", r)
		}
	}
}

func TestDecoupledNeedsStreaming(t *testing.T) {
	_, err := New(Options{Client: &decoupledClient{}, Requests: []*triton.InferRequest{{Model: "llm"}}, Decoupled: true})
	if err == nil {
		t.Fatal("Decoupled without Streaming accepted")
	}
}
