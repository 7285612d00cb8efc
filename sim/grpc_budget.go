package sim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/tritontop/tritontop/triton/pb"
)

// grpcBudget bounds the bytes that gRPC infer requests can make the
// simulator hold at once, across all connections.
//
// grpc-go reads a whole message before any handler sees it, and a message
// has no length until its first five bytes are read, so the budget is
// enforced where a stream is admitted: each new ModelInfer or
// ModelStreamInfer stream reserves the largest message it may send (the
// per-message limit) before a byte of its body is read, and a stream that
// would take the reservations past the budget is refused at once with
// RESOURCE_EXHAUSTED, the code Triton answers when it is out of resources.
// Refusing instead of waiting means a stalled client can hold at most its
// own reservation and never blocks the connection others share. Once a
// unary request's message is read its reservation shrinks to the message's
// size, held until the response is written; a streaming request keeps its
// reservation until the stream ends, since its next message may be as
// large.
type grpcBudget struct {
	limit  int64 // bytes that may be reserved at once
	perMsg int64 // what one stream reserves before its message is read

	mu      sync.Mutex
	held    int64
	refused atomic.Int64
}

// newGRPCBudget returns a budget of limit bytes for messages of at most
// perMsg bytes; limit must be at least perMsg.
func newGRPCBudget(limit, perMsg int64) *grpcBudget {
	return &grpcBudget{limit: limit, perMsg: perMsg}
}

// options are the server options that enforce the budget.
func (b *grpcBudget) options() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InTapHandle(b.admit), grpc.StatsHandler(budgetStats{})}
}

// budgetTicket is one admitted stream's reservation.
type budgetTicket struct {
	b      *grpcBudget
	stream bool
	mu     sync.Mutex
	held   int64
}

type ticketKey struct{}

// admit reserves perMsg bytes for a new infer stream, or refuses it. It runs
// on the connection's reader with the transport's lock held, so it never
// waits.
func (b *grpcBudget) admit(ctx context.Context, info *tap.Info) (context.Context, error) {
	stream := info.FullMethodName == pb.GRPCInferenceService_ModelStreamInfer_FullMethodName
	if !stream && info.FullMethodName != pb.GRPCInferenceService_ModelInfer_FullMethodName {
		return ctx, nil
	}
	b.mu.Lock()
	if b.held+b.perMsg > b.limit {
		held := b.held
		b.mu.Unlock()
		b.refused.Add(1)
		return nil, status.Errorf(codes.ResourceExhausted,
			"the server holds %d bytes of gRPC requests, and this one may take %d more, over its budget of %d bytes (--grpc-budget): retry later",
			held, b.perMsg, b.limit)
	}
	b.held += b.perMsg
	b.mu.Unlock()
	t := &budgetTicket{b: b, stream: stream, held: b.perMsg}
	// The stream's context ends whatever way the stream does, so the
	// reservation is always returned.
	context.AfterFunc(ctx, func() { t.shrink(0) })
	return context.WithValue(ctx, ticketKey{}, t), nil
}

// shrink lowers the ticket's reservation to n bytes (never raises it).
func (t *budgetTicket) shrink(n int64) {
	t.mu.Lock()
	d := t.held - n
	if d <= 0 {
		t.mu.Unlock()
		return
	}
	t.held = n
	t.mu.Unlock()
	t.b.mu.Lock()
	t.b.held -= d
	t.b.mu.Unlock()
}

// Held is the bytes reserved now; Refused counts the streams refused.
func (b *grpcBudget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// budgetStats shrinks a unary request's reservation to its message's size
// once the message is read.
type budgetStats struct{}

func (budgetStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (budgetStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	in, ok := s.(*stats.InPayload)
	if !ok {
		return
	}
	t, _ := ctx.Value(ticketKey{}).(*budgetTicket)
	if t == nil || t.stream {
		return
	}
	n := int64(in.WireLength)
	if int64(in.Length) > n {
		n = int64(in.Length)
	}
	t.shrink(n)
}
func (budgetStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (budgetStats) HandleConn(context.Context, stats.ConnStats)                       {}

// checkGRPCBudget says what is wrong with a budget for messages of at most
// perMsg bytes, or nil; 0 means no budget.
func checkGRPCBudget(limit, perMsg int64) error {
	if limit < 0 || limit > 0 && limit < perMsg {
		return fmt.Errorf("gRPC budget %d bytes: must be 0 (none) or at least the largest message (%d bytes), or no request that large could pass", limit, perMsg)
	}
	return nil
}
