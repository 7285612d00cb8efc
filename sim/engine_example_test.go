package sim_test

import (
	"context"
	"fmt"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// An Engine serves the demo models in-process; the frontends put gRPC and
// HTTP in front of exactly these calls.
func ExampleEngine() {
	e, err := sim.NewEngine(sim.DemoRepository(), sim.EngineOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	a := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	b := []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	resp, err := e.Infer(context.Background(), &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{triton.PutInt32s(a), triton.PutInt32s(b)},
	}, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Outputs[0].Name, triton.Int32s(resp.RawOutputContents[0])[:4])
	fmt.Println(resp.Outputs[1].Name, triton.Int32s(resp.RawOutputContents[1])[:4])
	st, _ := e.ModelStatistics("simple", "")
	fmt.Println("success", st.ModelStats[0].InferenceStats.Success.Count, "executions", st.ModelStats[0].ExecutionCount)
	// Output:
	// OUTPUT0 [2 3 4 5]
	// OUTPUT1 [0 1 2 3]
	// success 1 executions 1
}
