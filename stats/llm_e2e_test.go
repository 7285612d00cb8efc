package stats

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// TestStreamingAgainstSimulatorLLM drives the simulator's LLM at
// concurrency 8 through the driver and the collector, as a run does, and
// checks the whole run's streaming statistics against the simulator's own
// account of every request: the same requests and responses, and time to
// first response and time between responses within 10% of the server's.
func TestStreamingAgainstSimulatorLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("3 s load run")
	}
	m := sim.DemoLLM()
	// Jitter spreads the iterations' lengths: without it, times to first
	// response bunch one iteration apart, and a median on the edge of a
	// bunch moves by a whole iteration for a delivery delay of a
	// millisecond. A prefill of 60 ms keeps the few milliseconds that a
	// busy machine (CI runs the packages' tests in parallel, under the race
	// detector) adds to delivering a response small against the time to
	// first response that the 10% is a share of.
	m.LLM = &sim.LLMSpec{PrefillUS: 60000, PrefillPerTokenUS: 100, TokenUS: 8000, TokenPerSequenceUS: 500, Jitter: 0.25,
		MaxSequences: 64, OutputTokens: sim.LengthSpec{Mean: 24, StdDev: 6, Min: 8, Max: 48}}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	srv, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{Models: []sim.ModelSpec{m}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	md, err := client.ModelMetadata(ctx, "llm", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := client.ModelConfig(ctx, "llm", "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{PromptTokens: 100, Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs, Streaming: true, Decoupled: true,
		Load: load.Target{Mode: load.Concurrency, Concurrency: 8}})
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(CollectorOptions{
		Interval: 500 * time.Millisecond, ReadWait: 250 * time.Millisecond,
		Results: drv.Results(), Control: drv, Epoch: drv.Epoch(), Decoupled: true,
		Server: NewServerPoller(client, "llm", ""),
	})
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	// The drain lets every request finish, so that client and server
	// account for the same requests.
	time.AfterFunc(3*time.Second, func() { drv.Stop(10 * time.Second) })
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}

	ls, err := srv.Engine().LLMStats("llm")
	if err != nil {
		t.Fatal(err)
	}
	var responses, gaps int
	var first, gapSum time.Duration
	var firsts, allGaps []time.Duration
	for _, r := range ls.Requests {
		if r.Outcome != sim.LLMDone {
			t.Fatalf("server request %+v", r)
		}
		responses += r.Responses
		first += r.FirstResponse
		firsts = append(firsts, r.FirstResponse)
		for _, g := range r.Gaps {
			gapSum += g
			gaps++
			allGaps = append(allGaps, g)
		}
	}
	n := len(ls.Requests)
	if n < 20 {
		t.Fatalf("only %d requests ran", n)
	}
	run := snaps[len(snaps)-1].Run
	st := run.Streaming
	if st == nil {
		t.Fatal("the run has no streaming statistics")
	}
	if run.Successes != int64(n) || run.Errors != 0 || st.Requests != int64(n) || st.Responses != int64(responses) {
		t.Fatalf("client: %d successes, %d errors, %d requests with %d responses; server: %d requests with %d responses",
			run.Successes, run.Errors, st.Requests, st.Responses, n, responses)
	}
	if st.PerRequest.Count != int64(n) || st.PerRequest.Mean != float64(responses)/float64(n) || st.ITL.Count != int64(gaps) {
		t.Errorf("responses per request %+v, %d gaps; server: %d requests, %d responses, %d gaps", st.PerRequest, st.ITL.Count, n, responses, gaps)
	}
	within := func(what string, client, server time.Duration) {
		t.Logf("%s: client %v, server %v", what, client, server)
		if math.Abs(float64(client-server)) > 0.1*float64(server) {
			t.Errorf("%s: client %v, server %v: more than 10%% apart", what, client, server)
		}
	}
	within("mean time to first response", st.TTFT.Mean, first/time.Duration(n))
	within("median time to first response", st.TTFT.P50, median(firsts))
	within("mean time between responses", st.ITL.Mean, gapSum/time.Duration(gaps))
	within("median time between responses", st.ITL.P50, median(allGaps))

	// Triton's side: the response statistics count every response.
	var server int64
	for _, s := range snaps {
		if s.Tick.Streaming == nil {
			t.Errorf("tick %d of a decoupled run without streaming statistics", s.Seq)
		}
		if r := s.Server.Responses; r != nil {
			server += r.Success
		}
	}
	if last := snaps[len(snaps)-1].Server; last.Available && server != int64(responses) {
		t.Errorf("response_stats deltas count %d responses, the server generated %d", server, responses)
	}
}

// median is the value at the rank the client's histograms take for their
// 50th percentile: the nearest rank, int(0.5·n+0.5), counted from one. With
// an even count, s[n/2] would be one sample higher, and a run of a few dozen
// requests has gaps of tens of milliseconds between neighbouring times to
// first response.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(int(0.5*float64(len(s))+0.5)-1, 0)]
}
