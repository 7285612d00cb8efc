package triton

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// grpcClient is the Client over Triton's GRPCInferenceService. Requests are
// spread round-robin over a pool of connections, because one HTTP/2
// connection serialises its frames on one writer and caps throughput at
// high concurrency.
type grpcClient struct {
	conns []*grpc.ClientConn
	svcs  []pb.GRPCInferenceServiceClient
	next  atomic.Uint64
	// md is the Options.Headers metadata, built once; nil when there is none.
	md metadata.MD
	// opts raise the 4 MiB message limits to Triton's INT32_MAX; rawOpts
	// add the codec that sends prepared bytes.
	opts       []grpc.CallOption
	rawOpts    []grpc.CallOption
	streamDesc grpc.StreamDesc
	// replies recycles Send's reply holders, which escape through Invoke
	// and would otherwise cost one allocation per request.
	replies sync.Pool
}

func newGRPCClient(ep endpoint, o Options, tlsConf *tls.Config) (*grpcClient, error) {
	n := o.Connections
	if n <= 0 {
		n = 1
	}
	creds := insecure.NewCredentials()
	if tlsConf != nil {
		creds = credentials.NewTLS(tlsConf)
	}
	c := &grpcClient{
		opts: []grpc.CallOption{
			grpc.MaxCallRecvMsgSize(math.MaxInt32),
			grpc.MaxCallSendMsgSize(math.MaxInt32),
		},
		streamDesc: grpc.StreamDesc{StreamName: "ModelStreamInfer", ServerStreams: true, ClientStreams: true},
		replies:    sync.Pool{New: func() any { return new(sizeReply) }},
	}
	c.rawOpts = append(append([]grpc.CallOption(nil), c.opts...), grpc.ForceCodecV2(newRawCodec()))
	if len(o.Headers) > 0 {
		c.md = metadata.MD{}
		for k, v := range o.Headers {
			// HTTP/2 header names are lower case.
			c.md.Append(strings.ToLower(k), v)
		}
	}
	for range n {
		conn, err := grpc.NewClient(ep.addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("gRPC client for %s: %w", ep.addr, err)
		}
		// Connect now rather than on first use, so the pool's handshakes
		// do not land in the first requests' latencies.
		conn.Connect()
		c.conns = append(c.conns, conn)
		c.svcs = append(c.svcs, pb.NewGRPCInferenceServiceClient(conn))
	}
	return c, nil
}

func (c *grpcClient) pick() int {
	if len(c.conns) == 1 {
		return 0
	}
	return int(c.next.Add(1) % uint64(len(c.conns)))
}

func (c *grpcClient) svc() pb.GRPCInferenceServiceClient { return c.svcs[c.pick()] }

func (c *grpcClient) ctx(ctx context.Context) context.Context {
	if c.md == nil {
		return ctx
	}
	return metadata.NewOutgoingContext(ctx, c.md)
}

// grpcError maps a gRPC status to *Error, and a status caused by the
// caller's own context to the context's error, so that shutting down is not
// counted as a server error.
func grpcError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	if (st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded) && ctx.Err() != nil {
		return ctx.Err()
	}
	return &Error{Code: st.Code(), Message: textsafe.Excerpt(st.Message(), maxErrorMessage)}
}

// ServerLive implements Client.
func (c *grpcClient) ServerLive(ctx context.Context) (bool, error) {
	r, err := c.svc().ServerLive(c.ctx(ctx), &pb.ServerLiveRequest{}, c.opts...)
	if err != nil {
		return false, grpcError(ctx, err)
	}
	return r.GetLive(), nil
}

// ServerReady implements Client.
func (c *grpcClient) ServerReady(ctx context.Context) (bool, error) {
	r, err := c.svc().ServerReady(c.ctx(ctx), &pb.ServerReadyRequest{}, c.opts...)
	if err != nil {
		return false, grpcError(ctx, err)
	}
	return r.GetReady(), nil
}

// ServerMetadata implements Client.
func (c *grpcClient) ServerMetadata(ctx context.Context) (*pb.ServerMetadataResponse, error) {
	r, err := c.svc().ServerMetadata(c.ctx(ctx), &pb.ServerMetadataRequest{}, c.opts...)
	return r, grpcError(ctx, err)
}

// ModelReady implements Client.
func (c *grpcClient) ModelReady(ctx context.Context, model, version string) (bool, error) {
	r, err := c.svc().ModelReady(c.ctx(ctx), &pb.ModelReadyRequest{Name: model, Version: version}, c.opts...)
	if err != nil {
		return false, grpcError(ctx, err)
	}
	return r.GetReady(), nil
}

// ModelMetadata implements Client.
func (c *grpcClient) ModelMetadata(ctx context.Context, model, version string) (*pb.ModelMetadataResponse, error) {
	r, err := c.svc().ModelMetadata(c.ctx(ctx), &pb.ModelMetadataRequest{Name: model, Version: version}, c.opts...)
	return r, grpcError(ctx, err)
}

// ModelConfig implements Client.
func (c *grpcClient) ModelConfig(ctx context.Context, model, version string) (*pb.ModelConfig, error) {
	r, err := c.svc().ModelConfig(c.ctx(ctx), &pb.ModelConfigRequest{Name: model, Version: version}, c.opts...)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	if r.GetConfig() == nil {
		return nil, fmt.Errorf("model config for %s: server sent no config", textsafe.Quote(model))
	}
	return r.GetConfig(), nil
}

// ModelStatistics implements Client.
func (c *grpcClient) ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
	r, err := c.svc().ModelStatistics(c.ctx(ctx), &pb.ModelStatisticsRequest{Name: model, Version: version}, c.opts...)
	return r, grpcError(ctx, err)
}

// RepositoryIndex implements Client.
func (c *grpcClient) RepositoryIndex(ctx context.Context, readyOnly bool) ([]*pb.RepositoryIndexResponse_ModelIndex, error) {
	r, err := c.svc().RepositoryIndex(c.ctx(ctx), &pb.RepositoryIndexRequest{Ready: readyOnly}, c.opts...)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	return r.GetModels(), nil
}

// grpcPrepared is a ModelInferRequest marshalled once. wire holds one
// buffer and is never mutated, so concurrent Sends share it safely.
type grpcPrepared struct {
	wire mem.BufferSlice
	size int
}

// Size implements Prepared.
func (p *grpcPrepared) Size() int { return p.size }

// Prepare implements Client.
func (c *grpcClient) Prepare(req *InferRequest) (Prepared, error) {
	return prepareGRPC(req)
}

func prepareGRPC(req *InferRequest) (*grpcPrepared, error) {
	m, err := buildModelInferRequest(req)
	if err != nil {
		return nil, err
	}
	// Deterministic, so that parameter maps encode the same way every time.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode infer request for %s: %w", textsafe.Quote(req.Model), err)
	}
	return &grpcPrepared{wire: mem.BufferSlice{mem.SliceBuffer(b)}, size: len(b)}, nil
}

var errForeignPrepared = errors.New("prepared request was made by a client of another protocol: call Prepare on this client")

// Send implements Client. The prepared bytes go out as they are and the
// response is only counted, never unmarshalled.
func (c *grpcClient) Send(ctx context.Context, p Prepared) (int, error) {
	gp, ok := p.(*grpcPrepared)
	if !ok {
		return 0, errForeignPrepared
	}
	r := c.replies.Get().(*sizeReply)
	defer c.replies.Put(r)
	r.size, r.ph = 0, nil
	var req any = gp
	if ph := phasesOf(ctx); ph != nil {
		ph.begin()
		ph.call.p, r.ph = gp, ph
		req = &ph.call
		defer ph.finish()
	}
	if err := c.conns[c.pick()].Invoke(c.ctx(ctx), pb.GRPCInferenceService_ModelInfer_FullMethodName, req, r, c.rawOpts...); err != nil {
		return 0, grpcError(ctx, err)
	}
	return r.size, nil
}

// Infer implements Client. It sends the same bytes Prepare would, so that
// Infer and Send can never disagree on the wire.
func (c *grpcClient) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	gp, err := prepareGRPC(req)
	if err != nil {
		return nil, err
	}
	resp := new(pb.ModelInferResponse)
	if err := c.conns[c.pick()].Invoke(c.ctx(ctx), pb.GRPCInferenceService_ModelInfer_FullMethodName, gp, resp, c.rawOpts...); err != nil {
		return nil, grpcError(ctx, err)
	}
	return decodeModelInferResponse(resp)
}

// Close implements Client.
func (c *grpcClient) Close() error {
	var errs []error
	for _, conn := range c.conns {
		if err := conn.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// buildModelInferRequest turns an InferRequest into its protobuf form with
// every input in raw_input_contents, as Triton's own clients send it.
func buildModelInferRequest(req *InferRequest) (*pb.ModelInferRequest, error) {
	if req == nil || req.Model == "" {
		return nil, errors.New("infer request needs a model name")
	}
	params, err := inferParameters(req.Parameters)
	if err != nil {
		return nil, fmt.Errorf("infer request for %s: %w", textsafe.Quote(req.Model), err)
	}
	m := &pb.ModelInferRequest{
		ModelName:        req.Model,
		ModelVersion:     req.Version,
		Id:               req.ID,
		Parameters:       params,
		Inputs:           make([]*pb.ModelInferRequest_InferInputTensor, len(req.Inputs)),
		RawInputContents: make([][]byte, 0, len(req.Inputs)),
	}
	for i, in := range req.Inputs {
		if in.Name == "" || in.Datatype == "" {
			return nil, fmt.Errorf("infer request for %s: input %d needs a name and a datatype", textsafe.Quote(req.Model), i)
		}
		m.Inputs[i] = &pb.ModelInferRequest_InferInputTensor{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}
		if in.SharedMemory != nil {
			if m.Inputs[i].Parameters, err = inferParameters(in.SharedMemory.params()); err != nil {
				return nil, err
			}
			continue
		}
		m.RawInputContents = append(m.RawInputContents, in.Data)
	}
	for _, name := range req.Outputs {
		o := &pb.ModelInferRequest_InferRequestedOutputTensor{Name: name}
		if ref, ok := req.OutputSharedMemory[name]; ok {
			if o.Parameters, err = inferParameters(ref.params()); err != nil {
				return nil, err
			}
		}
		m.Outputs = append(m.Outputs, o)
	}
	return m, nil
}

// inferParameters converts request parameters to InferParameter values.
func inferParameters(in map[string]any) (map[string]*pb.InferParameter, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]*pb.InferParameter, len(in))
	for k, v := range in {
		p := &pb.InferParameter{}
		switch x := v.(type) {
		case bool:
			p.ParameterChoice = &pb.InferParameter_BoolParam{BoolParam: x}
		case string:
			p.ParameterChoice = &pb.InferParameter_StringParam{StringParam: x}
		case int:
			p.ParameterChoice = &pb.InferParameter_Int64Param{Int64Param: int64(x)}
		case int32:
			p.ParameterChoice = &pb.InferParameter_Int64Param{Int64Param: int64(x)}
		case int64:
			p.ParameterChoice = &pb.InferParameter_Int64Param{Int64Param: x}
		case uint64:
			p.ParameterChoice = &pb.InferParameter_Uint64Param{Uint64Param: x}
		case float64:
			p.ParameterChoice = &pb.InferParameter_DoubleParam{DoubleParam: x}
		case float32:
			p.ParameterChoice = &pb.InferParameter_DoubleParam{DoubleParam: float64(x)}
		default:
			return nil, fmt.Errorf("parameter %s has type %T: use string, bool, int64 or float64", textsafe.Quote(k), v)
		}
		out[k] = p
	}
	return out, nil
}

// parameterValues converts InferParameter values back to Go values.
func parameterValues(in map[string]*pb.InferParameter) map[string]any {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, p := range in {
		switch x := p.GetParameterChoice().(type) {
		case *pb.InferParameter_BoolParam:
			out[k] = x.BoolParam
		case *pb.InferParameter_StringParam:
			out[k] = x.StringParam
		case *pb.InferParameter_Int64Param:
			out[k] = x.Int64Param
		case *pb.InferParameter_Uint64Param:
			out[k] = x.Uint64Param
		case *pb.InferParameter_DoubleParam:
			out[k] = x.DoubleParam
		}
	}
	return out
}

// decodeModelInferResponse reads each output from raw_output_contents, as
// Triton sends it, or from typed contents, as other KServe servers may.
func decodeModelInferResponse(r *pb.ModelInferResponse) (*InferResponse, error) {
	out := &InferResponse{
		Model:      r.GetModelName(),
		Version:    r.GetModelVersion(),
		ID:         r.GetId(),
		Parameters: parameterValues(r.GetParameters()),
		Outputs:    make([]Tensor, len(r.GetOutputs())),
	}
	raw := r.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(r.GetOutputs()) {
		return nil, fmt.Errorf("infer response from %s: %d outputs but %d raw_output_contents", textsafe.Quote(r.GetModelName()), len(r.GetOutputs()), len(raw))
	}
	for i, o := range r.GetOutputs() {
		t := Tensor{Name: o.GetName(), Datatype: o.GetDatatype(), Shape: o.GetShape()}
		if len(raw) > 0 {
			t.Data = raw[i]
		} else if o.GetContents() != nil {
			b, err := contentsToRaw(o.GetDatatype(), o.GetContents())
			if err != nil {
				return nil, fmt.Errorf("infer response output %s: %w", textsafe.Quote(o.GetName()), err)
			}
			t.Data = b
		}
		out.Outputs[i] = t
	}
	return out, nil
}

// contentsToRaw converts typed InferTensorContents to Triton's raw form.
func contentsToRaw(datatype string, c *pb.InferTensorContents) ([]byte, error) {
	le := binary.LittleEndian
	var b []byte
	switch datatype {
	case "BOOL":
		for _, v := range c.GetBoolContents() {
			if v {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	case "INT8":
		for _, v := range c.GetIntContents() {
			b = append(b, byte(int8(v)))
		}
	case "INT16":
		for _, v := range c.GetIntContents() {
			b = le.AppendUint16(b, uint16(int16(v)))
		}
	case "INT32":
		for _, v := range c.GetIntContents() {
			b = le.AppendUint32(b, uint32(v))
		}
	case "INT64":
		for _, v := range c.GetInt64Contents() {
			b = le.AppendUint64(b, uint64(v))
		}
	case "UINT8":
		for _, v := range c.GetUintContents() {
			b = append(b, byte(v))
		}
	case "UINT16":
		for _, v := range c.GetUintContents() {
			b = le.AppendUint16(b, uint16(v))
		}
	case "UINT32":
		for _, v := range c.GetUintContents() {
			b = le.AppendUint32(b, v)
		}
	case "UINT64":
		for _, v := range c.GetUint64Contents() {
			b = le.AppendUint64(b, v)
		}
	case "FP32":
		for _, v := range c.GetFp32Contents() {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	case "FP64":
		for _, v := range c.GetFp64Contents() {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	case "BYTES":
		b = kserve.EncodeBytes(c.GetBytesContents())
	default:
		return nil, fmt.Errorf("datatype %s has no typed contents (FP16 and BF16 travel raw only)", textsafe.Quote(datatype))
	}
	return b, nil
}
