package triton

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// simpleConfig is Triton's "simple" example model: OUTPUT0 = INPUT0 +
// INPUT1 and OUTPUT1 = INPUT0 - INPUT1, INT32 [1,16], no batching.
func simpleConfig() *pb.ModelConfig {
	return &pb.ModelConfig{
		Name:         "simple",
		Platform:     "tensorflow_graphdef",
		MaxBatchSize: 0,
		Input: []*pb.ModelInput{
			{Name: "INPUT0", DataType: pb.DataType_TYPE_INT32, Dims: []int64{1, 16}},
			{Name: "INPUT1", DataType: pb.DataType_TYPE_INT32, Dims: []int64{1, 16}},
		},
		Output: []*pb.ModelOutput{
			{Name: "OUTPUT0", DataType: pb.DataType_TYPE_INT32, Dims: []int64{1, 16}},
			{Name: "OUTPUT1", DataType: pb.DataType_TYPE_INT32, Dims: []int64{1, 16}},
		},
		InstanceGroup: []*pb.ModelInstanceGroup{{Count: 2, Kind: pb.ModelInstanceGroup_KIND_CPU}},
	}
}

func unknownModel(name string) string {
	return fmt.Sprintf("Request for unknown model: '%s' is not found", name)
}

// simpleInfer runs the simple model, failing like Triton on bad input.
func simpleInfer(model string, inputs []Tensor) ([]Tensor, codes.Code, string) {
	if model != "simple" {
		return nil, codes.NotFound, unknownModel(model)
	}
	if len(inputs) != 2 {
		return nil, codes.InvalidArgument, fmt.Sprintf("expected 2 inputs but got %d inputs for model 'simple'", len(inputs))
	}
	var in [2][]int32
	for _, t := range inputs {
		i := map[string]int{"INPUT0": 0, "INPUT1": 1}[t.Name]
		if t.Name != "INPUT0" && t.Name != "INPUT1" {
			return nil, codes.InvalidArgument, fmt.Sprintf("unexpected inference input '%s' for model 'simple'", t.Name)
		}
		if t.Datatype != "INT32" {
			return nil, codes.InvalidArgument, fmt.Sprintf("inference input '%s' data-type is '%s', but model 'simple' expects 'INT32'", t.Name, t.Datatype)
		}
		if len(t.Shape) != 2 || t.Shape[0] != 1 || t.Shape[1] != 16 {
			return nil, codes.InvalidArgument, fmt.Sprintf("unexpected shape for input '%s' for model 'simple'. Expected [1,16], got %v", t.Name, t.Shape)
		}
		if len(t.Data) != 64 {
			return nil, codes.InvalidArgument, fmt.Sprintf("input byte size mismatch for input '%s' for model 'simple'. Expected 64, got %d", t.Name, len(t.Data))
		}
		in[i] = Int32s(t.Data)
	}
	sum, diff := make([]int32, 16), make([]int32, 16)
	for i := range sum {
		sum[i] = in[0][i] + in[1][i]
		diff[i] = in[0][i] - in[1][i]
	}
	return []Tensor{
		{Name: "OUTPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Data: PutInt32s(sum)},
		{Name: "OUTPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Data: PutInt32s(diff)},
	}, codes.OK, ""
}

// captureCodec records the exact bytes of every ModelInferRequest the
// server receives and the size of every response it sends.
type captureCodec struct {
	proto encoding.CodecV2
	srv   *grpcTestServer
}

func (c captureCodec) Name() string { return "proto" }

func (c captureCodec) Marshal(v any) (mem.BufferSlice, error) {
	out, err := c.proto.Marshal(v)
	if err == nil && !c.srv.quiet {
		if r, ok := v.(*pb.ModelStreamInferResponse); ok {
			c.srv.mu.Lock()
			c.srv.streamSizes[r.GetInferResponse().GetId()] = out.Len()
			c.srv.mu.Unlock()
		}
		if _, ok := v.(*pb.ModelInferResponse); ok {
			c.srv.mu.Lock()
			c.srv.respSizes = append(c.srv.respSizes, out.Len())
			c.srv.mu.Unlock()
		}
	}
	return out, err
}

func (c captureCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*pb.ModelInferRequest); ok && !c.srv.quiet {
		c.srv.mu.Lock()
		c.srv.wire = append(c.srv.wire, data.Materialize())
		c.srv.mu.Unlock()
	}
	return c.proto.Unmarshal(data, v)
}

// grpcTestServer is a small Triton over real loopback gRPC.
type grpcTestServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	addr string
	// quiet turns off recording, for benchmarks.
	quiet bool

	mu          sync.Mutex
	wire        [][]byte       // ModelInferRequest bytes as received
	respSizes   []int          // ModelInferResponse sizes as sent
	streamSizes map[string]int // ModelStreamInferResponse sizes by id
	peers       map[string]bool
	md          metadata.MD
}

func startGRPCServer(t testing.TB) *grpcTestServer {
	return startGRPCServerQuiet(t, false)
}

func startGRPCServerQuiet(t testing.TB, quiet bool) *grpcTestServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &grpcTestServer{addr: lis.Addr().String(), quiet: quiet, streamSizes: map[string]int{}, peers: map[string]bool{}}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(captureCodec{proto: encoding.GetCodecV2("proto"), srv: s}))
	pb.RegisterGRPCInferenceServiceServer(srv, s)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return s
}

func (s *grpcTestServer) note(ctx context.Context) {
	if s.quiet {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := peer.FromContext(ctx); ok {
		s.peers[p.Addr.String()] = true
	}
	s.md, _ = metadata.FromIncomingContext(ctx)
}

func (s *grpcTestServer) ServerLive(ctx context.Context, _ *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	s.note(ctx)
	return &pb.ServerLiveResponse{Live: true}, nil
}

func (s *grpcTestServer) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	return &pb.ServerReadyResponse{Ready: false}, nil
}

func (s *grpcTestServer) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return &pb.ServerMetadataResponse{Name: "triton", Version: "2.71.0", Extensions: []string{"classification", "statistics"}}, nil
}

func (s *grpcTestServer) ModelReady(_ context.Context, r *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	switch r.GetName() {
	case "simple":
		return &pb.ModelReadyResponse{Ready: true}, nil
	case "loading":
		return &pb.ModelReadyResponse{Ready: false}, nil
	}
	return nil, status.Error(codes.NotFound, unknownModel(r.GetName()))
}

func (s *grpcTestServer) ModelMetadata(_ context.Context, r *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	if r.GetName() != "simple" {
		return nil, status.Error(codes.NotFound, unknownModel(r.GetName()))
	}
	t := func(n string) *pb.ModelMetadataResponse_TensorMetadata {
		return &pb.ModelMetadataResponse_TensorMetadata{Name: n, Datatype: "INT32", Shape: []int64{1, 16}}
	}
	return &pb.ModelMetadataResponse{
		Name: "simple", Versions: []string{"1"}, Platform: "tensorflow_graphdef",
		Inputs: []*pb.ModelMetadataResponse_TensorMetadata{t("INPUT0"), t("INPUT1")}, Outputs: []*pb.ModelMetadataResponse_TensorMetadata{t("OUTPUT0"), t("OUTPUT1")},
	}, nil
}

func (s *grpcTestServer) ModelConfig(_ context.Context, r *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	if r.GetName() != "simple" {
		return nil, status.Error(codes.NotFound, unknownModel(r.GetName()))
	}
	return &pb.ModelConfigResponse{Config: simpleConfig()}, nil
}

func simpleStats() *pb.ModelStatisticsResponse {
	d := func(c, ns uint64) *pb.StatisticDuration { return &pb.StatisticDuration{Count: c, Ns: ns} }
	return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{{
		Name: "simple", Version: "1", LastInference: 1700000000000, InferenceCount: 7, ExecutionCount: 5,
		InferenceStats: &pb.InferStatistics{
			Success: d(7, 7000000), Fail: d(1, 5000), Queue: d(7, 70000),
			ComputeInput: d(7, 700), ComputeInfer: d(7, 700000), ComputeOutput: d(7, 7000),
			CacheHit: d(0, 0), CacheMiss: d(0, 0),
		},
		BatchStats: []*pb.InferBatchStatistics{{BatchSize: 1, ComputeInput: d(5, 500), ComputeInfer: d(5, 500000), ComputeOutput: d(5, 5000)}},
	}}}
}

func (s *grpcTestServer) ModelStatistics(_ context.Context, r *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	if r.GetName() != "" && r.GetName() != "simple" {
		return nil, status.Errorf(codes.InvalidArgument, "requested model '%s' is not available", r.GetName())
	}
	return simpleStats(), nil
}

func (s *grpcTestServer) RepositoryIndex(_ context.Context, r *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	all := []*pb.RepositoryIndexResponse_ModelIndex{
		{Name: "loading", State: "LOADING"},
		{Name: "simple", Version: "1", State: "READY"},
	}
	if r.GetReady() {
		all = all[1:]
	}
	return &pb.RepositoryIndexResponse{Models: all}, nil
}

// infer runs a ModelInferRequest, reading raw_input_contents as Triton does.
func (s *grpcTestServer) infer(r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if r.GetModelName() == "sink" {
		// Accepts anything and answers with no outputs, for benchmarks.
		return &pb.ModelInferResponse{ModelName: "sink", ModelVersion: "1", Id: r.GetId()}, nil
	}
	if r.GetModelName() == "big" {
		// A response spanning many HTTP/2 frames.
		return &pb.ModelInferResponse{ModelName: "big", Id: r.GetId(),
			Outputs:           []*pb.ModelInferResponse_InferOutputTensor{{Name: "Y", Datatype: "UINT8", Shape: []int64{200000}}},
			RawOutputContents: [][]byte{bytes.Repeat([]byte{7}, 200000)}}, nil
	}
	var inputs []Tensor
	for i, in := range r.GetInputs() {
		t := Tensor{Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape()}
		if i < len(r.GetRawInputContents()) {
			t.Data = r.GetRawInputContents()[i]
		}
		inputs = append(inputs, t)
	}
	outs, code, msg := simpleInfer(r.GetModelName(), inputs)
	if code != codes.OK {
		return nil, status.Error(code, msg)
	}
	resp := &pb.ModelInferResponse{ModelName: r.GetModelName(), ModelVersion: "1", Id: r.GetId()}
	for _, o := range outs {
		resp.Outputs = append(resp.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape})
		resp.RawOutputContents = append(resp.RawOutputContents, o.Data)
	}
	return resp, nil
}

func (s *grpcTestServer) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	s.note(ctx)
	return s.infer(r)
}

func (s *grpcTestServer) lastWire() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.wire) == 0 {
		return nil
	}
	return s.wire[len(s.wire)-1]
}

func (s *grpcTestServer) lastRespSize() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.respSizes) == 0 {
		return -1
	}
	return s.respSizes[len(s.respSizes)-1]
}

// simpleRequest is a valid request for the simple model with INPUT0 =
// base..base+15 and INPUT1 all ones.
func simpleRequest(base int32) *InferRequest {
	a, b := make([]int32, 16), make([]int32, 16)
	for i := range a {
		a[i], b[i] = base+int32(i), 1
	}
	return &InferRequest{
		Model: "simple",
		Inputs: []Tensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Data: PutInt32s(a)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Data: PutInt32s(b)},
		},
	}
}

func dialGRPC(t testing.TB, addr string, o Options) Client {
	t.Helper()
	o.Protocol = "grpc"
	c, err := Dial(context.Background(), addr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGRPCServerAndModelEndpoints(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx := context.Background()

	if live, err := c.ServerLive(ctx); err != nil || !live {
		t.Errorf("ServerLive = %v, %v; want true", live, err)
	}
	if ready, err := c.ServerReady(ctx); err != nil || ready {
		t.Errorf("ServerReady = %v, %v; want false (the test server is not ready)", ready, err)
	}
	md, err := c.ServerMetadata(ctx)
	if err != nil || md.GetName() != "triton" || md.GetVersion() != "2.71.0" {
		t.Errorf("ServerMetadata = %v, %v", md, err)
	}
	for model, want := range map[string]bool{"simple": true, "loading": false} {
		if ready, err := c.ModelReady(ctx, model, ""); err != nil || ready != want {
			t.Errorf("ModelReady(%s) = %v, %v; want %v", model, ready, err, want)
		}
	}
	mmd, err := c.ModelMetadata(ctx, "simple", "")
	if err != nil || len(mmd.GetInputs()) != 2 || mmd.GetInputs()[1].GetName() != "INPUT1" {
		t.Errorf("ModelMetadata = %v, %v", mmd, err)
	}
	cfg, err := c.ModelConfig(ctx, "simple", "1")
	if err != nil || !proto.Equal(cfg, simpleConfig()) {
		t.Errorf("ModelConfig = %v, %v", cfg, err)
	}
	st, err := c.ModelStatistics(ctx, "simple", "")
	if err != nil || !proto.Equal(st, simpleStats()) {
		t.Errorf("ModelStatistics = %v, %v", st, err)
	}
	idx, err := c.RepositoryIndex(ctx, true)
	if err != nil || len(idx) != 1 || idx[0].GetName() != "simple" || idx[0].GetState() != "READY" {
		t.Errorf("RepositoryIndex(ready) = %v, %v", idx, err)
	}
	if idx, err := c.RepositoryIndex(ctx, false); err != nil || len(idx) != 2 {
		t.Errorf("RepositoryIndex(all) = %v, %v; want 2 models", idx, err)
	}
}

func checkSimpleOutputs(t *testing.T, r *InferResponse, base int32) {
	t.Helper()
	sum, ok0 := r.Output("OUTPUT0")
	diff, ok1 := r.Output("OUTPUT1")
	if !ok0 || !ok1 {
		t.Fatalf("outputs = %+v; want OUTPUT0 and OUTPUT1", r.Outputs)
	}
	if sum.Datatype != "INT32" || fmt.Sprint(sum.Shape) != "[1 16]" {
		t.Errorf("OUTPUT0 is %s %v; want INT32 [1 16]", sum.Datatype, sum.Shape)
	}
	s, d := Int32s(sum.Data), Int32s(diff.Data)
	if len(s) != 16 || len(d) != 16 {
		t.Fatalf("got %d and %d elements; want 16", len(s), len(d))
	}
	for i := range s {
		if s[i] != base+int32(i)+1 || d[i] != base+int32(i)-1 {
			t.Fatalf("element %d: sum %d diff %d; want %d and %d", i, s[i], d[i], base+int32(i)+1, base+int32(i)-1)
		}
	}
}

func TestGRPCInfer(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	req := simpleRequest(10)
	req.ID = "req-1"
	r, err := c.Infer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "simple" || r.Version != "1" || r.ID != "req-1" {
		t.Errorf("response model %q version %q id %q", r.Model, r.Version, r.ID)
	}
	checkSimpleOutputs(t, r, 10)
}

func TestGRPCPrepareSendSendsWhatInferSends(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx := context.Background()
	req := simpleRequest(3)
	req.Outputs = []string{"OUTPUT1", "OUTPUT0"}
	// Several parameters: map order must not change the bytes.
	req.Parameters = map[string]any{"priority": int64(2), "timeout": 1000, "sequence_start": true, "tag": "x", "w": 0.5}
	if _, err := c.Infer(ctx, req); err != nil {
		t.Fatal(err)
	}
	inferWire := s.lastWire()

	p, err := c.Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		n, err := c.Send(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.lastRespSize(); n != want || n == 0 {
			t.Errorf("send %d: size %d; server sent %d bytes", i, n, want)
		}
		if got := s.lastWire(); !bytes.Equal(got, inferWire) {
			t.Fatalf("send %d: server received %d bytes that differ from Infer's %d", i, len(got), len(inferWire))
		}
	}
	if p.Size() != len(inferWire) {
		t.Errorf("Prepared.Size = %d; the request is %d bytes", p.Size(), len(inferWire))
	}
	// The bytes must be the request the caller meant, with raw inputs.
	var got pb.ModelInferRequest
	if err := proto.Unmarshal(inferWire, &got); err != nil {
		t.Fatal(err)
	}
	if got.GetModelName() != "simple" || len(got.GetRawInputContents()) != 2 || len(got.GetOutputs()) != 2 ||
		got.GetOutputs()[0].GetName() != "OUTPUT1" || got.GetParameters()["priority"].GetInt64Param() != 2 ||
		got.GetParameters()["timeout"].GetInt64Param() != 1000 || got.GetParameters()["w"].GetDoubleParam() != 0.5 ||
		!got.GetParameters()["sequence_start"].GetBoolParam() || got.GetParameters()["tag"].GetStringParam() != "x" {
		t.Errorf("server decoded %v", &got)
	}
	for _, in := range got.GetInputs() {
		if in.GetContents() != nil {
			t.Errorf("input %s has typed contents; want raw_input_contents only", in.GetName())
		}
	}
}

func TestGRPCErrorsMapToError(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx := context.Background()
	want := &Error{Code: codes.NotFound, Message: unknownModel("nope")}

	bad := simpleRequest(0)
	bad.Model = "nope"
	_, inferErr := c.Infer(ctx, bad)
	p, err := c.Prepare(bad)
	if err != nil {
		t.Fatal(err)
	}
	_, sendErr := c.Send(ctx, p)
	_, mdErr := c.ModelMetadata(ctx, "nope", "")
	_, readyErr := c.ModelReady(ctx, "nope", "")
	for name, err := range map[string]error{"Infer": inferErr, "Send": sendErr, "ModelMetadata": mdErr, "ModelReady": readyErr} {
		var te *Error
		if !errors.As(err, &te) || *te != *want {
			t.Errorf("%s error = %#v; want %#v", name, err, want)
		}
	}
	if got := sendErr.Error(); got != "NOT_FOUND: "+unknownModel("nope") {
		t.Errorf("error text %q", got)
	}

	shape := simpleRequest(0)
	shape.Inputs[0].Shape = []int64{16}
	_, err = c.Infer(ctx, shape)
	if ErrorCode(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "unexpected shape") {
		t.Errorf("bad shape error = %v; want INVALID_ARGUMENT unexpected shape", err)
	}
	if _, err := c.ModelStatistics(ctx, "nope", ""); ErrorCode(err) != codes.InvalidArgument {
		t.Errorf("stats for unknown model = %v; want INVALID_ARGUMENT", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Send(cctx, p); !errors.Is(err, context.Canceled) || ErrorCode(err) != codes.Canceled {
		t.Errorf("Send on a cancelled context = %v; want context.Canceled", err)
	}
}

func TestGRPCHeadersAreSentAsMetadata(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{Headers: map[string]string{"X-Api-Key": "secret", "tenant": "a"}})
	if _, err := c.Send(context.Background(), mustPrepare(t, c, simpleRequest(0))); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	md := s.md
	s.mu.Unlock()
	if got := md.Get("x-api-key"); len(got) != 1 || got[0] != "secret" {
		t.Errorf("x-api-key = %v; want [secret]", got)
	}
	if got := md.Get("tenant"); len(got) != 1 || got[0] != "a" {
		t.Errorf("tenant = %v; want [a]", got)
	}
	// The raw codec must not change the content-type Triton expects.
	if got := md.Get("content-type"); len(got) != 1 || got[0] != "application/grpc+proto" {
		t.Errorf("content-type = %v; want application/grpc+proto", got)
	}
}

func TestGRPCConnectionsSpreadRequests(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{Connections: 3})
	p := mustPrepare(t, c, simpleRequest(0))
	for range 6 {
		if _, err := c.Send(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	n := len(s.peers)
	s.mu.Unlock()
	// Dial's ServerLive check adds no peer beyond the pool's three.
	if n != 3 {
		t.Errorf("server saw %d client connections; want 3", n)
	}
}

func mustPrepare(t testing.TB, c Client, r *InferRequest) Prepared {
	t.Helper()
	p, err := c.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGRPCDecodesTypedContents(t *testing.T) {
	resp := &pb.ModelInferResponse{
		ModelName: "m", ModelVersion: "2",
		Outputs: []*pb.ModelInferResponse_InferOutputTensor{
			{Name: "f", Datatype: "FP32", Shape: []int64{2}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{1.5, -2}}},
			{Name: "s", Datatype: "BYTES", Shape: []int64{2}, Contents: &pb.InferTensorContents{BytesContents: [][]byte{[]byte("ab"), []byte("")}}},
			{Name: "i", Datatype: "INT16", Shape: []int64{2}, Contents: &pb.InferTensorContents{IntContents: []int32{-1, 300}}},
		},
	}
	r, err := decodeModelInferResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	if got := Float32s(r.Outputs[0].Data); fmt.Sprint(got) != "[1.5 -2]" {
		t.Errorf("FP32 contents decoded to %v", got)
	}
	if got, _ := kserve.DecodeBytes(r.Outputs[1].Data, 2); len(got) != 2 || string(got[0]) != "ab" {
		t.Errorf("BYTES contents decoded to %q", got)
	}
	if got := r.Outputs[2].Data; !bytes.Equal(got, []byte{0xff, 0xff, 0x2c, 0x01}) {
		t.Errorf("INT16 contents decoded to % x", got)
	}
	resp.Outputs = append(resp.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: "h", Datatype: "FP16", Contents: &pb.InferTensorContents{}})
	if _, err := decodeModelInferResponse(resp); err == nil {
		t.Error("FP16 typed contents decoded without error")
	}
}
