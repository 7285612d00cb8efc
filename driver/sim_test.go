package driver

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// startSim starts a simulated Triton with the demo models on loopback.
func startSim(t *testing.T) *sim.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := sim.Start(ctx, sim.Config{
		GRPCAddr:    "127.0.0.1:0",
		HTTPAddr:    "127.0.0.1:0",
		MetricsAddr: "127.0.0.1:0",
		Repository:  sim.DemoRepository(),
	})
	if err != nil {
		cancel()
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		s.Close()
	})
	return s
}

// dial connects to the simulator over protocol "grpc" or "http".
func dial(t *testing.T, s *sim.Server, protocol string, connections int) triton.Client {
	t.Helper()
	addr := s.GRPCAddr()
	if protocol == "http" {
		addr = s.HTTPAddr()
	}
	c, err := triton.Dial(context.Background(), addr, triton.Options{Protocol: protocol, Connections: connections})
	if err != nil {
		t.Fatalf("dial %s %s: %v", protocol, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// requests builds the requests for a model from what the server says about
// it, as the CLI does.
func requests(t testing.TB, c triton.Client, model string, opts triton.InputOptions) []*triton.InferRequest {
	t.Helper()
	ctx := context.Background()
	md, err := c.ModelMetadata(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.ModelConfig(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

func identityRequests(t *testing.T, c triton.Client) []*triton.InferRequest {
	return requests(t, c, "identity", triton.InputOptions{Shapes: map[string][]int64{"INPUT0": {16}}})
}

// started is a running driver whose results are being collected.
type started struct {
	d       *Driver
	done    chan error
	results chan []Result
}

// start runs a driver and collects every result it delivers.
func start(t *testing.T, ctx context.Context, opts Options) *started {
	t.Helper()
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return startDriver(t, ctx, d)
}

// startFor starts a driver and stops it after d, with a drain of 5 s.
func startFor(t *testing.T, ctx context.Context, d time.Duration, opts Options) *started {
	t.Helper()
	s := start(t, ctx, opts)
	time.AfterFunc(d, func() { s.d.Stop(5 * time.Second) })
	return s
}

// startDriver runs d and gathers its results.
func startDriver(t *testing.T, ctx context.Context, d *Driver) *started {
	t.Helper()
	s := &started{d: d, done: make(chan error, 1), results: make(chan []Result, 1)}
	go func() { s.done <- d.Run(ctx) }()
	go func() {
		var all []Result
		for b := range d.Results() {
			all = append(all, b...)
		}
		s.results <- all
	}()
	return s
}

// wait waits for Run to return and gives every result.
func (s *started) wait(t *testing.T) []Result {
	t.Helper()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	return <-s.results
}

// modelMetrics returns the simulator's view of one model.
func modelMetrics(t *testing.T, s *sim.Server, model string) sim.ModelMetricsState {
	t.Helper()
	for _, m := range s.Engine().Metrics().Models {
		if m.Model == model {
			return m
		}
	}
	t.Fatalf("model %s not in the simulator's metrics", model)
	return sim.ModelMetricsState{}
}

// serverCounts returns the server's success and failure counts of a model.
func serverCounts(t *testing.T, c triton.Client, model string) (success, fail uint64) {
	t.Helper()
	st, err := c.ModelStatistics(context.Background(), model, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.GetModelStats() {
		success += m.GetInferenceStats().GetSuccess().GetCount()
		fail += m.GetInferenceStats().GetFail().GetCount()
	}
	return success, fail
}

// eventually polls cond every 5ms until it holds or timeout passes, and
// returns how long it took.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	begin := time.Now()
	for !cond() {
		if time.Since(begin) > timeout {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(begin)
}

// percentile returns the p-th percentile (0..100) of durations, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := int(p/100*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}
