package triton

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

func boolParam(v bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}
}

func TestStreamReplyFinalFlag(t *testing.T) {
	out := []*pb.ModelInferResponse_InferOutputTensor{{Name: "text_output", Datatype: "BYTES", Shape: []int64{1}}}
	for _, tc := range []struct {
		name         string
		params       map[string]*pb.InferParameter
		outputs      bool
		final, empty bool
	}{
		{"token", map[string]*pb.InferParameter{"triton_final_response": boolParam(false)}, true, false, false},
		{"last token", map[string]*pb.InferParameter{"triton_final_response": boolParam(true)}, true, true, false},
		{"empty final", map[string]*pb.InferParameter{"triton_final_response": boolParam(true)}, false, true, true},
		// Without the parameter (an older server) a response is final, as
		// Triton's own clients take it.
		{"no parameter", nil, true, true, false},
		{"other parameters", map[string]*pb.InferParameter{
			"a_triton_final_response": boolParam(false), "sequence_end": boolParam(false),
			"triton_final_response": boolParam(false), "zz": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "x"}},
		}, true, false, false},
		{"not a bool", map[string]*pb.InferParameter{"triton_final_response": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1}}}, true, false, false},
	} {
		resp := &pb.ModelInferResponse{Id: "7-3", ModelName: "llm", Parameters: tc.params}
		if tc.outputs {
			resp.Outputs = out
			resp.RawOutputContents = [][]byte{kserve.EncodeBytes([][]byte{[]byte("the")})}
		}
		var r streamReply
		if err := r.parse(mustMarshal(t, &pb.ModelStreamInferResponse{InferResponse: resp})); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.id != "7-3" || r.final != tc.final || r.outputs == tc.empty {
			t.Errorf("%s: id %q final %t outputs %t; want final %t empty %t", tc.name, r.id, r.final, r.outputs, tc.final, tc.empty)
		}
	}
	// A truncated parameter entry is an error, not a guess.
	msg := protowire.AppendTag(nil, 4, protowire.BytesType)
	msg = protowire.AppendBytes(msg, []byte{0x0a, 0x10, 't'})
	outer := protowire.AppendTag(nil, 2, protowire.BytesType)
	outer = protowire.AppendBytes(outer, msg)
	var r streamReply
	if err := r.parse(outer); err == nil {
		t.Error("truncated parameter parsed without error")
	}
}

func TestParseRequestParameter(t *testing.T) {
	for _, tc := range []struct {
		in    string
		name  string
		value any
		err   string
	}{
		{"max_tokens:256:int", "max_tokens", int64(256), ""},
		{"max_tokens:256:INT", "max_tokens", int64(256), ""},
		{"ignore_eos:true:bool", "ignore_eos", true, ""},
		{"ignore_eos:false:Bool", "ignore_eos", false, ""},
		{"lora:my-adapter:string", "lora", "my-adapter", ""},
		{"max_tokens:256", "", nil, "use NAME:VALUE:TYPE"},
		{"a:b:c:string", "", nil, "use NAME:VALUE:TYPE"},
		{"max_tokens:many:int", "", nil, `"many" is not an integer`},
		{"x:yes:bool", "", nil, "a bool is true or false"},
		{"x:1.5:float", "", nil, `type "float" is not string, int or bool`},
		{":1:int", "", nil, "the name is empty"},
		{"triton_enable_empty_final_response:true:bool", "", nil, "reserved for Triton"},
	} {
		name, value, err := ParseRequestParameter(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--request-parameter") {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || name != tc.name || value != tc.value {
			t.Errorf("%q = %q %#v %v", tc.in, name, value, err)
		}
	}
}

// llmModel is metadata and config shaped like TensorRT-LLM's ensemble:
// text_input, max_tokens, stream, and an optional input tritontop leaves
// out.
func llmModel(decoupled bool) (*pb.ModelMetadataResponse, *pb.ModelConfig) {
	md := &pb.ModelMetadataResponse{Name: "llm", Inputs: []*pb.ModelMetadataResponse_TensorMetadata{
		{Name: "text_input", Datatype: "BYTES", Shape: []int64{1}},
		{Name: "max_tokens", Datatype: "INT32", Shape: []int64{1}},
		{Name: "stream", Datatype: "BOOL", Shape: []int64{1}},
		{Name: "stop_words", Datatype: "BYTES", Shape: []int64{-1}},
	}}
	cfg := &pb.ModelConfig{Name: "llm", Input: []*pb.ModelInput{
		{Name: "text_input", DataType: pb.DataType_TYPE_STRING, Dims: []int64{1}},
		{Name: "max_tokens", DataType: pb.DataType_TYPE_INT32, Dims: []int64{1}},
		{Name: "stream", DataType: pb.DataType_TYPE_BOOL, Dims: []int64{1}, Optional: true},
		{Name: "stop_words", DataType: pb.DataType_TYPE_STRING, Dims: []int64{-1}, Optional: true},
	}, ModelTransactionPolicy: &pb.ModelTransactionPolicy{Decoupled: decoupled}}
	return md, cfg
}

func inputOf(t *testing.T, r *InferRequest, name string) Tensor {
	t.Helper()
	for _, in := range r.Inputs {
		if in.Name == name {
			return in
		}
	}
	t.Fatalf("request has no input %q: %+v", name, r.Inputs)
	return Tensor{}
}

func TestBuildRequestsLLM(t *testing.T) {
	md, cfg := llmModel(true)
	reqs, err := BuildRequests(md, cfg, InputOptions{PromptTokens: 40, Streaming: true,
		Parameters: map[string]any{"max_tokens": int64(64), "temperature": "0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	r := reqs[0]
	if len(r.Inputs) != 3 {
		t.Fatalf("inputs = %+v; want text_input, max_tokens and stream, not the optional stop_words", r.Inputs)
	}
	text, err := kserve.DecodeBytes(inputOf(t, r, "text_input").Data, 1)
	if err != nil || len(strings.Fields(string(text[0]))) != 40 {
		t.Errorf("prompt = %q, %v; want 40 words", text, err)
	}
	if mt := inputOf(t, r, "max_tokens"); binary.LittleEndian.Uint32(mt.Data) != 64 || len(mt.Shape) != 1 || mt.Shape[0] != 1 {
		t.Errorf("max_tokens = %+v, want 64 from the request parameter", mt)
	}
	if st := inputOf(t, r, "stream"); !bytes.Equal(st.Data, []byte{1}) {
		t.Errorf("stream = %v, want true when streaming", st.Data)
	}
	if r.Parameters[EnableEmptyFinalResponseParameter] != true || r.Parameters["max_tokens"] != int64(64) || r.Parameters["temperature"] != "0.5" {
		t.Errorf("parameters = %v", r.Parameters)
	}

	// Defaults: genai-perf's prompt length and max_tokens; stream false
	// without streaming.
	reqs, err = BuildRequests(md, cfg, InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text, _ = kserve.DecodeBytes(inputOf(t, reqs[0], "text_input").Data, 1)
	if n := len(strings.Fields(string(text[0]))); n != DefaultPromptTokens {
		t.Errorf("default prompt has %d words, want %d", n, DefaultPromptTokens)
	}
	if mt := inputOf(t, reqs[0], "max_tokens"); binary.LittleEndian.Uint32(mt.Data) != DefaultMaxTokens {
		t.Errorf("default max_tokens = %d", binary.LittleEndian.Uint32(mt.Data))
	}
	if st := inputOf(t, reqs[0], "stream"); !bytes.Equal(st.Data, []byte{0}) {
		t.Errorf("stream = %v, want false without streaming", st.Data)
	}

	if _, err := BuildRequests(md, cfg, InputOptions{Parameters: map[string]any{"max_tokens": "lots"}}); err == nil ||
		!strings.Contains(err.Error(), "max_tokens:N:int") {
		t.Errorf("a string max_tokens: %v", err)
	}
}

func TestBuildRequestsLLMFromInputData(t *testing.T) {
	md, cfg := llmModel(true)
	path := filepath.Join(t.TempDir(), "prompts.json")
	data := `{"data": [{"text_input": ["What is Triton?"], "stop_words": {"content": ["stop"], "shape": [1]}}, {"text_input": ["Say hi"], "max_tokens": [8], "stream": [false]}]}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, err := BuildRequests(md, cfg, InputOptions{Data: path, Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	text, _ := kserve.DecodeBytes(inputOf(t, reqs[0], "text_input").Data, 1)
	if string(text[0]) != "What is Triton?" || len(reqs[0].Inputs) != 4 {
		t.Errorf("first data set: %q with %d inputs", text, len(reqs[0].Inputs))
	}
	// The second set leaves out the optional stop_words and gives
	// max_tokens and stream itself.
	if len(reqs[1].Inputs) != 3 || binary.LittleEndian.Uint32(inputOf(t, reqs[1], "max_tokens").Data) != 8 ||
		!bytes.Equal(inputOf(t, reqs[1], "stream").Data, []byte{0}) {
		t.Errorf("second data set: %+v", reqs[1].Inputs)
	}
	// The first set's missing max_tokens and stream are filled.
	if binary.LittleEndian.Uint32(inputOf(t, reqs[0], "max_tokens").Data) != DefaultMaxTokens ||
		!bytes.Equal(inputOf(t, reqs[0], "stream").Data, []byte{1}) {
		t.Errorf("filled inputs: %+v", reqs[0].Inputs)
	}
}

func TestBuildRequestsOtherModelsUnchanged(t *testing.T) {
	// A model that is not decoupled and no --request-parameter: no
	// parameters at all, so its requests encode exactly as before.
	md := &pb.ModelMetadataResponse{Name: "m", Inputs: []*pb.ModelMetadataResponse_TensorMetadata{{Name: "IN", Datatype: "FP32", Shape: []int64{4}}}}
	cfg := &pb.ModelConfig{Name: "m", Input: []*pb.ModelInput{{Name: "IN", DataType: pb.DataType_TYPE_FP32, Dims: []int64{4}}}}
	reqs, err := BuildRequests(md, cfg, InputOptions{})
	if err != nil || reqs[0].Parameters != nil {
		t.Fatalf("parameters = %v, %v", reqs[0].Parameters, err)
	}
	// A decoupled model that is not an LLM asks for the empty final
	// response and fills its inputs as usual.
	cfg.ModelTransactionPolicy = &pb.ModelTransactionPolicy{Decoupled: true}
	reqs, err = BuildRequests(md, cfg, InputOptions{Parameters: map[string]any{"p": true}})
	if err != nil || reqs[0].Parameters[EnableEmptyFinalResponseParameter] != true || reqs[0].Parameters["p"] != true || len(reqs[0].Inputs[0].Data) != 16 {
		t.Fatalf("decoupled model: %+v, %v", reqs[0], err)
	}
}

func TestPrompt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := Prompt(100, rng)
	if n := len(strings.Fields(p)); n != 100 || strings.Contains(p, "  ") {
		t.Errorf("Prompt(100) has %d words: %q", n, p)
	}
	if Prompt(0, rng) != "" {
		t.Error("Prompt(0) is not empty")
	}
}
