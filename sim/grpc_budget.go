package sim

import (
	"context"
	"net"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
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

// budgetedService is desc with its calls' messages under their holds:
// each handler waits for its message's verdict before reading it (a
// refused message is never read: the call ends with the refusal), and
// decodes it with its decoding reserved (serverCodec). The handlers are
// wrapped once; ModelInfer, the benchmarked path, allocates nothing more
// per call.
func budgetedService(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i := range d.Methods {
		if desc.ServiceName == pb.GRPCInferenceService_ServiceDesc.ServiceName && d.Methods[i].MethodName == "ModelInfer" {
			d.Methods[i].Handler = modelInferHandler
			continue
		}
		h := d.Methods[i].Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			hold := holdFrom(ctx)
			defer hold.close() // its answer is small
			if err := hold.awaitMessage(ctx); err != nil {
				return nil, grpcError(err)
			}
			return h(srv, ctx, func(m any) error {
				pm, ok := m.(proto.Message)
				if !ok || hold == nil {
					return dec(m)
				}
				return decodeUnder(hold, dec, &budgetedMsg{msg: pm, hold: hold})
			}, in)
		}
	}
	d.Streams = slices.Clone(desc.Streams)
	for i := range d.Streams {
		if desc.ServiceName == pb.GRPCInferenceService_ServiceDesc.ServiceName && d.Streams[i].StreamName == "ModelStreamInfer" {
			continue // it takes each message under the hold itself
		}
		h := d.Streams[i].Handler
		d.Streams[i].Handler = func(srv any, ss grpc.ServerStream) error {
			hold := holdFrom(ss.Context())
			defer hold.close()
			if err := hold.awaitMessage(ss.Context()); err != nil {
				return grpcError(err)
			}
			return h(srv, ss)
		}
	}
	return &d
}

// decodeUnder reads a message that awaitMessage admitted into bm with dec,
// and takes its reservation off the hold's queue: a message whose decoding
// did not fit is left empty by the codec and refused here.
func decodeUnder(hold *budgetHold, dec func(any) error, bm *budgetedMsg) error {
	if err := dec(bm); err != nil {
		return err
	}
	if _, err := hold.popMessage(); err != nil {
		return grpcError(err)
	}
	return nil
}

// inferIn is a ModelInfer request, its budgetedMsg and its answer's
// budgetedResp, allocated together.
type inferIn struct {
	req pb.ModelInferRequest
	msg budgetedMsg
	out budgetedResp
}

// newInferIn is an empty request to decode under hold.
func newInferIn(hold *budgetHold) *inferIn {
	in := &inferIn{}
	in.msg = budgetedMsg{msg: &in.req, hold: hold}
	return in
}

// modelInferHandler is the generated ModelInfer handler with its request
// taken under the call's hold, which stays held until its answer is
// encoded (serverCodec.Marshal closes it). The server has no interceptors.
func modelInferHandler(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	hold := holdFrom(ctx)
	if err := hold.awaitMessage(ctx); err != nil {
		hold.close()
		return nil, grpcError(err)
	}
	in := newInferIn(hold)
	if err := decodeUnder(hold, dec, &in.msg); err != nil {
		hold.close()
		return nil, err
	}
	resp, err := srv.(pb.GRPCInferenceServiceServer).ModelInfer(ctx, &in.req)
	if err != nil || hold == nil {
		hold.close()
		return resp, err
	}
	in.out = budgetedResp{resp: resp, hold: hold}
	return &in.out, nil
}

// budgetCreds wraps the server's transport credentials (nil: plaintext) so
// that every connection, once its handshake is done, is read through a
// budgetConn.
type budgetCreds struct {
	credentials.TransportCredentials
	g *grpcBudget
}

// insecureInfo is the AuthInfo of a plaintext connection.
type insecureInfo struct{ credentials.CommonAuthInfo }

func (insecureInfo) AuthType() string { return "insecure" }

// ServerHandshake implements credentials.TransportCredentials.
func (c *budgetCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info := raw, credentials.AuthInfo(insecureInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}})
	if c.TransportCredentials != nil {
		var err error
		if conn, info, err = c.TransportCredentials.ServerHandshake(raw); err != nil {
			return nil, nil, err
		}
	}
	return newBudgetConn(conn, c.g), info, nil
}

// Info implements credentials.TransportCredentials.
func (c *budgetCreds) Info() credentials.ProtocolInfo {
	if c.TransportCredentials != nil {
		return c.TransportCredentials.Info()
	}
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

// Clone implements credentials.TransportCredentials.
func (c *budgetCreds) Clone() credentials.TransportCredentials {
	d := *c
	if c.TransportCredentials != nil {
		d.TransportCredentials = c.TransportCredentials.Clone()
	}
	return &d
}

// ClientHandshake implements credentials.TransportCredentials; a server
// never calls it.
func (c *budgetCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if c.TransportCredentials != nil {
		return c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	}
	return raw, insecureInfo{}, nil
}

// OverrideServerName implements credentials.TransportCredentials.
//
// Deprecated: as in grpc-go.
func (c *budgetCreds) OverrideServerName(name string) error {
	if c.TransportCredentials != nil {
		return c.TransportCredentials.OverrideServerName(name) //nolint:staticcheck // forwarded
	}
	return nil
}

// budgetAddr is a budgetConn's remote address: the server puts it in every
// call's peer, which is how the tap finds the connection's frameScan.
type budgetAddr struct {
	net.Addr
	conn *budgetConn
}

// bufSize is a budgetConn's read buffer, the size of grpc-go's own.
const bufSize = 32 << 10

// budgetConn reads a connection for the server through its own buffer and
// follows what it hands over (frameScan). The server reads a frame's header
// and then its payload, so each Read is one frame's bytes at most.
type budgetConn struct {
	net.Conn
	addr *budgetAddr
	scan *frameScan
	buf  []byte
	r, w int
	err  error // a read error held until the buffer is drained
}

func newBudgetConn(c net.Conn, g *grpcBudget) *budgetConn {
	bc := &budgetConn{Conn: c, scan: newFrameScan(g), buf: make([]byte, bufSize)}
	bc.addr = &budgetAddr{Addr: c.RemoteAddr(), conn: bc}
	return bc
}

// RemoteAddr implements net.Conn.
func (c *budgetConn) RemoteAddr() net.Addr { return c.addr }

// Read implements net.Conn: it hands over what it has, and follows it.
// The server reads a connection until it fails: then every call still
// followed has its hold closed.
func (c *budgetConn) Read(p []byte) (int, error) {
	n, err := c.fill(p)
	c.scan.scan(p[:n])
	if err != nil && n == 0 {
		c.scan.closeAll()
	}
	return n, err
}

// fill copies buffered bytes into p, reading the connection when there are
// none (straight into p when p is as large as the buffer).
func (c *budgetConn) fill(p []byte) (int, error) {
	if c.r == c.w {
		if c.err != nil {
			err := c.err
			c.err = nil
			return 0, err
		}
		if len(p) >= len(c.buf) {
			return c.Conn.Read(p)
		}
		n, err := c.Conn.Read(c.buf)
		c.r, c.w = 0, n
		if n == 0 {
			return 0, err
		}
		c.err = err // once the buffer is drained
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}
