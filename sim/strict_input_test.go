package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// TestExtraRawInputContentsIgnored: over gRPC, raw_input_contents entries
// beyond the inputs are ignored, as Triton 2.73's gRPC frontend ignores
// them (the differential corpus's "grpc infer more raw than inputs").
func TestExtraRawInputContentsIgnored(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c, _ := rawGRPC(t, s)
	for _, extra := range []int{0, 1, 3} {
		req := simpleRequest(1)
		for range extra {
			req.RawInputContents = append(req.RawInputContents, []byte{1, 2, 3, 4})
		}
		if _, err := c.ModelInfer(context.Background(), req); err != nil {
			t.Errorf("%d extra raw_input_contents: %v", extra, err)
		}
	}
	// A request with typed contents and a stray raw entry is refused too.
	req := &pb.ModelInferRequest{ModelName: "nobatch",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "X", Datatype: "FP32", Shape: []int64{2, 3},
			Contents: &pb.InferTensorContents{Fp32Contents: []float32{1, 2, 3, 4, 5, 6}}}},
		RawInputContents: [][]byte{{0}}}
	if _, err := c.ModelInfer(context.Background(), req); status.Code(err) != codes.InvalidArgument {
		t.Errorf("contents plus raw: %v; want INVALID_ARG", err)
	}
}

// TestHTTPTrailingGarbageRefused: a JSON infer body followed by anything
// but white space is refused, as Triton's parser refuses it (INTERNAL,
// 500).
func TestHTTPTrailingGarbageRefused(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	body := `{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}]}`
	for _, tc := range []struct {
		tail string
		code int
	}{{"", 200}, {"\n  \t", 200}, {"garbage", 500}, {"{}", 500}, {`{"inputs":[]}`, 500}, {"]", 500}, {"0", 500}} {
		resp, err := http.Post("http://"+s.HTTPAddr()+"/v2/models/nobatch/infer", "application/json", strings.NewReader(body+tc.tail))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("tail %q: %d %s; want %d", tc.tail, resp.StatusCode, b, tc.code)
		}
	}
}

// TestLoadConfigParameterChecked: a repository load whose "config"
// parameter Triton refuses is refused with Triton's answer (checked against
// Triton 2.73: HTTP 500 "failed to load 'm', failed to poll from model
// repository" for an override that is no JSON model configuration, a
// max_batch_size past an int32 or negative; 500 "attempt to access JSON
// non-string as string" over HTTP and INVALID_ARG over gRPC for one that
// is no string); one past the simulator's limits (instances, sequence
// slots), which Triton may try to serve (100000000 instances of one model
// crashed the real server), fails to load with the limit it passes; a
// valid one, or none, loads. Every answer is one line, and a huge name or
// parameter key is quoted bounded.
func TestLoadConfigParameterChecked(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	const polled = "failed to load 'simple', failed to poll from model repository"
	const refused = "load failed for model 'simple': version 1 is at UNAVAILABLE state: Invalid argument: the simulator cannot serve this configuration: "
	// override is simple's configuration with more fields.
	override := func(more string) string {
		c := `{"name":"simple","backend":"python",` +
			`"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[16]},{"name":"INPUT1","data_type":"TYPE_INT32","dims":[16]}],` +
			`"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[16]},{"name":"OUTPUT1","data_type":"TYPE_INT32","dims":[16]}]` + more + `}`
		b, _ := json.Marshal(map[string]any{"parameters": map[string]any{"config": c}})
		return string(b)
	}
	long := strings.Repeat("k", 10000)
	for _, tc := range []struct {
		path, body string
		code       int
		says       string
	}{
		{"simple", ``, 200, ""},
		{"simple", override(`,"max_batch_size":8`), 200, ""},
		{"simple", override(`,"max_batch_size":2147483647,"instance_group":[{"count":4,"kind":"KIND_CPU"}]`), 200, ""},
		{"simple", `{"parameters":{"config":"not json"}}`, 500, polled},
		{"simple", `{"parameters":{"config":""}}`, 500, polled},
		{"simple", override(`,"max_batch_size":9223372036854775807`), 500, polled},
		{"simple", override(`,"max_batch_size":-1`), 500, polled},
		{"simple", override(`,"instance_group":[{"count":100000000,"kind":"KIND_CPU"}]`), 400,
			refused + "instance_group[0].count: 100000000 instances on 1 device(s) is over the limit of 1024 instances per model"},
		{"simple", override(`,"max_batch_size":1000000,"sequence_batching":{}`), 400, refused + "max_batch_size: 1000000 sequence slots"},
		{"simple", override(`,"max_batch_size":2147483647,"sequence_batching":{}`), 400, refused + "max_batch_size: 2147483647 sequence slots"},
		{"simple", override(`,"max_batch_size":20000,"sequence_batching":{},"instance_group":[{"count":4,"kind":"KIND_CPU"}]`), 400,
			refused + "max_batch_size: 20000 sequence slots on each of 4 instance(s) is over the limit of 65536"},
		{"simple", override(`,"instance_group":[{"name":"` + long + `","count":1,"kind":"KIND_CPU","gpus":[0]}]`), 400,
			"Invalid argument: instance group kkkk"},
		{"simple", override(`,"instance_group":[{"name":"` + long + `","count":1,"kind":"KIND_CPU","gpus":[0]}]`), 400,
			"(10000 bytes in all) of model simple has kind KIND_CPU but specifies one or more GPUs"},
		{"simple", `{"parameters":{"config":7}}`, 500, "attempt to access JSON non-string as string"},
		{"simple", `{"parameters":{"config":{"max_batch_size":8}}}`, 500, "attempt to access JSON non-string as string"},
		{"simple", `{"parameters":{"file:` + long + `":"x"}}`, 501, "load parameter 'file:kkkk"},
		{long, ``, 500, "failed to load 'kkkk"},
	} {
		resp, err := http.Post("http://"+s.HTTPAddr()+"/v2/repository/models/"+tc.path+"/load", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.says) || strings.Contains(string(b), "\n") || len(b) > 600 {
			t.Errorf("HTTP load %.200s: %d %.800s; want %d saying %q, one line", tc.body, resp.StatusCode, b, tc.code, tc.says)
		}
	}
	c, _ := rawGRPC(t, s)
	str := func(s string) *pb.ModelRepositoryParameter {
		return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: s}}
	}
	config := func(body string) string {
		var p struct {
			Parameters struct {
				Config string `json:"config"`
			} `json:"parameters"`
		}
		_ = json.Unmarshal([]byte(body), &p)
		return p.Parameters.Config
	}
	for _, tc := range []struct {
		name   string
		params map[string]*pb.ModelRepositoryParameter
		code   codes.Code
		says   string
	}{
		{"simple", map[string]*pb.ModelRepositoryParameter{"config": str(config(override(`,"max_batch_size":8`)))}, codes.OK, ""},
		{"simple", map[string]*pb.ModelRepositoryParameter{"config": str("not json")}, codes.Internal, polled},
		{"simple", map[string]*pb.ModelRepositoryParameter{"config": str(config(override(`,"max_batch_size":9223372036854775807`)))}, codes.Internal, polled},
		{"simple", map[string]*pb.ModelRepositoryParameter{"config": str("")}, codes.Internal, polled},
		{"simple", map[string]*pb.ModelRepositoryParameter{"config": str(config(override(`,"max_batch_size":1000000,"sequence_batching":{}`)))},
			codes.InvalidArgument, refused + "max_batch_size: 1000000 sequence slots"},
		{"simple", map[string]*pb.ModelRepositoryParameter{"config": {ParameterChoice: &pb.ModelRepositoryParameter_Int64Param{Int64Param: 8}}},
			codes.InvalidArgument, "expected string_param"},
		{"simple", map[string]*pb.ModelRepositoryParameter{long: str("x")}, codes.InvalidArgument, "unrecognized load parameter 'kkkk"},
		{long, nil, codes.Internal, "failed to load 'kkkk"},
	} {
		_, err := c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: tc.name, Parameters: tc.params})
		msg := status.Convert(err).Message()
		if status.Code(err) != tc.code || !strings.Contains(msg, tc.says) || strings.Count(msg, "\n") > 1 || len(msg) > 600 {
			t.Errorf("gRPC load %.40s with %.200v: %v %.800s; want %v saying %q", tc.name, tc.params, status.Code(err), msg, tc.code, tc.says)
		}
	}
}
