package sim

import (
	"context"
	"testing"

	"github.com/tritontop/tritontop/triton"
)

// BenchmarkSimIdentityGRPC measures the simulator's serving throughput: the
// demo identity model (no simulated compute time) over loopback gRPC, with
// parallel clients sending a prepared 16-element FP32 request. ns/op is
// wall time per request across all clients, so 1e9/ns/op is requests/s.
func BenchmarkSimIdentityGRPC(b *testing.B) {
	s := startSim(b, DemoRepository(), EngineOptions{})
	c, err := triton.Dial(context.Background(), s.GRPCAddr(), triton.Options{Protocol: "grpc", Connections: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.Prepare(&triton.InferRequest{
		Model:  "identity",
		Inputs: []triton.Tensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 16}, Data: make([]byte, 64)}},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Send(ctx, p); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
