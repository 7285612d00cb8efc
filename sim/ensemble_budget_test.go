package sim

import (
	"context"
	"testing"
	"time"
)

// TestEnsembleStepsGiveBackTheirBudget: the outputs of an ensemble's steps
// are reserved in the memory budget with the ensemble request, and given
// back when it is answered: over a stream that stays open, and over
// unary calls, the server holds nothing once every answer is in.
func TestEnsembleStepsGiveBackTheirBudget(t *testing.T) {
	t.Parallel()
	s, err := Start(context.Background(), Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: ensRepository(20, 20), MemoryBudget: 64 << 20, Engine: EngineOptions{MetricsInterval: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	for range 3 {
		if _, err := raw.ModelInfer(ctx, ensRequest(2)); err != nil {
			t.Fatal(err)
		}
	}
	heldReturnsToZero(t, s)
	stream, err := raw.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := stream.Send(ensRequest(2)); err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || r.GetErrorMessage() != "" {
			t.Fatalf("streamed request to the pipeline: %v %q", err, r.GetErrorMessage())
		}
	}
	// The stream is still open: what its requests held is given back.
	heldReturnsToZero(t, s)
	_ = stream.CloseSend()
}
