package tune_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/tune"
)

// profile is a simulated model to tune: its latency model on one GPU,
// the configuration it starts from, its SLO, the grid and the
// measurement windows that suit it.
type profile struct {
	name    string
	latency sim.LatencySpec
	// start is the model's own configuration: instances, max batch size,
	// queue delay (µs).
	instances, maxBatch, delay int
	slo                        string
	grid                       [5]string // instances, batch sizes, delays, preferred, concurrencies
	windowMS                   int
	tick                       time.Duration
}

// profiles are the benchmark's three: a small model, a resnet50-like one
// (the simulator's resnet50 latency) and a large model with a long batch
// time. The small one's batches take milliseconds, not microseconds: its
// best load then stays near 2,500 requests a second, which the simulator
// and the load generator serve without filling the test machine's CPUs
// (at 10,000 a second on two shared cores, one point's throughput varied
// by 20% between measurements, more than the 5% the test allows).
var profiles = []profile{
	{name: "small", latency: sim.LatencySpec{FixedUS: 5000, PerItemUS: 250, Exponent: 1, Jitter: 0.02},
		instances: 1, maxBatch: 4, slo: "p99:60ms",
		grid:     [5]string{"1,2,4", "1,4,16,64", "0,1000", "max", "1,4,16,64,256"},
		windowMS: 300, tick: 50 * time.Millisecond},
	{name: "resnet50", latency: sim.LatencySpec{FixedUS: 4000, PerItemUS: 1000, Exponent: 0.8, Jitter: 0.05},
		instances: 1, maxBatch: 8, delay: 100, slo: "p99:100ms",
		grid:     [5]string{"1:4", "1:64", "0,100,500,2000", "max,half", "1:256"},
		windowMS: 400, tick: 100 * time.Millisecond},
	{name: "large", latency: sim.LatencySpec{FixedUS: 30000, PerItemUS: 8000, Exponent: 0.9, Jitter: 0.05},
		instances: 1, maxBatch: 4, slo: "p99:1s",
		grid:     [5]string{"1:3", "1:32", "0,2000,10000", "max", "1:64"},
		windowMS: 1000, tick: 250 * time.Millisecond},
}

// serve starts the simulator with the profile's model on one GPU, in
// explicit model control so that it takes configuration overrides.
func (p profile) serve(t testing.TB) *sim.Server {
	t.Helper()
	m := sim.ModelSpec{
		Name: p.name, Platform: "onnxruntime_onnx", Backend: "onnxruntime", MaxBatchSize: p.maxBatch,
		Inputs:          []sim.TensorSpec{{Name: "input", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs:         []sim.TensorSpec{{Name: "output", DataType: "TYPE_FP32", Dims: []int64{16}}},
		DynamicBatching: &sim.DynamicBatchingSpec{MaxQueueDelayMicroseconds: uint64(p.delay)},
		InstanceGroups:  []sim.InstanceGroupSpec{{Count: p.instances, Kind: "KIND_GPU", GPUs: []int{0}}},
		Latency:         p.latency,
		Behaviour:       sim.BehaviourIdentity,
	}
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{GPUs: []sim.GPUSpec{{}}, Models: []sim.ModelSpec{m}},
		Engine: sim.EngineOptions{MetricsInterval: 100 * time.Millisecond, Seed: 1,
			ModelControl: sim.ModelControlExplicit, StartupModels: []string{"*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// tuneOn runs tritontop tune's search ("climb") or the brute force
// ("grid") of the profile's grid against srv, headless, and returns its
// record and its wall time.
func (p profile) tuneOn(t testing.TB, srv *sim.Server, search string) (*record.Tune, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	o := tune.Defaults()
	c := &o.Session
	c.Model, c.URL, c.SLO.Specs = p.name, srv.GRPCAddr(), []string{p.slo}
	c.MeasurementIntervalMS, c.Tick, c.Headless, c.Record = p.windowMS, p.tick, true, filepath.Join(dir, "run.jsonl")
	c.Given = map[string]bool{"measurement-interval": true, "tick": true}
	o.Instances, o.MaxBatchSizes, o.QueueDelays, o.Preferred, o.Concurrencies = p.grid[0], p.grid[1], p.grid[2], p.grid[3], p.grid[4]
	o.Search, o.MaxTrials, o.MaxTime, o.Output = search, 0, 0, filepath.Join(dir, "config.pbtxt")
	begin := time.Now()
	var out, errs discard
	if err := tune.Run(context.Background(), o, &out, &errs); err != nil {
		t.Fatalf("%s %s: %v", p.name, search, err)
	}
	took := time.Since(begin)
	run, err := record.ReadAll(c.Record)
	if err != nil || run.Summary == nil || run.Summary.Tune == nil {
		t.Fatalf("%s %s: the run file: %v", p.name, search, err)
	}
	return run.Summary.Tune, took
}

// best is the record's best trial's throughput, 0 without one.
func best(tr *record.Tune) float64 {
	if tr.Best < 0 {
		return 0
	}
	return tr.Trials[tr.Best].Throughput
}

// discard is an io.Writer that keeps nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
