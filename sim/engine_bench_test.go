package sim

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tritontop/tritontop/triton/pb"
)

// BenchmarkEngineInferIdentity measures the engine's own cost per request
// (validation, queue, batcher and instance hand-offs, statistics) on the
// zero-compute identity model, with many requests in flight.
func BenchmarkEngineInferIdentity(b *testing.B) {
	e := engNew(b, DemoRepository(), EngineOptions{})
	req := engFP32Request("identity", 1, 16)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Infer(ctx, req, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkEngineInferSimpleBatched is the same through the dynamic
// batcher of the add/sub model (50 µs per execution).
func BenchmarkEngineInferSimpleBatched(b *testing.B) {
	e := engNew(b, DemoRepository(), EngineOptions{})
	req := engAddSubRequest(make([]int32, 16), make([]int32, 16))
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Infer(ctx, req, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkEngineInferSharedGPU is the same on two zero-compute models whose
// instances share GPU 0, so that every execution takes the GPU's sharing
// path (begin, end) without a simulated compute time hiding its cost.
func BenchmarkEngineInferSharedGPU(b *testing.B) {
	model := func(name string) ModelSpec {
		return ModelSpec{
			Name: name, Backend: "identity", MaxBatchSize: 8,
			Inputs:         []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{-1}}},
			Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{-1}}},
			InstanceGroups: []InstanceGroupSpec{{Count: 2, Kind: "KIND_GPU", GPUs: []int{0}}},
			Behaviour:      BehaviourIdentity,
		}
	}
	e := engNew(b, Repository{Models: []ModelSpec{model("a"), model("b")}}, EngineOptions{})
	reqs := []*pb.ModelInferRequest{engFP32Request("a", 1, 16), engFP32Request("b", 1, 16)}
	ctx := context.Background()
	var next atomic.Uint32
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := reqs[next.Add(1)%2]
		for pb.Next() {
			if _, err := e.Infer(ctx, req, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkEngineInferEnsemble is the same through a two-step ensemble of
// zero-compute identity models (the real server's pipeline, without its
// execution times): a request to it is two requests to its steps and the
// ensemble's own bookkeeping.
func BenchmarkEngineInferEnsemble(b *testing.B) {
	e := engNew(b, ensRepository(0, 0), EngineOptions{})
	req := ensRequest(1)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Infer(ctx, req, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
