package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// exampleModels are the eight models of Triton's example repository.
var exampleModels = []string{"densenet_onnx", "inception_graphdef", "simple", "simple_dyna_sequence",
	"simple_identity", "simple_int8", "simple_sequence", "simple_string"}

// httpJSON posts a JSON body and decodes the JSON answer into out (when
// the status is 200) or returns the error text.
func httpJSON(t *testing.T, url string, body any, out any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	code, _, resp := httpDo(t, "POST", url, b, map[string]string{"Content-Type": "application/json"})
	if code != 200 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(resp, &e)
		return code, e.Error
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			t.Fatalf("answer %s: %v", resp, err)
		}
	}
	return code, ""
}

// inferJSON is the part of an HTTP infer answer the tests read.
type inferJSON struct {
	ID      string `json:"id"`
	Outputs []struct {
		Name     string            `json:"name"`
		Datatype string            `json:"datatype"`
		Shape    []int64           `json:"shape"`
		Data     []json.RawMessage `json:"data"`
	} `json:"outputs"`
}

func (r inferJSON) strings(t *testing.T, output string) []string {
	t.Helper()
	for _, o := range r.Outputs {
		if o.Name == output {
			out := make([]string, len(o.Data))
			for i, d := range o.Data {
				if err := json.Unmarshal(d, &out[i]); err != nil {
					t.Fatalf("%s[%d] = %s: %v", output, i, d, err)
				}
			}
			return out
		}
	}
	t.Fatalf("no output %s in %+v", output, r)
	return nil
}

func (r inferJSON) ints(t *testing.T, output string) []int64 {
	t.Helper()
	for _, o := range r.Outputs {
		if o.Name == output {
			out := make([]int64, len(o.Data))
			for i, d := range o.Data {
				if err := json.Unmarshal(d, &out[i]); err != nil {
					t.Fatalf("%s[%d] = %s: %v", output, i, d, err)
				}
			}
			return out
		}
	}
	t.Fatalf("no output %s in %+v", output, r)
	return nil
}

func TestExampleRepositoryIndexHasEightModels(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	c := dial(t, s, "grpc")
	idx, err := c.RepositoryIndex(ctxT(t), false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range idx {
		if m.GetVersion() != "1" || m.GetState() != "READY" {
			t.Errorf("index entry %v, want version 1 READY", m)
		}
		names = append(names, m.GetName())
	}
	if !slices.Equal(names, exampleModels) {
		t.Errorf("gRPC index %v\nwant %v", names, exampleModels)
	}
	var entries []struct {
		Name, Version, State string
	}
	if code, msg := httpJSON(t, "http://"+s.HTTPAddr()+"/v2/repository/index", map[string]any{}, &entries); code != 200 {
		t.Fatalf("HTTP index: %d %s", code, msg)
	}
	if len(entries) != 8 {
		t.Errorf("HTTP index has %d entries, want 8: %v", len(entries), entries)
	}
}

func TestExampleConfigsMatchTriton(t *testing.T) {
	e := engNew(t, ExampleRepository(), EngineOptions{})
	cfg := func(name string) *pb.ModelConfig {
		c, err := e.ModelConfig(name, "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	d := cfg("densenet_onnx")
	if d.Platform != "onnxruntime_onnx" || d.MaxBatchSize != 0 || d.Input[0].Name != "data_0" ||
		d.Input[0].Format != pb.ModelInput_FORMAT_NCHW || !slices.Equal(d.Input[0].Reshape.GetShape(), []int64{1, 3, 224, 224}) ||
		d.Output[0].Name != "fc6_1" || d.Output[0].LabelFilename != "densenet_labels.txt" || !slices.Equal(d.Output[0].Dims, []int64{1000}) {
		t.Errorf("densenet_onnx config %v", d)
	}
	in := cfg("inception_graphdef")
	if in.Platform != "tensorflow_graphdef" || in.MaxBatchSize != 128 || in.Input[0].Format != pb.ModelInput_FORMAT_NHWC ||
		!slices.Equal(in.Input[0].Dims, []int64{299, 299, 3}) || in.Output[0].Name != "InceptionV3/Predictions/Softmax" ||
		!slices.Equal(in.Output[0].Dims, []int64{1001}) {
		t.Errorf("inception_graphdef config %v", in)
	}
	sq := cfg("simple_sequence").GetSequenceBatching()
	if sq == nil || sq.MaxSequenceIdleMicroseconds != 1_000_000 || len(sq.ControlInput) != 2 ||
		sq.ControlInput[0].Name != "START" || sq.ControlInput[1].Name != "READY" || sq.GetOldest() != nil {
		t.Errorf("simple_sequence sequence_batching %v", sq)
	}
	dy := cfg("simple_dyna_sequence")
	sb := dy.GetSequenceBatching()
	if sb == nil || sb.MaxSequenceIdleMicroseconds != 10_000_000 || sb.GetOldest().GetMaxCandidateSequences() != 1024 ||
		sb.GetOldest().GetMaxQueueDelayMicroseconds() != 10000 || !slices.Equal(sb.GetOldest().GetPreferredBatchSize(), []int32{8}) ||
		len(sb.ControlInput) != 4 || sb.ControlInput[3].Control[0].DataType != pb.DataType_TYPE_UINT64 ||
		dy.Parameters["execute_delay_ms"].GetStringValue() != "3" || dy.InstanceGroup[0].Count != 2 || dy.InstanceGroup[0].Kind != pb.ModelInstanceGroup_KIND_CPU {
		t.Errorf("simple_dyna_sequence config %v", dy)
	}
	for _, name := range []string{"simple", "simple_int8", "simple_string"} {
		c := cfg(name)
		if c.MaxBatchSize != 8 || len(c.Input) != 2 || !slices.Equal(c.Input[1].Dims, []int64{16}) || c.GetDynamicBatching() != nil {
			t.Errorf("%s config %v", name, c)
		}
	}
	md, err := e.ModelMetadata("simple_identity", "")
	if err != nil || md.Inputs[0].Datatype != "BYTES" || !slices.Equal(md.Inputs[0].Shape, []int64{-1, -1}) {
		t.Errorf("simple_identity metadata %v, %v", md, err)
	}
}

// stringTensor frames strs as BYTES.
func stringTensor(strs []string) []byte {
	b := make([][]byte, len(strs))
	for i, s := range strs {
		b[i] = []byte(s)
	}
	return kserve.EncodeBytes(b)
}

// TestExampleStringAddSub does what Triton's simple_grpc_string_infer_client
// and simple_http_string_infer_client do: INPUT0 = str(i), INPUT1 = "1";
// OUTPUT0 must be i+1 and OUTPUT1 i-1, as strings.
func TestExampleStringAddSub(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	in0, in1 := make([]string, 16), make([]string, 16)
	for i := range in0 {
		in0[i], in1[i] = strconv.Itoa(i), "1"
	}
	check := func(t *testing.T, sum, diff []string) {
		t.Helper()
		if len(sum) != 16 || len(diff) != 16 {
			t.Fatalf("got %d and %d strings, want 16", len(sum), len(diff))
		}
		for i := range 16 {
			if sum[i] != strconv.Itoa(i+1) || diff[i] != strconv.Itoa(i-1) {
				t.Fatalf("element %d: %q %q, want %d %d", i, sum[i], diff[i], i+1, i-1)
			}
		}
	}
	t.Run("gRPC", func(t *testing.T) {
		raw, _ := rawGRPC(t, s)
		resp, err := raw.ModelInfer(ctxT(t), &pb.ModelInferRequest{
			ModelName: "simple_string",
			Inputs: []*pb.ModelInferRequest_InferInputTensor{
				{Name: "INPUT0", Datatype: "BYTES", Shape: []int64{1, 16}},
				{Name: "INPUT1", Datatype: "BYTES", Shape: []int64{1, 16}},
			},
			RawInputContents: [][]byte{stringTensor(in0), stringTensor(in1)},
		})
		if err != nil {
			t.Fatal(err)
		}
		dec := func(i int) []string {
			if resp.Outputs[i].Datatype != "BYTES" || !slices.Equal(resp.Outputs[i].Shape, []int64{1, 16}) {
				t.Fatalf("output %v", resp.Outputs[i])
			}
			elems, err := kserve.DecodeBytes(resp.RawOutputContents[i], 16)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]string, len(elems))
			for j, e := range elems {
				out[j] = string(e)
			}
			return out
		}
		check(t, dec(0), dec(1))
	})
	t.Run("HTTP", func(t *testing.T) {
		var resp inferJSON
		body := map[string]any{"inputs": []map[string]any{
			{"name": "INPUT0", "shape": []int{1, 16}, "datatype": "BYTES", "data": in0},
			{"name": "INPUT1", "shape": []int{1, 16}, "datatype": "BYTES", "data": in1},
		}}
		if code, msg := httpJSON(t, "http://"+s.HTTPAddr()+"/v2/models/simple_string/infer", body, &resp); code != 200 {
			t.Fatalf("%d %s", code, msg)
		}
		check(t, resp.strings(t, "OUTPUT0"), resp.strings(t, "OUTPUT1"))
	})
	t.Run("not a number", func(t *testing.T) {
		raw, _ := rawGRPC(t, s)
		bad := slices.Clone(in0)
		bad[3] = "three"
		_, err := raw.ModelInfer(ctxT(t), &pb.ModelInferRequest{
			ModelName: "simple_string",
			Inputs: []*pb.ModelInferRequest_InferInputTensor{
				{Name: "INPUT0", Datatype: "BYTES", Shape: []int64{1, 16}},
				{Name: "INPUT1", Datatype: "BYTES", Shape: []int64{1, 16}},
			},
			RawInputContents: [][]byte{stringTensor(bad), stringTensor(in1)},
		})
		if st, _ := status.FromError(err); st.Code() != codes.Internal || !strings.Contains(st.Message(), `"three"`) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestExampleAddSubIdentityInt8(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	c := dial(t, s, "http")
	ctx := ctxT(t)
	a, b := make([]byte, 16), make([]byte, 16)
	minus3 := int8(-3)
	for i := range a {
		a[i], b[i] = byte(int8(i*10)), byte(minus3)
	}
	resp, err := c.Infer(ctx, &triton.InferRequest{Model: "simple_int8", Inputs: []triton.Tensor{
		{Name: "INPUT0", Datatype: "INT8", Shape: []int64{1, 16}, Data: a},
		{Name: "INPUT1", Datatype: "INT8", Shape: []int64{1, 16}, Data: b},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := resp.Output("OUTPUT0")
	diff, _ := resp.Output("OUTPUT1")
	for i := range 16 {
		if int8(sum.Data[i]) != int8(i*10)-3 || int8(diff.Data[i]) != int8(i*10)+3 {
			t.Fatalf("element %d: %d %d", i, int8(sum.Data[i]), int8(diff.Data[i]))
		}
	}
	words := stringTensor([]string{"hello", "", "triton"})
	resp, err = dial(t, s, "grpc").Infer(ctx, &triton.InferRequest{Model: "simple_identity", Inputs: []triton.Tensor{
		{Name: "INPUT0", Datatype: "BYTES", Shape: []int64{1, 3}, Data: words}}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := resp.Output("OUTPUT0"); string(out.Data) != string(words) || !slices.Equal(out.Shape, []int64{1, 3}) {
		t.Errorf("identity answered %v %q", out.Shape, out.Data)
	}
}

// TestExampleClassification asks the image classifiers for top-k classes
// as Triton's image_client does, and checks the answer against the raw
// scores of the same input.
func TestExampleClassification(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	image := make([]float32, 3*224*224)
	for i := range image {
		image[i] = float32(i%251) / 251
	}
	req := func(classes int64) *pb.ModelInferRequest {
		r := &pb.ModelInferRequest{
			ModelName:        "densenet_onnx",
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "data_0", Datatype: "FP32", Shape: []int64{3, 224, 224}}},
			RawInputContents: [][]byte{triton.PutFloat32s(image)},
		}
		if classes > 0 {
			r.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "fc6_1",
				Parameters: map[string]*pb.InferParameter{"classification": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: classes}}}}}
		}
		return r
	}
	plain, err := raw.ModelInfer(ctx, req(0))
	if err != nil {
		t.Fatal(err)
	}
	scores := triton.Float32s(plain.RawOutputContents[0])
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	labels := labelLines(densenetLabels)
	want := make([]string, 3)
	for k := range want {
		i := order[k]
		want[k] = fmt.Sprintf("%f:%d:%s", scores[i], i, labels[i])
	}

	resp, err := raw.ModelInfer(ctx, req(3))
	if err != nil {
		t.Fatal(err)
	}
	o := resp.Outputs[0]
	if o.Datatype != "BYTES" || !slices.Equal(o.Shape, []int64{3}) {
		t.Fatalf("classification output %v, want BYTES [3]", o)
	}
	got, err := kserve.DecodeBytes(resp.RawOutputContents[0], 3)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if string(got[k]) != want[k] {
			t.Errorf("class %d = %q, want %q", k, got[k], want[k])
		}
	}

	// Over HTTP, a batching model: shape [batch, k].
	img := make([]float32, 299*299*3)
	var answer inferJSON
	body := map[string]any{
		"inputs": []map[string]any{{"name": "input", "shape": []int{2, 299, 299, 3}, "datatype": "FP32",
			"data": append(slices.Clone(img), img...)}},
		"outputs": []map[string]any{{"name": "InceptionV3/Predictions/Softmax", "parameters": map[string]any{"classification": 2}}},
	}
	if code, msg := httpJSON(t, "http://"+s.HTTPAddr()+"/v2/models/inception_graphdef/infer", body, &answer); code != 200 {
		t.Fatalf("%d %s", code, msg)
	}
	o2 := answer.Outputs[0]
	if o2.Datatype != "BYTES" || !slices.Equal(o2.Shape, []int64{2, 2}) {
		t.Fatalf("HTTP classification output %s %v, want BYTES [2 2]", o2.Datatype, o2.Shape)
	}
	inception := labelLines(inceptionLabels)
	classes := answer.strings(t, "InceptionV3/Predictions/Softmax")
	for _, c := range classes {
		parts := strings.SplitN(c, ":", 3)
		i, err := strconv.Atoi(parts[1])
		if len(parts) != 3 || err != nil || i < 0 || i > 1000 || parts[2] != inception[i] || !strings.Contains(parts[0], ".") {
			t.Errorf("class %q is not value:index:label", c)
		}
	}
	if classes[0] != classes[2] || classes[1] != classes[3] {
		t.Errorf("equal images classified differently: %v", classes)
	}

	bad := req(0)
	bad.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "fc6_1",
		Parameters: map[string]*pb.InferParameter{"classification": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}}
	if _, err := raw.ModelInfer(ctx, bad); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "invalid value type for 'classification' parameter, expected int64_param") {
		t.Errorf("bool classification: %v", err)
	}
}
