package sim

import (
	"context"
	"testing"
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
