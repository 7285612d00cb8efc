// Package capture is a transparent proxy in front of a Triton server that
// records its traffic as a trace (package trace): every call is forwarded
// unchanged, bytes for bytes (unknown methods and streams too), and each
// inference request's arrival time, model, version, inputs' names,
// datatypes, shapes and sizes, parameters (sequence ids among them) and
// sizes on the wire are written; the tensors themselves only when asked
// (Options.Tensors), since they may be private data. `tritontop --trace`
// replays the capture.
//
// Run is a whole capture, as tritontop capture runs it: a proxy on an
// address of its own, its trace written to a new file until the context
// ends. NewGRPCProxy and NewHTTPProxy are the proxies themselves, for a
// program that serves and writes the trace its own way.
package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// The KServe methods whose requests are recorded.
const (
	methodInfer       = "/inference.GRPCInferenceService/ModelInfer"
	methodStreamInfer = "/inference.GRPCInferenceService/ModelStreamInfer"
)

// MaxMessageBytes is the largest message the proxy forwards, Triton's own
// gRPC limit (INT32_MAX).
const MaxMessageBytes = 1<<31 - 1

// Options configures a proxy.
type Options struct {
	// Upstream is the Triton server's address (HOST:PORT; for HTTP, a URL
	// or HOST:PORT).
	Upstream string
	// Trace receives the requests; nil records nothing (a pure proxy).
	Trace *trace.Writer
	// Tensors records the input tensors' contents too.
	Tensors bool
}

// Stats counts what a proxy forwarded.
type Stats struct {
	// Calls counts the calls (unary or streams) forwarded; Recorded the
	// inference requests written to the trace.
	Calls, Recorded int64
	// Errors counts requests that could not be recorded (not parsable):
	// they were forwarded all the same.
	Errors int64
}

// frame is one gRPC message, as bytes.
type frame struct{ data mem.BufferSlice }

// frameCodec moves messages as they are, never decoding or re-encoding
// them. Its name is "proto" so that the content-type stays the client's.
type frameCodec struct{}

func (frameCodec) Name() string { return "proto" }

func (frameCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("capture: cannot send a %T", v)
	}
	return f.data, nil
}

func (frameCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("capture: cannot receive into a %T", v)
	}
	// The buffers are gRPC's to recycle once Unmarshal returns: keep a
	// reference for the send (which frees it) rather than a copy.
	data.Ref()
	f.data = data
	return nil
}

var _ encoding.CodecV2 = frameCodec{}

// GRPCProxy forwards gRPC calls to an upstream Triton and records them.
type GRPCProxy struct {
	opts   Options
	up     *grpc.ClientConn
	srv    *grpc.Server
	calls  atomic.Int64
	rec    atomic.Int64
	failed atomic.Int64
}

// NewGRPCProxy connects to the upstream (lazily, as gRPC does) and returns
// a proxy ready to Serve.
func NewGRPCProxy(opts Options) (*GRPCProxy, error) {
	if opts.Upstream == "" {
		return nil, errors.New("capture: no upstream address")
	}
	up, err := grpc.NewClient(opts.Upstream,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(frameCodec{}),
			grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)))
	if err != nil {
		return nil, fmt.Errorf("capture: upstream %s: %w", textsafe.Quote(opts.Upstream), err)
	}
	p := &GRPCProxy{opts: opts, up: up}
	p.srv = grpc.NewServer(grpc.UnknownServiceHandler(p.handle), grpc.ForceServerCodecV2(frameCodec{}),
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes))
	return p, nil
}

// Serve accepts connections on l until Stop.
func (p *GRPCProxy) Serve(l net.Listener) error { return p.srv.Serve(l) }

// Stop lets the calls under way finish, then closes the upstream.
func (p *GRPCProxy) Stop() {
	p.srv.GracefulStop()
	p.up.Close()
}

// Stats returns what the proxy forwarded so far.
func (p *GRPCProxy) Stats() Stats {
	return Stats{Calls: p.calls.Load(), Recorded: p.rec.Load(), Errors: p.failed.Load()}
}

// handle forwards one call of any method, unary or streaming, both ways,
// with its metadata, headers, trailers and status.
func (p *GRPCProxy) handle(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return errors.New("capture: no method")
	}
	p.calls.Add(1)
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	if md, ok := metadata.FromIncomingContext(ss.Context()); ok {
		md = md.Copy()
		delete(md, ":authority")
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	cs, err := p.up.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	rec := p.opts.Trace != nil && (method == methodInfer || method == methodStreamInfer)
	stream := method == methodStreamInfer
	var pending *pendingRequest // a unary request, written with its response's size

	// Client to server.
	upDone := make(chan error, 1)
	go func() {
		for {
			f := &frame{}
			if err := ss.RecvMsg(f); err != nil {
				if errors.Is(err, io.EOF) {
					upDone <- cs.CloseSend()
					return
				}
				upDone <- err
				return
			}
			if rec {
				if r := p.observe(f, stream); r != nil && !stream {
					pending = r
				}
			}
			// SendMsg frees the buffers once sent (the Ref taken in
			// Unmarshal).
			if err := cs.SendMsg(f); err != nil {
				upDone <- err
				return
			}
		}
	}()

	// Server to client.
	first := true
	var respBytes int64
	for {
		f := &frame{}
		err := cs.RecvMsg(f)
		if first {
			first = false
			if h, herr := cs.Header(); herr == nil {
				if err := ss.SendHeader(h); err != nil {
					cancel()
					return err
				}
			}
		}
		if err != nil {
			ss.SetTrailer(cs.Trailer())
			if rec && !stream {
				// ModelInfer's client sent its one request and closed its
				// side: the request is written, whatever the answer.
				<-upDone
				p.finish(pending, respBytes)
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			cancel()
			return err // the upstream's status, as it sent it
		}
		respBytes += int64(f.data.Len())
		if err := ss.SendMsg(f); err != nil {
			cancel()
			return err
		}
	}
}

// pendingRequest is a recorded request waiting for its response's size.
type pendingRequest struct {
	req     trace.Request
	arrived time.Time
}

// observe decodes an inference request (a copy: the bytes forwarded are
// the client's) and records it, at once for a stream's, or returns it to
// be written with its response.
func (p *GRPCProxy) observe(f *frame, stream bool) *pendingRequest {
	arrived := time.Now()
	var raw []byte
	if len(f.data) == 1 {
		raw = f.data[0].ReadOnlyData() // read only: never kept past the send
	} else {
		raw = f.data.Materialize()
	}
	r, err := ParseRequest(raw, p.opts.Tensors)
	if err != nil {
		p.failed.Add(1)
		return nil
	}
	r.Protocol, r.Stream, r.RequestBytes = "grpc", stream, int64(len(raw))
	if stream {
		p.write(r, arrived)
		return nil
	}
	return &pendingRequest{req: r, arrived: arrived}
}

func (p *GRPCProxy) finish(r *pendingRequest, respBytes int64) {
	if r == nil {
		return
	}
	r.req.ResponseBytes = respBytes
	p.write(r.req, r.arrived)
}

func (p *GRPCProxy) write(r trace.Request, arrived time.Time) {
	if err := p.opts.Trace.Write(r, arrived); err != nil {
		p.failed.Add(1)
		return
	}
	p.rec.Add(1)
}

// RequestOf is a ModelInferRequest as a trace records it: its inputs'
// names, datatypes, shapes and sizes, with their raw contents only when
// tensors is set; its parameters and the outputs it asks for.
func RequestOf(m *pb.ModelInferRequest, tensors bool) trace.Request {
	r := trace.Request{Model: m.GetModelName(), Version: m.GetModelVersion(), ID: m.GetId()}
	raw := m.GetRawInputContents()
	for i, in := range m.GetInputs() {
		ti := trace.Input{Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape()}
		switch {
		case i < len(raw):
			ti.Bytes = int64(len(raw[i]))
			if tensors {
				ti.Data = raw[i]
			}
		default:
			// Typed contents: the size they take in Triton's raw form.
			if n := kserve.ElementCount(ti.Shape); n >= 0 && kserve.ElementSize(ti.Datatype) > 0 {
				ti.Bytes = n * int64(kserve.ElementSize(ti.Datatype))
			}
		}
		r.Inputs = append(r.Inputs, ti)
	}
	for _, o := range m.GetOutputs() {
		r.Outputs = append(r.Outputs, o.GetName())
	}
	if ps := m.GetParameters(); len(ps) > 0 {
		r.Parameters = make(map[string]any, len(ps))
		for k, v := range ps {
			switch x := v.GetParameterChoice().(type) {
			case *pb.InferParameter_BoolParam:
				r.Parameters[k] = x.BoolParam
			case *pb.InferParameter_Int64Param:
				r.Parameters[k] = x.Int64Param
			case *pb.InferParameter_StringParam:
				r.Parameters[k] = x.StringParam
			case *pb.InferParameter_DoubleParam:
				r.Parameters[k] = x.DoubleParam
			case *pb.InferParameter_Uint64Param:
				r.Parameters[k] = int64(x.Uint64Param)
			}
		}
	}
	return r
}

// Source names a capture in its trace's header.
func Source(listen, upstream string, protocol string) string {
	return strings.Join([]string{"capture", protocol, listen, "->", upstream}, " ")
}
