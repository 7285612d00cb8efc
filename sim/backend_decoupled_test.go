package sim

import (
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// streamAll sends requests on one stream, closes its side and returns
// every response with when it came (since the first send), until the
// server ends the stream.
func streamAll(t *testing.T, s *Server, reqs ...*pb.ModelInferRequest) ([]*pb.ModelStreamInferResponse, []time.Duration) {
	t.Helper()
	c, _ := rawGRPC(t, s)
	st, err := c.ModelStreamInfer(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, r := range reqs {
		if err := st.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var out []*pb.ModelStreamInferResponse
	var at []time.Duration
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, at
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp)
		at = append(at, time.Since(start))
	}
}

// byID groups stream responses by request id, in order.
func byID(resps []*pb.ModelStreamInferResponse) map[string][]*pb.ModelStreamInferResponse {
	out := map[string][]*pb.ModelStreamInferResponse{}
	for _, r := range resps {
		id := r.GetInferResponse().GetId()
		out[id] = append(out[id], r)
	}
	return out
}

// streamResponses parses the real server's answers, written down in
// protobuf text, one response each.
func streamResponses(t *testing.T, texts ...string) []*pb.ModelStreamInferResponse {
	t.Helper()
	var out []*pb.ModelStreamInferResponse
	for _, s := range texts {
		r := &pb.ModelStreamInferResponse{}
		if err := prototext.Unmarshal([]byte(s), r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func sameResponses(t *testing.T, what string, got, want []*pb.ModelStreamInferResponse) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d responses %v; want %d", what, len(got), got, len(want))
		return
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("%s: response %d\n%v\nwant (Triton 2.73)\n%v", what, i, got[i], want[i])
		}
	}
}

func repeatRequest(id string, in []int32, delay []uint32, wait uint32, emptyFinal bool) *pb.ModelInferRequest {
	r := &pb.ModelInferRequest{ModelName: "repeat_int32", Id: id, Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: "IN", Datatype: "INT32", Shape: []int64{int64(len(in))}, Contents: &pb.InferTensorContents{IntContents: in}},
		{Name: "DELAY", Datatype: "UINT32", Shape: []int64{int64(len(delay))}, Contents: &pb.InferTensorContents{UintContents: delay}},
		{Name: "WAIT", Datatype: "UINT32", Shape: []int64{1}, Contents: &pb.InferTensorContents{UintContents: []uint32{wait}}},
	}}
	if len(in) == 0 {
		r.Inputs[0].Contents, r.Inputs[1].Contents = nil, nil
		r.RawInputContents = [][]byte{{}, {}, triton.PutInt32s([]int32{int32(wait)})}
		r.Inputs[2].Contents = nil
	}
	if emptyFinal {
		r.Parameters = map[string]*pb.InferParameter{emptyFinalResponse: {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
	}
	return r
}

// repeatResponse is the real server's response e of a repeat request.
func repeatResponse(id, out, idx string) string {
	return `infer_response { model_name: "repeat_int32" model_version: "1" id: "` + id + `"
		parameters { key: "triton_final_response" value { bool_param: false } }
		outputs { name: "OUT" datatype: "INT32" shape: 1 } outputs { name: "IDX" datatype: "UINT32" shape: 1 }
		raw_output_contents: "` + out + `" raw_output_contents: "` + idx + `" }`
}

// finalOnly is the real server's empty final response (or error) of a
// request: it names the model and the request, not the version.
func finalOnly(model, id string) string {
	return `infer_response { model_name: "` + model + `" id: "` + id + `"
		parameters { key: "triton_final_response" value { bool_param: true } } }`
}

// TestRepeatBackendAsTriton: one response per element of IN, each DELAY
// ms after the one before, no final response unless asked for, an error
// for IN and DELAY of other shapes, and the statistics the backend reports
// (each request a success of WAIT ms, whatever its responses).
func TestRepeatBackendAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{})
	resps, at := streamAll(t, s, repeatRequest("a", []int32{7, 8, 9}, []uint32{10, 20, 30}, 5, false))
	sameResponses(t, "repeat a", resps, streamResponses(t,
		repeatResponse("a", `\x07\x00\x00\x00`, `\x00\x00\x00\x00`),
		repeatResponse("a", `\x08\x00\x00\x00`, `\x01\x00\x00\x00`),
		repeatResponse("a", `\t\x00\x00\x00`, `\x02\x00\x00\x00`)))
	if len(at) == 3 && at[2] < 60*time.Millisecond {
		t.Errorf("the last response came %v after the send; DELAY asked 10+20+30 ms", at[2])
	}
	resps, _ = streamAll(t, s,
		repeatRequest("b", []int32{7, 8}, []uint32{10}, 0, false),
		repeatRequest("c", []int32{5}, []uint32{1}, 0, true),
		repeatRequest("d", nil, nil, 0, true))
	got := byID(resps)
	sameResponses(t, "repeat b", got["b"], streamResponses(t,
		`error_message: "expected IN and DELAY shape to match, got [2] and [1]" `+finalOnly("repeat_int32", "b")))
	sameResponses(t, "repeat c", got["c"], streamResponses(t,
		repeatResponse("c", `\x05\x00\x00\x00`, `\x00\x00\x00\x00`), finalOnly("repeat_int32", "c")))
	sameResponses(t, "repeat d", got["d"], streamResponses(t, finalOnly("repeat_int32", "d")))
	var st *pb.ModelStatistics
	waitFor(t, "the repeat requests' statistics", func() bool {
		st = engStats(t, s.Engine(), "repeat_int32")
		return st.InferenceCount == 4
	})
	in := st.InferenceStats
	if st.ExecutionCount != 4 || in.Success.Count != 4 || in.Fail.Count != 0 || in.ComputeInfer.Ns < uint64(5*time.Millisecond) ||
		in.ComputeInput.Ns != 0 || in.ComputeOutput.Ns != 0 || len(st.ResponseStats) != 0 {
		t.Errorf("statistics: %v", st)
	}
}

func squareRequest(id string, n int32, emptyFinal bool) *pb.ModelInferRequest {
	r := &pb.ModelInferRequest{ModelName: "square_int32", Id: id, Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: "IN", Datatype: "INT32", Shape: []int64{1}, Contents: &pb.InferTensorContents{IntContents: []int32{n}}}}}
	if emptyFinal {
		r.Parameters = map[string]*pb.InferParameter{emptyFinalResponse: {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
	}
	return r
}

const squareTwo = `infer_response { model_name: "square_int32" model_version: "1" id: "s"
	parameters { key: "triton_final_response" value { bool_param: false } }
	outputs { name: "OUT" datatype: "INT32" shape: 1 } raw_output_contents: "\x02\x00\x00\x00" }`

// TestSquareBackendAsTriton: IN = n gives n responses of OUT = n, and the
// backend reports only its responses' statistics; with CUSTOM_FAIL_COUNT
// and CUSTOM_EMPTY_COUNT (a configuration override, explicit mode) its
// last responses fail (an error that does not end the stream) or are not
// sent.
func TestSquareBackendAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	resps, _ := streamAll(t, s, squareRequest("s", 2, false), squareRequest("z", 0, true))
	got := byID(resps)
	sameResponses(t, "square s", got["s"], streamResponses(t, squareTwo, squareTwo))
	sameResponses(t, "square z", got["z"], streamResponses(t, finalOnly("square_int32", "z")))
	st := engStats(t, s.Engine(), "square_int32")
	if st.InferenceCount != 0 || st.ExecutionCount != 0 || st.InferenceStats.Success.Count != 0 || len(st.ResponseStats) != 2 ||
		st.ResponseStats["0"].Success.Count != 1 || st.ResponseStats["1"].ComputeOutput.Count != 1 {
		t.Errorf("statistics: %v", st)
	}

	err := s.Engine().LoadModelConfig("square_int32", `{"backend":"square","model_transaction_policy":{"decoupled":true},
		"input":[{"name":"IN","data_type":"TYPE_INT32","dims":[1]}],"output":[{"name":"OUT","data_type":"TYPE_INT32","dims":[1]}],
		"parameters":{"CUSTOM_FAIL_COUNT":{"string_value":"1"},"CUSTOM_EMPTY_COUNT":{"string_value":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	resps, _ = streamAll(t, s, squareRequest("s", 3, true))
	sameResponses(t, "square with failures", resps, streamResponses(t,
		`infer_response { model_name: "square_int32" model_version: "1" id: "s"
			parameters { key: "triton_final_response" value { bool_param: false } }
			outputs { name: "OUT" datatype: "INT32" shape: 1 } raw_output_contents: "\x03\x00\x00\x00" }`,
		`error_message: "simulated failure" infer_response { model_name: "square_int32" id: "s"
			parameters { key: "triton_final_response" value { bool_param: false } } }`,
		finalOnly("square_int32", "s")))
	st = engStats(t, s.Engine(), "square_int32")
	r0, r1, r2 := st.ResponseStats["0"], st.ResponseStats["1"], st.ResponseStats["2"]
	if r0.GetSuccess().GetCount() != 1 || r1.GetFail().GetCount() != 1 || r1.GetComputeOutput().GetCount() != 1 ||
		r2.GetEmptyResponse().GetCount() != 1 || r2.GetComputeOutput().GetCount() != 0 {
		t.Errorf("response statistics: %v", st.ResponseStats)
	}
}
