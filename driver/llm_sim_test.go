package driver

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// startLLMSim starts a simulator serving the demo LLM with spec.
func startLLMSim(t *testing.T, spec sim.LLMSpec) *sim.Server {
	t.Helper()
	m := sim.DemoLLM()
	m.LLM = &spec
	ctx, cancel := context.WithCancel(context.Background())
	s, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{Models: []sim.ModelSpec{m}}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		s.Close()
	})
	return s
}

// TestLLMClosedLoopHoldsConcurrencyAtServer drives the simulator's LLM in
// closed loop at concurrency 8: the server, which counts each request
// until its final response, must hold 8 requests, never more, and fewer
// only in the turnaround between a final response and the next request;
// and every request must come back with as many responses as the model
// generated for it.
func TestLLMClosedLoopHoldsConcurrencyAtServer(t *testing.T) {
	t.Parallel()
	s := startLLMSim(t, sim.LLMSpec{PrefillUS: 2000, PrefillPerTokenUS: 20, TokenUS: 3000, TokenPerSequenceUS: 300,
		MaxSequences: 64, OutputTokens: sim.LengthSpec{Mean: 20, StdDev: 8, Min: 4, Max: 40}})
	c := dial(t, s, "grpc", 1)
	reqs := requests(t, c, "llm", triton.InputOptions{PromptTokens: 50, Streaming: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := startFor(t, ctx, 2*time.Second, Options{Client: c, Requests: reqs, Streaming: true, Streams: 2, Decoupled: true,
		Load: load.Target{Mode: load.Concurrency, Concurrency: 8}})

	// Sample the server's count while the loop runs.
	e := s.Engine()
	var held []int
	sampling := time.NewTicker(time.Millisecond)
	deadline := time.After(1800 * time.Millisecond)
sample:
	for {
		select {
		case <-sampling.C:
			n, err := e.InFlight("llm")
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, n)
		case <-deadline:
			break sample
		}
	}
	sampling.Stop()
	results := run.wait(t)

	slices.Sort(held)
	if len(held) == 0 || held[len(held)-1] != 8 || held[len(held)/2] != 8 {
		t.Errorf("the server held %d requests at most, %d at the median, at concurrency 8",
			held[len(held)-1], held[len(held)/2])
	}
	ls, err := e.LLMStats("llm")
	if err != nil {
		t.Fatal(err)
	}
	var arrivals []int
	var generated []int
	for _, r := range ls.Requests {
		arrivals = append(arrivals, r.InFlightAtArrival)
		if r.Outcome == sim.LLMDone {
			generated = append(generated, r.Tokens)
		}
	}
	// Every request arrives to find at most 8 held, itself included: a
	// loop that took the first response for the end would send while the
	// model still generates, and pile them up.
	slices.Sort(arrivals)
	if len(arrivals) < 30 {
		t.Fatalf("only %d requests ran", len(arrivals))
	}
	if arrivals[len(arrivals)-1] != 8 {
		t.Errorf("arrivals found up to %d requests held at concurrency 8", arrivals[len(arrivals)-1])
	}

	var received []int
	for _, r := range results {
		if !r.OK() {
			t.Fatalf("result %+v", r)
		}
		if !r.Decoupled || r.Timing == nil || len(r.Timing.Gaps) != int(r.Responses)-1 {
			t.Fatalf("result %+v: timing %+v for %d responses", r, r.Timing, r.Responses)
		}
		checkStreamPhases(t, r)
		received = append(received, int(r.Responses))
	}
	slices.Sort(received)
	slices.Sort(generated)
	if !slices.Equal(received, generated) {
		t.Errorf("responses per request: client %v, server generated %v", received, generated)
	}
	if n, _ := e.InFlight("llm"); n != 0 {
		t.Errorf("%d requests still held after the drain", n)
	}
}
