package session

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// Demo defaults: the resnet50-like model at a concurrency that makes the
// dynamic batcher form batches while leaving room to push it to the knee.
const (
	demoModel       = "resnet50"
	demoConcurrency = 8
)

// demoDefaults are the demo's, for what was not given: its resnet50-like
// model, and a concurrency at which the dynamic batcher forms batches.
func (c *Config) demoDefaults() {
	if c.Model == "" && len(c.ModelArgs) == 0 && c.LoadFile == "" {
		c.Model = demoModel
	}
	if c.Plan == nil && !c.Given["concurrency"] && !c.Given["request-rate"] && c.ConcurrencyRange == "" &&
		c.RequestRateRange == "" && c.Shape.Stages == "" && c.Shape.Trace == "" {
		c.Concurrency = demoConcurrency
	}
}

// startDemoSimulator starts the simulator in this process with the demo
// models and points the run's flags at it (unless -u was given): what
// tritontop demo and tritontop plan --demo run against. Its GPUs are sized
// to what this host's client drives (see sizeDemoRepository), said in a
// line on stderr and in the run's header.
func startDemoSimulator(ctx context.Context, f *Config, df DemoConfig, stderr io.Writer) (*sim.Server, error) {
	repo := sim.DemoRepository()
	if !f.Given["u"] {
		sized, sz, ok, err := sizeDemoRepository(ctx, f, df, repo)
		if err != nil {
			return nil, err
		}
		if ok {
			repo = sized
			f.DemoGPU = sz.String()
			fmt.Fprintf(stderr, "tritontop: %s\n", f.DemoGPU)
		}
	}
	srv, err := sim.Start(ctx, sim.Config{
		GRPCAddr:    "127.0.0.1:0",
		HTTPAddr:    "127.0.0.1:0",
		MetricsAddr: "127.0.0.1:0",
		Repository:  repo,
		// The demo's load may place tensors in shared memory: allowed, as
		// tritonserver --allow-client-shm=true.
		Engine: sim.EngineOptions{MetricsInterval: time.Second, AllowClientShm: true},
	})
	if err != nil {
		return nil, fmt.Errorf("start the simulator: %w", err)
	}
	if !f.Given["u"] {
		f.URL = srv.GRPCAddr()
		if f.Protocol == "http" {
			f.URL = srv.HTTPAddr()
		}
	}
	f.SharedProcess = true
	if f.metricsURL == "" {
		f.metricsURL = "http://" + srv.MetricsAddr() + "/metrics"
	}
	return srv, nil
}
