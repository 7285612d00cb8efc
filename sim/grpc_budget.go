package sim

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/tap"
)

// grpcBudget puts gRPC requests under the memory budget.
//
// grpc-go reads a whole message before any handler sees it, and a message's
// length is in its first five bytes, which only the transport reads. So
// every connection is read through a budgetConn: it hands the server the
// bytes of one frame at a time (the server's own read buffer is off) and
// follows them (frameScan), reserving each message's cost as soon as its
// length is read, or refusing it. The call's handler waits for that
// verdict before reading the message, so a refused message is never read
// (only what HTTP/2 flow control lets the client send ahead arrives): the
// call ends at once with RESOURCE_EXHAUSTED and the budget's reason.
// Nothing waits for room, so no call stalls another.
//
// The tap, which the server runs on the connection's reader goroutine right
// after reading a call's header block, gives each call a budgetHold and
// binds it to its stream; the hold is closed when the call ends.
type grpcBudget struct {
	b       *memBudget
	maxMsg  int64           // the largest message received (--grpc-max-input-size)
	methods map[string]bool // the full names of the methods served
}

// cost is what a message of n bytes makes the simulator hold while it is
// received and decoded: its frames as received, the one contiguous copy
// that protobuf decodes from, and the decoded message. A compressed
// message may decompress to the largest message; its size is known only
// then, so that is what it costs.
func (g *grpcBudget) cost(n int64, compressed bool) int64 {
	if compressed {
		return n + 2*g.maxMsg
	}
	return 3 * n
}

// decodedShare is the part of cost for the decoded message: as large as
// the message (the codec reserves more for a message that decodes larger,
// before decoding it).
func (g *grpcBudget) decodedShare(n int64, compressed bool) int64 {
	if compressed {
		return g.maxMsg
	}
	return n
}

// serverOptions are the options that put the server's calls under the
// budget, with creds (nil: plaintext) for the connections.
func (g *grpcBudget) serverOptions(creds credentials.TransportCredentials) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.Creds(&budgetCreds{TransportCredentials: creds, g: g}),
		grpc.ReadBufferSize(0), // budgetConn buffers
		grpc.InTapHandle(g.admit),
	}
}

// admit gives a new call of a method served its hold (a call of another is
// answered UNIMPLEMENTED, its message unread). It runs on the connection's
// reader goroutine, right after the server read the call's header block.
func (g *grpcBudget) admit(ctx context.Context, info *tap.Info) (context.Context, error) {
	if !g.methods[info.FullMethodName] {
		return ctx, nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ctx, nil
	}
	a, ok := p.Addr.(*budgetAddr)
	if !ok {
		return ctx, nil
	}
	c := &budgetedCall{}
	c.hold.b = g.b
	c.framing = msgFraming{hold: &c.hold, ctx: ctx}
	a.conn.scan.bind(&c.framing)
	return context.WithValue(ctx, holdKey{}, &c.hold), nil
}

// serve registers desc's service on srv with impl, its calls under the
// budget (budgetedService).
func (g *grpcBudget) serve(srv *grpc.Server, desc *grpc.ServiceDesc, impl any) {
	if g.methods == nil {
		g.methods = map[string]bool{}
	}
	for _, m := range desc.Methods {
		g.methods["/"+desc.ServiceName+"/"+m.MethodName] = true
	}
	for _, st := range desc.Streams {
		g.methods["/"+desc.ServiceName+"/"+st.StreamName] = true
	}
	srv.RegisterService(budgetedService(desc), impl)
}

type holdKey struct{}

// holdFrom is the budget hold of a call's context, or nil.
func holdFrom(ctx context.Context) *budgetHold {
	h, _ := ctx.Value(holdKey{}).(*budgetHold)
	return h
}
