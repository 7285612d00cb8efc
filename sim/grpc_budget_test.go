package sim

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/tritontop/tritontop/triton/pb"
)

// TestGRPCBudgetAdmission walks a budget of two 10-byte messages through
// admissions, a unary message read (its reservation shrinks to its size),
// refusals and streams ending.
func TestGRPCBudgetAdmission(t *testing.T) {
	const infer = pb.GRPCInferenceService_ModelInfer_FullMethodName
	const stream = pb.GRPCInferenceService_ModelStreamInfer_FullMethodName
	b := newGRPCBudget(20, 10)
	type call struct {
		ctx    context.Context
		cancel context.CancelFunc
	}
	var open []call
	steps := []struct {
		name     string
		method   string // admit a stream of this method
		read, on int    // or: stream number on (1-based) read a message of this size
		end      int    // or: end stream number end
		wantCode codes.Code
		wantHeld int64
	}{
		{name: "first unary admitted", method: infer, wantHeld: 10},
		{name: "health check is not counted", method: "/grpc.health.v1.Health/Check", wantHeld: 10},
		{name: "second unary admitted", method: infer, wantHeld: 20},
		{name: "third refused", method: infer, wantCode: codes.ResourceExhausted, wantHeld: 20},
		{name: "stream refused too", method: stream, wantCode: codes.ResourceExhausted, wantHeld: 20},
		{name: "second unary read 4 bytes", read: 4, on: 3, wantHeld: 14},
		{name: "a larger read never raises", read: 9, on: 3, wantHeld: 14},
		{name: "still no room for 10", method: infer, wantCode: codes.ResourceExhausted, wantHeld: 14},
		{name: "first ends", end: 1, wantHeld: 4},
		{name: "ending twice returns nothing more", end: 1, wantHeld: 4},
		{name: "stream admitted", method: stream, wantHeld: 14},
		{name: "stream keeps its reservation after a read", read: 1, on: 7, wantHeld: 14},
		{name: "stream ends", end: 7, wantHeld: 4},
		{name: "second ends", end: 3, wantHeld: 0},
	}
	for _, s := range steps {
		switch {
		case s.method != "":
			ctx, cancel := context.WithCancel(context.Background())
			got, err := b.admit(ctx, &tap.Info{FullMethodName: s.method})
			if status.Code(err) != s.wantCode {
				t.Fatalf("%s: admit = %v; want %v", s.name, err, s.wantCode)
			}
			open = append(open, call{got, cancel})
		case s.read > 0:
			budgetStats{}.HandleRPC(open[s.on-1].ctx, &stats.InPayload{Length: s.read, WireLength: s.read})
		default:
			open[s.end-1].cancel()
		}
		// context.AfterFunc runs its function in its own goroutine.
		waitFor(t, s.name, func() bool { return b.Held() == s.wantHeld })
	}
	if b.refused.Load() != 3 {
		t.Errorf("refused %d streams; want 3", b.refused.Load())
	}
}

// TestCheckGRPCBudget refuses budgets no message could pass.
func TestCheckGRPCBudget(t *testing.T) {
	for _, c := range []struct {
		limit, per int64
		ok         bool
	}{{0, 10, true}, {10, 10, true}, {1 << 30, 64 << 20, true}, {9, 10, false}, {-1, 10, false}} {
		if err := checkGRPCBudget(c.limit, c.per); (err == nil) != c.ok {
			t.Errorf("checkGRPCBudget(%d, %d) = %v; want ok %v", c.limit, c.per, err, c.ok)
		}
	}
}
