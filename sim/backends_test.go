package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// The expected answers in these tests are the real server's (Triton
// 2.73.0dev, CPU build, serving ../shared/triton/models), written down.

// TestIdentityBackendAsTriton: the identity backend's answer over HTTP and
// gRPC (its response parameters, FP32 written as the double it widens
// to), its error for a string correlation ID, and the statistics it
// reports for them.
func TestIdentityBackendAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{})
	base := "http://" + s.HTTPAddr() + "/v2/models/identity/infer"
	code, _, body := httpDo(t, "POST", base, []byte(`{"id":"q","parameters":{"sequence_id":12},"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","data":[0.1,2]}]}`), nil)
	want := `{"id":"q","model_name":"identity","model_version":"1","parameters":{"param0":"an example string parameter","param1":42,"param2":false,"param3":123.123},"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,2],"data":[0.10000000149011612,2.0]}]}`
	if code != 200 || string(body) != want {
		t.Errorf("HTTP: %d %s\nwant 200 %s", code, body, want)
	}
	code, _, body = httpDo(t, "POST", base, []byte(`{"parameters":{"sequence_id":"abc"},"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","data":[1,2]}]}`), nil)
	if want := `{"error":"[request id: <id_unknown>] correlation ID in request is not an unsigned int"}`; code != 400 || string(body) != want {
		t.Errorf("string correlation ID: %d %s\nwant 400 %s", code, body, want)
	}
	c, _ := rawGRPC(t, s)
	resp, err := c.ModelInfer(ctxT(t), &pb.ModelInferRequest{ModelName: "identity", Id: "r1",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 3},
			Contents: &pb.InferTensorContents{Fp32Contents: []float32{1, 2, 3}}}}})
	if err != nil {
		t.Fatal(err)
	}
	wantResp := &pb.ModelInferResponse{}
	if err := prototext.Unmarshal([]byte(`model_name: "identity" model_version: "1" id: "r1"
		parameters { key: "param0" value { string_param: "an example string parameter" } }
		parameters { key: "param1" value { int64_param: 42 } }
		parameters { key: "param2" value { bool_param: false } }
		parameters { key: "param3" value { double_param: 123.123 } }
		outputs { name: "OUTPUT0" datatype: "FP32" shape: [1, 3] }
		raw_output_contents: "\x00\x00\x80?\x00\x00\x00@\x00\x00@@"`), wantResp); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(resp, wantResp) {
		t.Errorf("gRPC: %v\nwant %v", resp, wantResp)
	}
	// The backend's own counter: the 8 and 12 bytes it copied.
	_, _, metrics := httpDo(t, "GET", "http://"+s.MetricsAddr()+"/metrics", nil, nil)
	for _, want := range []string{
		"# HELP input_byte_size_counter Cumulative input byte size of all requests received by the model\n# TYPE input_byte_size_counter counter\n",
		`input_byte_size_counter{model="identity",version="1"} 20`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(string(metrics), `input_byte_size_counter{model="simple_sequence"`) {
		t.Error("a sequence model has the identity backend's counter")
	}
	// Two successes, the failed request a BACKEND failure, and its
	// execution a batch of 0, as the real server counts them.
	st := engStats(t, s.Engine(), "identity")
	var sizes []uint64
	for _, b := range st.BatchStats {
		sizes = append(sizes, b.BatchSize)
	}
	if st.InferenceCount != 2 || st.ExecutionCount != 3 || st.InferenceStats.Success.Count != 2 ||
		st.InferenceStats.Fail.Count != 1 || fmt.Sprint(sizes) != "[0 1]" {
		t.Errorf("statistics: inference %d execution %d success %d fail %d batches %v; want 2 3 2 1 [0 1]",
			st.InferenceCount, st.ExecutionCount, st.InferenceStats.Success.Count, st.InferenceStats.Fail.Count, sizes)
	}
}

// sequenceStep is one request of a sequence over HTTP and the real
// server's answer.
type sequenceStep struct {
	model, params string
	input         int32
	want          string
}

// TestSequenceBackendsAsTriton: the sequence backend accumulates from
// START, the dyna_sequence backend adds the correlation ID (cast to int32)
// at END, and a string ID is refused by the backend (sequence) or by the
// CORRID control's type (dyna_sequence), in the real server's words; a
// request the sequence backend refuses counts neither as success nor as
// failure.
func TestSequenceBackendsAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{})
	out := func(model string, v int64) string {
		return fmt.Sprintf(`{"model_name":"%s","model_version":"1","outputs":[{"name":"OUTPUT","datatype":"INT32","shape":[1,1],"data":[%d]}]}`, model, v)
	}
	for _, st := range []sequenceStep{
		{"simple_sequence", `"sequence_id":7,"sequence_start":true`, 5, out("simple_sequence", 5)},
		{"simple_sequence", `"sequence_id":7`, 3, out("simple_sequence", 8)},
		{"simple_sequence", `"sequence_id":7,"sequence_end":true`, 2, out("simple_sequence", 10)},
		{"simple_dyna_sequence", `"sequence_id":1000,"sequence_start":true`, 5, out("simple_dyna_sequence", 5)},
		{"simple_dyna_sequence", `"sequence_id":1000,"sequence_end":true`, 3, out("simple_dyna_sequence", 1008)},
		{"simple_dyna_sequence", `"sequence_id":5000000000,"sequence_start":true,"sequence_end":true`, 4, out("simple_dyna_sequence", 705032708)},
		{"simple_dyna_sequence", `"sequence_id":"1000","sequence_start":true`, 3,
			`{"error":"[request id: <id_unknown>] sequence batching control 'CORRID' data-type is 'BYTES', but model 'simple_dyna_sequence' expects 'UINT64'"}`},
		{"simple_sequence", `"sequence_id":"abc","sequence_start":true,"sequence_end":true`, 4,
			`{"error":"[request id: <id_unknown>] correlation ID in request is not an unsigned int"}`},
	} {
		body := fmt.Sprintf(`{"parameters":{%s},"inputs":[{"name":"INPUT","shape":[1,1],"datatype":"INT32","data":[%d]}]}`, st.params, st.input)
		_, _, got := httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/models/"+st.model+"/infer", []byte(body), nil)
		if string(got) != st.want {
			t.Errorf("%s %s: %s\nwant %s", st.model, st.params, got, st.want)
		}
	}
	seq := engStats(t, s.Engine(), "simple_sequence")
	if seq.InferenceStats.Success.Count != 3 || seq.InferenceStats.Fail.Count != 0 || seq.ExecutionCount != 4 {
		t.Errorf("simple_sequence statistics: success %d fail %d executions %d; want 3 0 4",
			seq.InferenceStats.Success.Count, seq.InferenceStats.Fail.Count, seq.ExecutionCount)
	}
}

// TestBackendDelays: the backends' execute_delay_ms counts as the real
// server counts it: within the identity backend's compute (times its
// instance_wise_delay_multiplier), and as queue time before the sequence
// backends' compute.
func TestBackendDelays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeModel(t, dir, "slow", `name: "slow" backend: "identity" max_batch_size: 4 `+identityIO+`
		instance_group [ { kind: KIND_CPU count: 1 } ]
		parameters [ { key: "execute_delay_ms" value: { string_value: "30" } } ]`, "1")
	writeModel(t, dir, "seq", `name: "seq" backend: "sequence" max_batch_size: 1
		sequence_batching { control_input [
		  { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
		  { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] } ] }
		input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
		output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
		parameters [ { key: "execute_delay_ms" value: { string_value: "30" } } ]`, "1")
	repo, err := LoadRepositoryDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := engNew(t, repo, EngineOptions{})
	if _, err := engInfer(t, e, engFP32Request("slow", 1, 4)); err != nil {
		t.Fatal(err)
	}
	seqReq := &pb.ModelInferRequest{ModelName: "seq",
		Parameters: map[string]*pb.InferParameter{"sequence_id": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1}},
			"sequence_start": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}},
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}}},
		RawInputContents: [][]byte{triton.PutInt32s([]int32{1})}}
	if _, err := engInfer(t, e, seqReq); err != nil {
		t.Fatal(err)
	}
	const delay = uint64(30 * time.Millisecond)
	if st := engStats(t, e, "slow").InferenceStats; st.ComputeInfer.Ns < delay {
		t.Errorf("identity: compute_infer %d ns; want at least the 30 ms delay", st.ComputeInfer.Ns)
	}
	// Without the delay the direct sequence batcher queues nothing.
	if st := engStats(t, e, "seq").InferenceStats; st.Queue.Ns < delay {
		t.Errorf("sequence: queue %d ns, compute_infer %d ns; want the 30 ms delay in the queue time", st.Queue.Ns, st.ComputeInfer.Ns)
	}
}
