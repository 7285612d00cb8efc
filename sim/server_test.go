package sim

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// testRepository is a small repository with fast models, one per case the
// frontends must handle.
func testRepository() Repository {
	i32 := func(name string) TensorSpec { return TensorSpec{Name: name, DataType: "TYPE_INT32", Dims: []int64{16}} }
	fp32 := func(name string, dims ...int64) TensorSpec {
		return TensorSpec{Name: name, DataType: "TYPE_FP32", Dims: dims}
	}
	gpu := []InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU"}}
	return Repository{
		Models: []ModelSpec{
			{
				Name: "simple", Backend: "python", MaxBatchSize: 8,
				Inputs:         []TensorSpec{i32("INPUT0"), i32("INPUT1")},
				Outputs:        []TensorSpec{i32("OUTPUT0"), i32("OUTPUT1")},
				InstanceGroups: gpu, Latency: LatencySpec{FixedUS: 50}, Behaviour: BehaviourAddSub,
			},
			{
				// Batches fire at 8 requests or after a long delay, so
				// requests that arrive together are executed together.
				Name: "batched", Backend: "python", MaxBatchSize: 8,
				Inputs:          []TensorSpec{fp32("INPUT0", 4)},
				Outputs:         []TensorSpec{fp32("OUTPUT0", 4)},
				DynamicBatching: &DynamicBatchingSpec{PreferredBatchSize: []int{8}, MaxQueueDelayMicroseconds: 200000},
				InstanceGroups:  []InstanceGroupSpec{{Count: 2, Kind: "KIND_GPU"}},
				Latency:         LatencySpec{FixedUS: 200, PerItemUS: 10}, Behaviour: BehaviourIdentity,
			},
			{
				Name: "decoupled", Backend: "python", MaxBatchSize: 0, Decoupled: true,
				Inputs:         []TensorSpec{fp32("IN", 2)},
				Outputs:        []TensorSpec{fp32("OUT", 2)},
				InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
				Latency:        LatencySpec{FixedUS: 20}, Behaviour: BehaviourIdentity,
			},
			{
				Name: "nobatch", Platform: "onnxruntime_onnx", MaxBatchSize: 0,
				Inputs:         []TensorSpec{fp32("X", 2, 3)},
				Outputs:        []TensorSpec{fp32("Y", 2, 3)},
				InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
				Latency:        LatencySpec{FixedUS: 20}, Behaviour: BehaviourIdentity,
			},
			{
				Name: "strings", Backend: "python", MaxBatchSize: 4,
				Inputs:         []TensorSpec{{Name: "TEXT", DataType: "TYPE_STRING", Dims: []int64{-1}}},
				Outputs:        []TensorSpec{{Name: "ECHO", DataType: "TYPE_STRING", Dims: []int64{-1}}},
				InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
				Latency:        LatencySpec{FixedUS: 20}, Behaviour: BehaviourIdentity,
			},
		},
	}
}

// startSim serves repo on free loopback ports for the rest of the test.
func startSim(t testing.TB, repo Repository, opts EngineOptions) *Server {
	t.Helper()
	if opts.MetricsInterval == 0 {
		opts.MetricsInterval = 100 * time.Millisecond
	}
	s, err := Start(context.Background(), Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: repo, Engine: opts,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dial connects the project's own client to s over protocol.
func dial(t testing.TB, s *Server, protocol string) triton.Client {
	t.Helper()
	addr := s.GRPCAddr()
	if protocol == "http" {
		addr = s.HTTPAddr()
	}
	c, err := triton.Dial(context.Background(), addr, triton.Options{Protocol: protocol})
	if err != nil {
		t.Fatalf("Dial %s %s: %v", protocol, addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestStartBindsThreeListeners(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	addrs := map[string]bool{}
	for _, a := range []string{s.GRPCAddr(), s.HTTPAddr(), s.MetricsAddr()} {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host != "127.0.0.1" || port == "0" {
			t.Fatalf("bound address %q: want 127.0.0.1 with a real port", a)
		}
		addrs[a] = true
	}
	if len(addrs) != 3 {
		t.Fatalf("listeners share an address: %v", addrs)
	}
	for _, proto := range []string{"grpc", "http"} {
		live, err := dial(t, s, proto).ServerLive(context.Background())
		if err != nil || !live {
			t.Fatalf("%s ServerLive = %v, %v; want true", proto, live, err)
		}
	}
}

func TestStartPortInUseNamesAddressAndFlag(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = Start(context.Background(), Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: busy.Addr().String(), MetricsAddr: "127.0.0.1:0",
		Repository: testRepository(),
	})
	if err == nil {
		t.Fatal("Start on a busy port succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, busy.Addr().String()) || !strings.Contains(msg, "--http-port") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line naming %s and --http-port", msg, busy.Addr())
	}
}

func TestCloseIsIdempotentAndStopsListening(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	addr := s.HTTPAddr()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Close", addr)
	}
}

func TestStartStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: testRepository(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.GRPCAddr(), time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still listening 10 s after its context ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStartWithEmptyRepositoryServesDemoModelsOnRequestedGPUs(t *testing.T) {
	s := startSim(t, Repository{GPUs: make([]GPUSpec, 3)}, EngineOptions{})
	gpus := s.Engine().Metrics().GPUs
	if len(gpus) != 3 {
		t.Fatalf("%d GPUs, want 3", len(gpus))
	}
	for _, g := range gpus {
		if g.UUID == "" || g.MemoryTotal == 0 || g.PowerLimitW == 0 {
			t.Fatalf("GPU without defaults: %+v", g)
		}
	}
	idx := s.Engine().RepositoryIndex(true)
	if len(idx) != len(DemoRepository().Models) {
		t.Fatalf("%d ready models, want the %d demo models", len(idx), len(DemoRepository().Models))
	}
}
