package sim

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// rawGRPC is a plain generated client, for requests the project's client
// would never build (bad ones) and for RPCs it does not wrap.
func rawGRPC(t testing.TB, s *Server) (pb.GRPCInferenceServiceClient, *grpc.ClientConn) {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewGRPCInferenceServiceClient(conn), conn
}

func seq(n int, from int32) []int32 {
	v := make([]int32, n)
	for i := range v {
		v[i] = from + int32(i)
	}
	return v
}

// simpleRequest is a valid request for the add/sub model with batch b.
func simpleRequest(b int) *pb.ModelInferRequest {
	shape := []int64{int64(b), 16}
	return &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: shape},
			{Name: "INPUT1", Datatype: "INT32", Shape: shape},
		},
		RawInputContents: [][]byte{triton.PutInt32s(seq(16*b, 0)), triton.PutInt32s(seq(16*b, 100))},
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGRPCServerEndpoints(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c := dial(t, s, "grpc")
	ctx := ctxT(t)
	if ready, err := c.ServerReady(ctx); err != nil || !ready {
		t.Fatalf("ServerReady = %v, %v", ready, err)
	}
	md, err := c.ServerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if md.GetName() != "triton" || md.GetVersion() == "" || !slices.Contains(md.GetExtensions(), "binary_tensor_data") {
		t.Fatalf("ServerMetadata = %v", md)
	}
	_, conn := rawGRPC(t, s)
	h, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil || h.GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("health Check = %v, %v; want SERVING", h, err)
	}
}

func TestGRPCHealthNotServingWhileStarting(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{Faults: Faults{SlowStart: time.Hour}})
	_, conn := rawGRPC(t, s)
	ctx := ctxT(t)
	h, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: "anything"})
	if err != nil || h.GetStatus() != grpc_health_v1.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health Check = %v, %v; want NOT_SERVING", h, err)
	}
	c := dial(t, s, "grpc")
	if live, err := c.ServerLive(ctx); err != nil || !live {
		t.Fatalf("ServerLive = %v, %v; want true while starting", live, err)
	}
	if ready, err := c.ServerReady(ctx); err != nil || ready {
		t.Fatalf("ServerReady = %v, %v; want false while starting", ready, err)
	}
}

func TestGRPCModelMetadataAndConfig(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c := dial(t, s, "grpc")
	ctx := ctxT(t)
	md, err := c.ModelMetadata(ctx, "simple", "")
	if err != nil {
		t.Fatal(err)
	}
	if md.GetName() != "simple" || len(md.GetInputs()) != 2 || len(md.GetOutputs()) != 2 {
		t.Fatalf("metadata = %v", md)
	}
	if in := md.GetInputs()[0]; in.GetName() != "INPUT0" || in.GetDatatype() != "INT32" || !slices.Equal(in.GetShape(), []int64{-1, 16}) {
		t.Fatalf("INPUT0 metadata = %v; want INT32 [-1,16]", in)
	}
	cfg, err := c.ModelConfig(ctx, "simple", "1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GetName() != "simple" || cfg.GetMaxBatchSize() != 8 || cfg.GetInput()[1].GetDataType() != pb.DataType_TYPE_INT32 {
		t.Fatalf("config = %v", cfg)
	}
	bcfg, err := c.ModelConfig(ctx, "batched", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bcfg.GetDynamicBatching().GetPreferredBatchSize(), []int32{8}) {
		t.Fatalf("batched dynamic_batching = %v", bcfg.GetDynamicBatching())
	}
	if ready, err := c.ModelReady(ctx, "simple", "1"); err != nil || !ready {
		t.Fatalf("ModelReady = %v, %v", ready, err)
	}
}

func TestGRPCInferAddSub(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c := dial(t, s, "grpc")
	a, b := seq(32, 5), seq(32, -7)
	resp, err := c.Infer(ctxT(t), &triton.InferRequest{
		Model: "simple", ID: "req-1",
		Inputs: []triton.Tensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2, 16}, Data: triton.PutInt32s(a)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{2, 16}, Data: triton.PutInt32s(b)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ID != "req-1" || resp.Model != "simple" || resp.Version != "1" {
		t.Fatalf("response names %q %q %q", resp.ID, resp.Model, resp.Version)
	}
	checkAddSub(t, resp, a, b)
}

func checkAddSub(t *testing.T, resp *triton.InferResponse, a, b []int32) {
	t.Helper()
	sum, ok0 := resp.Output("OUTPUT0")
	diff, ok1 := resp.Output("OUTPUT1")
	if !ok0 || !ok1 {
		t.Fatalf("outputs = %+v", resp.Outputs)
	}
	gotSum, gotDiff := triton.Int32s(sum.Data), triton.Int32s(diff.Data)
	if len(gotSum) != len(a) || len(gotDiff) != len(a) {
		t.Fatalf("output sizes %d, %d; want %d", len(gotSum), len(gotDiff), len(a))
	}
	for i := range a {
		if gotSum[i] != a[i]+b[i] || gotDiff[i] != a[i]-b[i] {
			t.Fatalf("element %d: sum %d diff %d; want %d %d", i, gotSum[i], gotDiff[i], a[i]+b[i], a[i]-b[i])
		}
	}
	if !slices.Equal(sum.Shape, []int64{int64(len(a) / 16), 16}) || sum.Datatype != "INT32" {
		t.Fatalf("OUTPUT0 %s %v", sum.Datatype, sum.Shape)
	}
}

// badRequests are the request mistakes Triton rejects before scheduling,
// with its code and message.
func badRequests() []struct {
	name string
	req  func() *pb.ModelInferRequest
	code codes.Code
	msg  string
} {
	return []struct {
		name string
		req  func() *pb.ModelInferRequest
		code codes.Code
		msg  string
	}{
		{"unknown model", func() *pb.ModelInferRequest {
			r := simpleRequest(1)
			r.ModelName = "nope"
			return r
		}, codes.NotFound, "Request for unknown model: 'nope' is not found"},
		{"bad shape", func() *pb.ModelInferRequest {
			r := simpleRequest(1)
			r.Inputs[0].Shape = []int64{1, 15}
			r.Inputs[1].Shape = []int64{1, 15}
			return r
		}, codes.InvalidArgument, "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15]"},
		{"datatype", func() *pb.ModelInferRequest {
			r := simpleRequest(1)
			r.Inputs[0].Datatype = "FP32"
			return r
		}, codes.InvalidArgument, "[request id: <id_unknown>] inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'"},
		{"byte size", func() *pb.ModelInferRequest {
			r := simpleRequest(1)
			r.RawInputContents[0] = r.RawInputContents[0][:60]
			return r
		}, codes.InvalidArgument, "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60"},
		{"raw and contents", func() *pb.ModelInferRequest {
			r := simpleRequest(1)
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: seq(16, 0)}
			return r
		}, codes.InvalidArgument, "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'"},
		{"missing input", func() *pb.ModelInferRequest {
			r := simpleRequest(1)
			r.Inputs, r.RawInputContents = r.Inputs[:1], r.RawInputContents[:1]
			return r
		}, codes.InvalidArgument, "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'"},
		{"batch too large", func() *pb.ModelInferRequest { return simpleRequest(9) },
			codes.InvalidArgument, "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'"},
		{"decoupled", func() *pb.ModelInferRequest {
			return &pb.ModelInferRequest{
				ModelName:        "decoupled",
				Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "FP32", Shape: []int64{2}}},
				RawInputContents: [][]byte{triton.PutFloat32s([]float32{1, 2})},
			}
		}, codes.Unimplemented, "ModelInfer RPC doesn't support models with decoupled transaction policy"},
	}
}

// hasMessage reports whether got is want, or want followed by Triton's
// explanatory tail (". NOTE: ...", " Got ...").
func hasMessage(got, want string) bool {
	return got == want || len(got) > len(want) && got[:len(want)] == want && (got[len(want)] == '.' || got[len(want)] == ',' || got[len(want)] == ' ')
}

func TestGRPCInferErrors(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	for _, tc := range badRequests() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := raw.ModelInfer(ctx, tc.req())
			st, _ := status.FromError(err)
			if st.Code() != tc.code || !hasMessage(st.Message(), tc.msg) {
				t.Fatalf("got %v %q\nwant %v %q", st.Code(), st.Message(), tc.code, tc.msg)
			}
		})
	}
	// Validation errors happen before statistics: no failure counted.
	st, err := raw.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	if f := st.GetModelStats()[0].GetInferenceStats().GetFail().GetCount(); f != 0 {
		t.Fatalf("fail count = %d after validation errors; want 0", f)
	}
}

func TestGRPCStatisticsAndRepository(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	raw, _ := rawGRPC(t, s)
	c := dial(t, s, "grpc")
	ctx := ctxT(t)
	_, err := raw.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "nope"})
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != "requested model 'nope' is not available" {
		t.Fatalf("stats for unknown model: %v %q", st.Code(), st.Message())
	}
	for range 3 {
		if _, err := raw.ModelInfer(ctx, simpleRequest(2)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.ModelStatistics(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.GetModelStats()) != len(testRepository().Models) {
		t.Fatalf("all-model stats has %d entries", len(all.GetModelStats()))
	}
	one, err := c.ModelStatistics(ctx, "simple", "1")
	if err != nil {
		t.Fatal(err)
	}
	ms := one.GetModelStats()[0]
	if ms.GetInferenceStats().GetSuccess().GetCount() != 3 || ms.GetInferenceCount() != 6 {
		t.Fatalf("simple stats: success %d inference_count %d; want 3, 6",
			ms.GetInferenceStats().GetSuccess().GetCount(), ms.GetInferenceCount())
	}

	idx, err := c.RepositoryIndex(ctx, false)
	if err != nil || len(idx) != len(testRepository().Models) {
		t.Fatalf("RepositoryIndex = %v, %v", idx, err)
	}
	if _, err := raw.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "nobatch"}); err != nil {
		t.Fatal(err)
	}
	ready, err := c.RepositoryIndex(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ready {
		if m.GetName() == "nobatch" {
			t.Fatalf("unloaded model listed as ready: %v", m)
		}
	}
	if _, err := raw.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "nobatch"}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.ModelReady(ctx, "nobatch", ""); err != nil || !r {
		t.Fatalf("ModelReady after load = %v, %v", r, err)
	}
}

func TestGRPCStreamAnswersEveryRequest(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	stream, err := raw.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Eight requests that only batch together if the server runs them
	// concurrently: the batcher waits up to 200 ms for eight.
	const n = 8
	for i := range n {
		req := &pb.ModelInferRequest{
			ModelName: "batched", Id: fmt.Sprint("ok-", i),
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 4}}},
			RawInputContents: [][]byte{triton.PutFloat32s([]float32{float32(i), 1, 2, 3})},
		}
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	bad := simpleRequest(1)
	bad.Id, bad.ModelVersion = "bad", "1"
	bad.Inputs[0].Datatype = "FP32"
	if err := stream.Send(bad); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		ir := r.GetInferResponse()
		if r.GetErrorMessage() != "" {
			// Refused before it was queued: Triton clears the response.
			if r.GetErrorMessage() != "[request id: bad] inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'" ||
				ir == nil || proto.Size(ir) != 0 {
				t.Fatalf("error response = %v", r)
			}
			seen["bad"] = true
			continue
		}
		if final := ir.GetParameters()["triton_final_response"]; !final.GetBoolParam() {
			t.Fatalf("response %q lacks triton_final_response=true", ir.GetId())
		}
		seen[ir.GetId()] = true
		if r.GetErrorMessage() != "" || len(ir.GetRawOutputContents()) != 1 {
			t.Fatalf("response %q = %v", ir.GetId(), r)
		}
		var i int
		fmt.Sscanf(ir.GetId(), "ok-%d", &i)
		if got := triton.Float32s(ir.GetRawOutputContents()[0]); got[0] != float32(i) {
			t.Fatalf("response %q carries another request's data: %v", ir.GetId(), got)
		}
	}
	if len(seen) != n+1 {
		t.Fatalf("got %d distinct responses, want %d: %v", len(seen), n+1, seen)
	}
	st, err := raw.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "batched"})
	if err != nil {
		t.Fatal(err)
	}
	if ex := st.GetModelStats()[0].GetExecutionCount(); ex >= n {
		t.Fatalf("execution_count = %d for %d streamed requests: the stream ran them one at a time", ex, n)
	}
}

func TestGRPCStreamErrorClosesWithStatusWhenAsked(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := metadata.AppendToOutgoingContext(ctxT(t), "triton_grpc_error", "true")
	stream, err := raw.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := simpleRequest(1)
	bad.ModelName = "nope"
	if err := stream.Send(bad); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	if st, _ := status.FromError(err); st.Code() != codes.NotFound || st.Message() != "Request for unknown model: 'nope' is not found" {
		t.Fatalf("Recv error = %v; want NOT_FOUND status closing the stream", err)
	}
}

func TestGRPCStreamDecoupledModel(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c := dial(t, s, "grpc")
	p, err := c.Prepare(&triton.InferRequest{
		Model:  "decoupled",
		Inputs: []triton.Tensor{{Name: "IN", Datatype: "FP32", Shape: []int64{2}, Data: triton.PutFloat32s([]float32{3, 4})}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(p, "d1"); err != nil {
		t.Fatal(err)
	}
	r, err := st.Recv()
	if err != nil || r.Err != nil || r.ID != "d1" || r.Size == 0 {
		t.Fatalf("Recv = %+v, %v", r, err)
	}
	_ = st.CloseSend()
}

func TestGRPCSettingsAndSharedMemory(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{AllowClientShm: true})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	shm, err := raw.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
	if err != nil || len(shm.GetRegions()) != 0 {
		t.Fatalf("SystemSharedMemoryStatus = %v, %v", shm, err)
	}
	_, err = raw.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: "/k", ByteSize: 64})
	if st, _ := status.FromError(err); st.Code() != codes.Internal || st.Message() != "Unable to open shared memory region: '/k'" {
		t.Fatalf("register: %v", err)
	}
	_, err = raw.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{Name: "r"})
	if st, _ := status.FromError(err); st.Code() != codes.NotFound {
		t.Fatalf("cuda status of unknown region: %v", err)
	}
	if _, err := raw.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	tr, err := raw.TraceSetting(ctx, &pb.TraceSettingRequest{Settings: map[string]*pb.TraceSettingRequest_SettingValue{
		"trace_rate": {Value: []string{"50"}},
	}})
	if err != nil || !slices.Equal(tr.GetSettings()["trace_rate"].GetValue(), []string{"50"}) ||
		!slices.Equal(tr.GetSettings()["trace_level"].GetValue(), []string{"OFF"}) {
		t.Fatalf("TraceSetting = %v, %v", tr, err)
	}
	lg, err := raw.LogSettings(ctx, &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
		"log_verbose_level": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_Uint32Param{Uint32Param: 2}},
	}})
	if err != nil || lg.GetSettings()["log_verbose_level"].GetUint32Param() != 2 || !lg.GetSettings()["log_info"].GetBoolParam() {
		t.Fatalf("LogSettings = %v, %v", lg, err)
	}
	_, err = raw.LogSettings(ctx, &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
		"log_info": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: "yes"}},
	}})
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument {
		t.Fatalf("LogSettings with a wrong type: %v", err)
	}
}
