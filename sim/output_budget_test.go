package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// varDimsRepository holds models whose inputs have two variable dims and
// whose computed outputs have -1 dims: the output shape follows the
// request, so a request of zero input elements can ask for a huge output.
func varDimsRepository() Repository {
	in := []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{-1, -1}}}
	cpu := []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}}
	return Repository{Models: []ModelSpec{
		{
			Name: "vardims", Backend: "python", MaxBatchSize: 8, Inputs: in,
			Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{-1}}},
			InstanceGroups: cpu, Latency: LatencySpec{FixedUS: 10}, Behaviour: BehaviourClassifier,
		},
		{
			// Two -1 dims: the element count is the variable size squared.
			Name: "vardims2", Backend: "python", MaxBatchSize: 0,
			Inputs:         []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{-1, -1}}},
			Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP64", Dims: []int64{-1, -1}}},
			InstanceGroups: cpu, Latency: LatencySpec{FixedUS: 10}, Behaviour: BehaviourZeros,
		},
		{
			// An identity whose output type differs from its input: the
			// output is computed, not passed through.
			Name: "vardims_str", Backend: "python", MaxBatchSize: 4, Inputs: in,
			Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_STRING", Dims: []int64{-1}}},
			InstanceGroups: cpu, Latency: LatencySpec{FixedUS: 10}, Behaviour: BehaviourIdentity,
		},
	}}
}

// outputBudgetCases are requests of zero input elements (so they pass the
// input size checks) whose computed outputs overflow or pass the budget,
// and small ones that must still be answered.
var outputBudgetCases = []struct {
	name, model string
	shape       []int64
	ok          bool
	want        string // in the error message
}{
	{"http crasher: 1 GiB elements", "vardims", []int64{1, 1073741824, 0}, false, "over the simulator's limit"},
	{"grpc crasher: makeslice overflow", "vardims", []int64{1, 2305843009213693952, 0}, false, "overflows"},
	{"int64 max variable dim", "vardims", []int64{1, 9223372036854775807, 0}, false, "overflows"},
	{"bytes overflow only", "vardims", []int64{1, 1 << 62, 0}, false, "overflows"},
	{"one element over the budget", "vardims", []int64{1, MaxOutputBytes/4 + 1, 0}, false, "over the simulator's limit"},
	{"batch times variable over budget", "vardims", []int64{8, 1 << 22, 0}, false, "over the simulator's limit"},
	{"variable dim second is zero: empty output", "vardims", []int64{1, 0, 1 << 40}, true, ""},
	{"small variable output", "vardims", []int64{1, 4, 0}, true, ""},
	{"squared dims overflow", "vardims2", []int64{1 << 32, 0}, false, "overflows"},
	{"squared dims over budget", "vardims2", []int64{1 << 12, 0}, false, "over the simulator's limit"},
	{"squared dims small", "vardims2", []int64{16, 0}, true, ""},
	{"string output over budget", "vardims_str", []int64{1, 1 << 30, 0}, false, "over the simulator's limit"},
	{"string output overflow", "vardims_str", []int64{1, 1 << 62, 0}, false, "overflows"},
	{"string output small", "vardims_str", []int64{1, 3, 0}, true, ""},
}

func TestOutputBudgetGRPC(t *testing.T) {
	s := startSim(t, varDimsRepository(), EngineOptions{})
	c, _ := rawGRPC(t, s)
	for _, tc := range outputBudgetCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := c.ModelInfer(ctx, &pb.ModelInferRequest{
				ModelName:        tc.model,
				Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: tc.shape}},
				RawInputContents: [][]byte{{}},
			})
			if tc.ok {
				if err != nil {
					t.Fatalf("ModelInfer %v: %v", tc.shape, err)
				}
				return
			}
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ModelInfer %v: %v; want one line of INVALID_ARG with %q", tc.shape, err, tc.want)
			}
		})
	}
	// The simulator is still serving after all of them.
	if _, err := c.ServerLive(context.Background(), &pb.ServerLiveRequest{}); err != nil {
		t.Fatalf("ServerLive after the requests: %v", err)
	}
}

func TestOutputBudgetHTTP(t *testing.T) {
	s := startSim(t, varDimsRepository(), EngineOptions{})
	for _, tc := range outputBudgetCases {
		t.Run(tc.name, func(t *testing.T) {
			shape := strings.Trim(strings.ReplaceAll(fmt.Sprint(tc.shape), " ", ","), "[]")
			body := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","shape":[%s],"datatype":"FP32","data":[]}]}`, shape)
			resp, err := http.Post("http://"+s.HTTPAddr()+"/v2/models/"+tc.model+"/infer", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.ok {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", body, resp.StatusCode, got)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), tc.want) {
				t.Fatalf("%s: %d %s; want 400 with %q", body, resp.StatusCode, got, tc.want)
			}
		})
	}
	resp, err := http.Get("http://" + s.HTTPAddr() + "/v2/health/live")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("live after the requests: %v %v", resp, err)
	}
	resp.Body.Close()
}
