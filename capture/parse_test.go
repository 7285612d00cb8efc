package capture

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

func inferRequest(elems int) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{
		ModelName: "resnet50", ModelVersion: "2", Id: "r1",
		Parameters: map[string]*pb.InferParameter{
			"sequence_id":    {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 42}},
			"sequence_start": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}},
			"priority":       {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 2}},
			"tag":            {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "x"}},
			"temperature":    {ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: 0.5}},
		},
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "input", Datatype: "FP32", Shape: []int64{1, int64(elems)}},
			{Name: "mask", Datatype: "INT64", Shape: []int64{1, 2}},
		},
		Outputs:          []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "output"}},
		RawInputContents: [][]byte{make([]byte, 4*elems), {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}},
	}
}

// TestParseRequestMatchesDecoding: reading the wire form, skipping the
// raw contents, gives what decoding the whole message gives.
func TestParseRequestMatchesDecoding(t *testing.T) {
	m := inferRequest(8)
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tensors := range []bool{false, true} {
		got, err := ParseRequest(b, tensors)
		if err != nil {
			t.Fatal(err)
		}
		if want := RequestOf(m, tensors); !reflect.DeepEqual(got, want) {
			t.Errorf("tensors %v: parsed %+v, decoded %+v", tensors, got, want)
		}
	}
	if _, err := ParseRequest([]byte{0xff}, false); err == nil {
		t.Error("a broken request parsed")
	}
	// Each kind of parameter is kept with its value.
	got, _ := ParseRequest(b, false)
	for k, want := range map[string]any{"sequence_id": int64(42), "sequence_start": true, "priority": int64(2), "tag": "x", "temperature": 0.5} {
		if got.Parameters[k] != want {
			t.Errorf("parameter %s = %#v, want %#v", k, got.Parameters[k], want)
		}
	}
}

// TestNewGRPCProxyNeedsUpstream: a proxy without an upstream is refused.
func TestNewGRPCProxyNeedsUpstream(t *testing.T) {
	if _, err := NewGRPCProxy(Options{}); err == nil || err.Error() != "capture: no upstream address" {
		t.Errorf("NewGRPCProxy without an upstream: %v", err)
	}
}

// BenchmarkParseRequest records a small request (16 values) and an image
// (3·224·224 FP32, 602 KB): the raw contents are skipped, not copied.
func BenchmarkParseRequest(b *testing.B) {
	for _, tc := range []struct {
		name  string
		elems int
	}{{"small", 16}, {"image", 3 * 224 * 224}} {
		raw, err := proto.Marshal(inferRequest(tc.elems))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name+"/skip", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseRequest(raw, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m pb.ModelInferRequest
				if err := proto.Unmarshal(raw, &m); err != nil {
					b.Fatal(err)
				}
				RequestOf(&m, false)
			}
		})
	}
}
