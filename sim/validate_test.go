package sim

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// engBytesModel has a BYTES input of dims [2], no batching.
func engBytesModel() ModelSpec {
	return ModelSpec{
		Name:           "strings",
		Backend:        "python",
		Inputs:         []TensorSpec{{Name: "TEXT", DataType: "BYTES", Dims: []int64{2}}},
		Outputs:        []TensorSpec{{Name: "TEXT_OUT", DataType: "TYPE_STRING", Dims: []int64{2}}},
		InstanceGroups: []InstanceGroupSpec{{Kind: "KIND_CPU"}},
		Behaviour:      BehaviourIdentity,
	}
}

func engDecoupledModel() ModelSpec {
	m := engBytesModel()
	m.Name = "stream_only"
	m.Decoupled = true
	return m
}

func TestValidationErrors(t *testing.T) {
	repo := DemoRepository()
	repo.Models = append(repo.Models, engBytesModel(), engDecoupledModel())
	e := engNew(t, repo, EngineOptions{})
	zeros := make([]int32, 16)
	base := func() *pb.ModelInferRequest { return engAddSubRequest(zeros, zeros) }
	bytesReq := func(raw []byte) *pb.ModelInferRequest {
		return &pb.ModelInferRequest{
			ModelName:        "strings",
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{2}}},
			RawInputContents: [][]byte{raw},
		}
	}
	const note = "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."
	tests := []struct {
		name   string
		edit   func(r *pb.ModelInferRequest) *pb.ModelInferRequest
		code   codes.Code
		msg    string
		stream bool
	}{
		{"unknown model", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.ModelName = "foo"; return r },
			codes.NotFound, "Request for unknown model: 'foo' is not found", false},
		{"bad version string", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.ModelVersion = "v1"; return r },
			codes.InvalidArgument, "failed to get model version from specified version string 'v1' (details: stol), version should be an integral value > 0", false},
		{"negative version", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.ModelVersion = "-1"; return r },
			codes.InvalidArgument, "invalid model version specified '-1' , version should be an integral value > 0", false},
		{"version out of range", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.ModelVersion = "99999999999999999999"; return r },
			codes.InvalidArgument, "failed to get model version from specified version string '99999999999999999999' (details: stol), version should be an integral value > 0", false},
		{"version parsed as std::stol does", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.ModelVersion = " 7x"; return r },
			codes.NotFound, "Request for unknown model: 'simple' version 7 is not found", false},
		{"unknown version", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.ModelVersion = "7"; return r },
			codes.NotFound, "Request for unknown model: 'simple' version 7 is not found", false},
		{"batch too large", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs[0].Shape = []int64{9, 16}
			r.Inputs[1].Shape = []int64{9, 16}
			return r
		}, codes.InvalidArgument, "[request id: req-1] inference request batch-size must be <= 8 for 'simple'", false},
		{"missing batch dimension", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs[0].Shape = []int64{16}
			r.Inputs[1].Shape = []int64{16}
			return r
		}, codes.InvalidArgument, "[request id: req-1] inference request batch-size must be <= 8 for 'simple'", false},
		{"wrong inner shape", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs[0].Shape = []int64{1, 8}
			r.Inputs[1].Shape = []int64{1, 8}
			return r
		}, codes.InvalidArgument, "[request id: req-1] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,8]. " + note, false},
		{"wildcard in request shape", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs[0].Shape = []int64{1, -1}
			r.Inputs[1].Shape = []int64{1, -1}
			return r
		}, codes.InvalidArgument, "[request id: req-1] All input dimensions should be specified for input 'INPUT0' for model 'simple', got [1,-1]", false},
		{"batch sizes differ", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.Inputs[1].Shape = []int64{2, 16}; return r },
			codes.InvalidArgument, "[request id: req-1] input 'INPUT1' batch size does not match other inputs for 'simple'", false},
		{"no shape", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.Inputs[0].Shape = nil; return r },
			codes.InvalidArgument, "[request id: req-1] input 'INPUT0' has no shape but model requires batch dimension for 'simple'", false},
		{"wrong datatype", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.Inputs[1].Datatype = "FP32"; return r },
			codes.InvalidArgument, "[request id: req-1] inference input 'INPUT1' data-type is 'FP32', but model 'simple' expects 'INT32'", false},
		{"config datatype name", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.Inputs[0].Datatype = "TYPE_INT32"; return r },
			codes.InvalidArgument, "[request id: req-1] inference input 'INPUT0' data-type is '<invalid>', but model 'simple' expects 'INT32'", false},
		{"unknown input", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.Inputs[1].Name = "INPUT9"; return r },
			codes.InvalidArgument, "unexpected inference input 'INPUT9' for model 'simple'", false},
		{"missing input", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs = r.Inputs[:1]
			r.RawInputContents = r.RawInputContents[:1]
			return r
		}, codes.InvalidArgument, "[request id: req-1] expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).", false},
		{"no inputs", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs, r.RawInputContents = nil, nil
			return r
		}, codes.InvalidArgument, "[request id: req-1] expected 2 inputs but got 0 inputs for model 'simple'. Got input(s) [], but missing required input(s) ['INPUT0','INPUT1']. Please provide all required input(s).", false},
		{"byte size", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.RawInputContents[1] = make([]byte, 60)
			return r
		},
			codes.InvalidArgument, "[request id: req-1] input byte size mismatch for input 'INPUT1' for model 'simple'. Expected 64, got 60", false},
		{"raw and contents", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Inputs[1].Contents = &pb.InferTensorContents{IntContents: zeros}
			return r
		}, codes.InvalidArgument, "contents field must not be specified when using raw_input_contents for 'INPUT1' for model 'simple'", false},
		{"no data", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.RawInputContents = r.RawInputContents[:1]
			return r
		},
			codes.InvalidArgument, "unable to find data for input tensor 'INPUT1' for model 'simple' in request.", false},
		{"no data at all", func(r *pb.ModelInferRequest) *pb.ModelInferRequest { r.RawInputContents = nil; return r },
			codes.InvalidArgument, "unable to find data for input tensor 'INPUT0' for model 'simple' in request.", false},
		{"typed contents too short", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.RawInputContents = nil
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: zeros}
			r.Inputs[1].Contents = &pb.InferTensorContents{IntContents: zeros[:15]}
			return r
		}, codes.InvalidArgument, "[request id: req-1] input byte size mismatch for input 'INPUT1' for model 'simple'. Expected 64, got 60", false},
		{"unknown output", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT7"}}
			return r
		}, codes.InvalidArgument, "unexpected inference output 'OUTPUT7' for model 'simple'", false},
		{"unknown triton parameter", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Parameters = map[string]*pb.InferParameter{"triton_magic": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
			return r
		}, codes.InvalidArgument, "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: triton_enable_empty_final_response", false},
		{"non-bool empty final response", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Parameters = map[string]*pb.InferParameter{"triton_enable_empty_final_response": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1}}}
			return r
		}, codes.InvalidArgument, "invalid value type for 'triton_enable_empty_final_response' parameter, expected bool_param.", false},
		{"negative priority", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Parameters = map[string]*pb.InferParameter{"priority": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -1}}}
			return r
		}, codes.InvalidArgument, "invalid value for 'priority', expected value >= 0.", false},
		{"string timeout", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.Parameters = map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "1s"}}}
			return r
		}, codes.InvalidArgument, "invalid value type for 'timeout' parameter, expected int64_param.", false},
		{"typed contents of another type", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.RawInputContents = nil
			r.Inputs[0].Contents = &pb.InferTensorContents{Fp32Contents: make([]float32, 16)}
			return r
		}, codes.InvalidArgument, "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple' of type 'FP32', expected datatype 'INT32'", false},
		{"two typed contents fields", func(r *pb.ModelInferRequest) *pb.ModelInferRequest {
			r.RawInputContents = nil
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: zeros, Int64Contents: []int64{1}}
			return r
		}, codes.InvalidArgument, "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple', binary data was already supplied.", false},
		{"BYTES truncated length", func(*pb.ModelInferRequest) *pb.ModelInferRequest {
			return bytesReq([]byte{1, 0, 0, 0, 'a', 2, 0})
		}, codes.InvalidArgument, "[request id: <id_unknown>] incomplete string length indicator for inference input 'TEXT' for model 'strings', expecting 4 bytes but only 2 bytes available. Please make sure the string length indicator is in one buffer.", false},
		{"BYTES element count", func(*pb.ModelInferRequest) *pb.ModelInferRequest {
			return bytesReq(kserve.EncodeBytes([][]byte{[]byte("a"), []byte("b"), []byte("c")}))
		}, codes.InvalidArgument, "[request id: <id_unknown>] unexpected number of string elements 3 for inference input 'TEXT' for model 'strings', expecting 2", false},
		{"BYTES too few elements", func(*pb.ModelInferRequest) *pb.ModelInferRequest {
			return bytesReq(kserve.EncodeBytes([][]byte{[]byte("a")}))
		}, codes.InvalidArgument, "[request id: <id_unknown>] expected 2 string elements for inference input 'TEXT' for model 'strings', got 1", false},
		// A string cut short is not refused (Triton 2.73 checks only the
		// element count): this one is one element short.
		{"BYTES string past the end", func(*pb.ModelInferRequest) *pb.ModelInferRequest {
			return bytesReq([]byte{9, 0, 0, 0, 'a'})
		}, codes.InvalidArgument, "[request id: <id_unknown>] expected 2 string elements for inference input 'TEXT' for model 'strings', got 1", false},
		{"decoupled on ModelInfer", func(*pb.ModelInferRequest) *pb.ModelInferRequest {
			r := bytesReq(kserve.EncodeBytes([][]byte{[]byte("a"), []byte("b")}))
			r.ModelName = "stream_only"
			return r
		}, codes.Unimplemented, "ModelInfer RPC doesn't support models with decoupled transaction policy", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.edit(base())
			_, err := e.Infer(t.Context(), req, tt.stream)
			te, ok := err.(*triton.Error)
			if !ok {
				t.Fatalf("err = %v (%T), want *triton.Error", err, err)
			}
			if te.Code != tt.code || te.Message != tt.msg {
				t.Errorf("got %s %q\nwant %s %q", kserve.CodeName(te.Code), te.Message, kserve.CodeName(tt.code), tt.msg)
			}
		})
	}
	// Validation errors happen before queueing: nothing is counted.
	for _, name := range []string{"simple", "strings"} {
		s := engStats(t, e, name).InferenceStats
		if s.Fail.Count != 0 || s.Success.Count != 0 {
			t.Errorf("%s: fail %d success %d after validation errors, want 0 and 0", name, s.Fail.Count, s.Success.Count)
		}
	}
}

func TestValidBytesAndStreamingDecoupled(t *testing.T) {
	repo := Repository{Models: []ModelSpec{engBytesModel(), engDecoupledModel()}}
	e := engNew(t, repo, EngineOptions{})
	raw := kserve.EncodeBytes([][]byte{[]byte("hello"), {}})
	req := &pb.ModelInferRequest{
		ModelName:        "strings",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{2}}},
		RawInputContents: [][]byte{raw},
	}
	resp, err := engInfer(t, e, req)
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	if string(resp.RawOutputContents[0]) != string(raw) || resp.Outputs[0].Datatype != "BYTES" {
		t.Errorf("BYTES identity returned %q as %s", resp.RawOutputContents[0], resp.Outputs[0].Datatype)
	}
	// bytes_contents are framed like raw BYTES.
	typed := proto.Clone(req).(*pb.ModelInferRequest)
	typed.RawInputContents = nil
	typed.Inputs[0].Contents = &pb.InferTensorContents{BytesContents: [][]byte{[]byte("hello"), {}}}
	resp, err = engInfer(t, e, typed)
	if err != nil {
		t.Fatalf("Infer typed: %v", err)
	}
	if string(resp.RawOutputContents[0]) != string(raw) {
		t.Errorf("typed BYTES came back as %q", resp.RawOutputContents[0])
	}
	req.ModelName = "stream_only"
	if _, err := e.Infer(t.Context(), req, true); err != nil {
		t.Errorf("streaming Infer on decoupled model: %v", err)
	}
}

func TestModelQueriesErrors(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	if _, err := e.ModelMetadata("foo", ""); triton.ErrorCode(err) != codes.NotFound {
		t.Errorf("ModelMetadata(foo) = %v", err)
	}
	if _, err := e.ModelConfig("foo", ""); triton.ErrorCode(err) != codes.NotFound {
		t.Errorf("ModelConfig(foo) = %v", err)
	}
	if ok, err := e.ModelReady("foo", ""); ok || triton.ErrorCode(err) != codes.NotFound {
		t.Errorf("ModelReady(foo) = %t, %v", ok, err)
	}
	_, err := e.ModelStatistics("foo", "")
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.InvalidArgument || te.Message != "requested model 'foo' is not available" {
		t.Errorf("ModelStatistics(foo) = %v", err)
	}
	_, err = e.ModelStatistics("simple", "3")
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.InvalidArgument || te.Message != "requested model version is not available for model 'simple'" {
		t.Errorf("ModelStatistics(simple, 3) = %v", err)
	}
	all, err := e.ModelStatistics("", "")
	if err != nil || len(all.ModelStats) != len(DemoRepository().Models) {
		t.Fatalf("ModelStatistics(all) = %d entries, %v", len(all.ModelStats), err)
	}
	if ok, err := e.ModelReady("simple", "1"); !ok || err != nil {
		t.Errorf("ModelReady(simple, 1) = %t, %v", ok, err)
	}
	if ok, err := e.ModelReady("simple", "2"); ok || triton.ErrorCode(err) != codes.NotFound {
		t.Errorf("ModelReady(simple, 2) = %t, %v, want NOT_FOUND", ok, err)
	}
}

func TestMetadataAndConfig(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	md, err := e.ModelMetadata("resnet50", "")
	if err != nil {
		t.Fatal(err)
	}
	if md.Platform != "onnxruntime_onnx" || len(md.Versions) != 1 || md.Versions[0] != "1" {
		t.Errorf("metadata platform %q versions %v", md.Platform, md.Versions)
	}
	in := md.Inputs[0]
	if in.Name != "input" || in.Datatype != "FP32" || len(in.Shape) != 4 || in.Shape[0] != -1 || in.Shape[1] != 3 {
		t.Errorf("input metadata %v", in)
	}
	id, err := e.ModelMetadata("identity", "1")
	if err != nil {
		t.Fatal(err)
	}
	if id.Platform != "identity" || id.Outputs[0].Shape[0] != -1 || id.Outputs[0].Shape[1] != -1 {
		t.Errorf("identity metadata %v", id)
	}
	cfg, err := e.ModelConfig("resnet50", "")
	if err != nil {
		t.Fatal(err)
	}
	db := cfg.GetDynamicBatching()
	if cfg.MaxBatchSize != 32 || db == nil || len(db.PreferredBatchSize) != 3 || db.MaxQueueDelayMicroseconds != 100 {
		t.Errorf("resnet50 config batching: max %d %v", cfg.MaxBatchSize, db)
	}
	if len(cfg.InstanceGroup) != 1 || cfg.InstanceGroup[0].Kind != pb.ModelInstanceGroup_KIND_GPU || len(cfg.InstanceGroup[0].Gpus) != 2 {
		t.Errorf("resnet50 instance groups %v", cfg.InstanceGroup)
	}
	if cfg.Input[0].DataType != pb.DataType_TYPE_FP32 {
		t.Errorf("input data_type %v", cfg.Input[0].DataType)
	}
	// The returned config is a copy.
	cfg.MaxBatchSize = 1
	if again, _ := e.ModelConfig("resnet50", ""); again.MaxBatchSize != 32 {
		t.Errorf("ModelConfig returned shared state")
	}
	if c, _ := e.ModelConfig("identity", ""); c.GetDynamicBatching() != nil {
		t.Errorf("identity has dynamic batching")
	}
}

// TestPreferredBatchSizeFilledIn: a config with dynamic batching and no
// preferred batch sizes is answered with the max batch size as its one
// preferred size, as Triton answers it (core's NormalizeModelConfig; a real
// Triton 2.73 answers identity_int32's dynamic_batching { max_queue_delay_microseconds: 100 }
// with preferred_batch_size [64]); one with sizes keeps them.
func TestPreferredBatchSizeFilledIn(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	for model, want := range map[string][]int32{"simple": {8}, "resnet50": {8, 16, 32}} {
		cfg, err := e.ModelConfig(model, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.GetDynamicBatching().GetPreferredBatchSize(); !slices.Equal(got, want) {
			t.Errorf("%s: preferred_batch_size %v, want %v", model, got, want)
		}
	}
}

// TestShapeWhoseByteSizeOverflowsIsRejected sends shapes whose byte size
// does not fit in 64 bits, with no data: the size check must not wrap
// around to the (empty) data's size and let the model allocate the shape.
func TestShapeWhoseByteSizeOverflowsIsRejected(t *testing.T) {
	e := engNew(t, Repository{Models: []ModelSpec{{
		Name: "var", Backend: "python", MaxBatchSize: 4,
		Inputs:         []TensorSpec{{Name: "IN", DataType: "FP32", Dims: []int64{-1}}},
		Outputs:        []TensorSpec{{Name: "OUT", DataType: "FP32", Dims: []int64{-1}}},
		InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
		Behaviour:      BehaviourZeros,
	}}}, EngineOptions{})
	for _, shape := range [][]int64{{1, 1 << 62}, {2, 1 << 62}, {1, 1<<62 + 1}} {
		_, err := engInfer(t, e, &pb.ModelInferRequest{
			ModelName:        "var",
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "FP32", Shape: shape}},
			RawInputContents: [][]byte{{}},
		})
		if triton.ErrorCode(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "input byte size mismatch for input 'IN' for model 'var'") {
			t.Errorf("shape %v: %v, want INVALID_ARGUMENT input byte size mismatch", shape, err)
		}
	}
}
