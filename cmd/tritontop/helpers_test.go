package main

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// batchingModel is a model whose behaviour differs sharply with load: one
// instance, batches of up to maxBatch, each execution fixedMS plus perItemMS
// per item, no jitter. In closed loop at concurrency c ≤ maxBatch·instances
// the batches hold about c/instances requests, so throughput and batch size
// grow with c while latency grows slowly.
func batchingModel(name string, instances, maxBatch int, fixedMS, perItemMS float64) sim.ModelSpec {
	gpus := make([]int, instances)
	for i := range gpus {
		gpus[i] = i % 2
	}
	return sim.ModelSpec{
		Name: name, Platform: "onnxruntime_onnx", Backend: "onnxruntime", MaxBatchSize: maxBatch,
		Inputs:          []sim.TensorSpec{{Name: "input", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs:         []sim.TensorSpec{{Name: "output", DataType: "TYPE_FP32", Dims: []int64{16}}},
		DynamicBatching: &sim.DynamicBatchingSpec{},
		InstanceGroups:  []sim.InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU", GPUs: gpus}},
		Latency:         sim.LatencySpec{FixedUS: 1000 * fixedMS, PerItemUS: 1000 * perItemMS, Exponent: 1},
		Behaviour:       sim.BehaviourIdentity,
	}
}

func startSimWith(t *testing.T, models ...sim.ModelSpec) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{Models: models},
		Engine:     sim.EngineOptions{MetricsInterval: 250 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
