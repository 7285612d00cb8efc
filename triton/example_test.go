package triton_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// Dial a server, encode a request once, and send it many times: the
// driver's hot path. (Not run: it needs a Triton server.)
func ExampleDial() {
	ctx := context.Background()
	c, err := triton.Dial(ctx, "grpc://localhost:8001", triton.Options{Connections: 4})
	if err != nil {
		fmt.Println(err) // cannot reach Triton at localhost:8001 over gRPC within 5s: ...
		return
	}
	defer c.Close()
	ones := make([]int32, 16)
	for i := range ones {
		ones[i] = 1
	}
	p, err := c.Prepare(&triton.InferRequest{
		Model: "simple",
		Inputs: []triton.Tensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Data: triton.PutInt32s(ones)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Data: triton.PutInt32s(ones)},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 100 {
		if _, err := c.Send(ctx, p); err != nil {
			fmt.Println(kserve.CodeName(triton.ErrorCode(err)), err)
			return
		}
	}
}

func ExampleParseMetrics() {
	text := `# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-0b1c"} 0.5
# TYPE nv_inference_request_success counter
nv_inference_request_success{gpu_uuid="GPU-0b1c",model="simple",version="1"} 40
nv_inference_request_success{gpu_uuid="GPU-77aa",model="simple",version="1"} 2
`
	m, err := triton.ParseMetrics(strings.NewReader(text))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.GPUs[0].UUID, m.GPUs[0].Utilization, m.HasCPU)
	fmt.Println(m.Models[triton.ModelKey{Model: "simple", Version: "1"}].RequestSuccess)
	// Output:
	// GPU-0b1c 0.5 false
	// 42
}

func ExampleMetricsURL() {
	fmt.Println(triton.MetricsURL("grpc://triton.internal:8001"))
	// Output: http://triton.internal:8002/metrics
}
