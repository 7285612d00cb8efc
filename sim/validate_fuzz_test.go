package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// FuzzInferRequestValidation sends arbitrary ModelInferRequest messages
// (as they would arrive over gRPC) to the models of the test repository:
// every one is answered, with a response or a Triton error, never a panic.
func FuzzInferRequestValidation(f *testing.F) {
	seeds := []*pb.ModelInferRequest{
		simpleRequest(1),
		simpleRequest(9),
		{ModelName: "nobatch", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "X", Datatype: "FP32", Shape: []int64{2, 3},
			Contents: &pb.InferTensorContents{Fp32Contents: []float32{1, 2, 3, 4, 5, 6}}}}},
		{ModelName: "strings", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{1, 2},
			Contents: &pb.InferTensorContents{BytesContents: [][]byte{[]byte("a"), []byte("bc")}}}}},
		{ModelName: "strings", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{1, 1}}},
			RawInputContents: [][]byte{{0xff, 0xff, 0xff, 0x7f, 'a'}}},
		{ModelName: "simple", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 1 << 62}}},
			RawInputContents: [][]byte{triton.PutInt32s(seq(16, 0))}},
		{ModelName: "simple", Parameters: map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -1}}},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT1"}, {Name: "OUTPUT1"}}},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	e := engNew(f, testRepository(), EngineOptions{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		var req pb.ModelInferRequest
		if proto.Unmarshal(msg, &req) != nil {
			return
		}
		switch req.ModelName {
		case "simple", "nobatch", "strings", "decoupled":
		default:
			req.ModelName = "simple"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := e.Infer(ctx, &req, true)
		if err != nil {
			var te *triton.Error
			if !errors.As(err, &te) {
				t.Fatalf("error without a Triton status: %v", err)
			}
			return
		}
		if len(resp.GetOutputs()) != len(resp.GetRawOutputContents()) {
			t.Fatalf("%d outputs but %d raw_output_contents", len(resp.GetOutputs()), len(resp.GetRawOutputContents()))
		}
		for i, o := range resp.GetOutputs() {
			size := kserve.ElementSize(o.GetDatatype())
			if n, ok := checkedElementCount(o.GetShape(), max(1, size)); size > 0 && (!ok || n*int64(size) != int64(len(resp.GetRawOutputContents()[i]))) {
				t.Fatalf("output %s of shape %v has %d bytes", o.GetName(), o.GetShape(), len(resp.GetRawOutputContents()[i]))
			}
		}
	})
}
