package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// TestExtraRawInputContentsRefused: over gRPC, raw_input_contents entries
// beyond the inputs are refused, as the HTTP frontend refuses binary data
// beyond the inputs.
func TestExtraRawInputContentsRefused(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c, _ := rawGRPC(t, s)
	for _, extra := range []int{0, 1, 3} {
		req := simpleRequest(1)
		for range extra {
			req.RawInputContents = append(req.RawInputContents, []byte{1, 2, 3, 4})
		}
		_, err := c.ModelInfer(context.Background(), req)
		if extra == 0 {
			if err != nil {
				t.Fatalf("a valid request: %v", err)
			}
			continue
		}
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "unexpected additional input data") {
			t.Errorf("%d extra raw_input_contents: %v; want INVALID_ARG", extra, err)
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
// but white space is refused with 400, as Triton's parser does.
func TestHTTPTrailingGarbageRefused(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	body := `{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}]}`
	for _, tc := range []struct {
		tail string
		code int
	}{{"", 200}, {"\n  \t", 200}, {"garbage", 400}, {"{}", 400}, {`{"inputs":[]}`, 400}, {"]", 400}, {"0", 400}} {
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
// repository" for an override that is no JSON model configuration, has an
// unknown field, a max_batch_size past an int32 or negative; 500 "attempt
// to access JSON non-string as string" over HTTP and INVALID_ARG over gRPC
// for one that is no string), with the reason Triton logs after it; so is
// one past the simulator's limits (Triton tried to start 100000000
// instances and crashed); a valid one, or none, loads.
func TestLoadConfigParameterChecked(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	const polled = "failed to load 'simple', failed to poll from model repository: "
	for _, tc := range []struct {
		body string
		code int
		says string
	}{
		{``, 200, ""},
		{`{"parameters":{"config":"{\"max_batch_size\":8}"}}`, 200, ""},
		{`{"parameters":{"config":"{\"max_batch_size\":2147483647,\"instance_group\":[{\"count\":4,\"kind\":\"KIND_CPU\"}]}"}}`, 200, ""},
		{`{"parameters":{"config":"not json"}}`, 500, polled + "Invalid config override"},
		{`{"parameters":{"config":""}}`, 500, polled + "Invalid config override"},
		{`{"parameters":{"config":"[1,2]"}}`, 500, polled + "Invalid config override"},
		{`{"parameters":{"config":"{\"max_batch_size\":8} trailing"}}`, 500, polled + "Invalid config override"},
		{`{"parameters":{"config":"{\"bogus_field\":1}"}}`, 500, polled + "Invalid config override"},
		{`{"parameters":{"config":"{\"max_batch_size\":9223372036854775807}"}}`, 500, polled + "Invalid config override: (line 1:19): invalid value for int32 field max_batch_size: 9223372036854775807"},
		{`{"parameters":{"config":"{\"max_batch_size\":-1}"}}`, 500, polled + "'max_batch_size' must be non-negative value for simple"},
		{`{"parameters":{"config":"{\"instance_group\":[{\"count\":100000000,\"kind\":\"KIND_CPU\"}]}"}}`, 500, polled + "config override: instance_group[0].count: 100000000 instances on 1 device(s) is over the limit of 1024 instances per model"},
		{`{"parameters":{"config":"{\"max_batch_size\":1000000,\"sequence_batching\":{}}"}}`, 500, polled + "config override: max_batch_size: 1000000 sequence slots"},
		{`{"parameters":{"config":7}}`, 500, "attempt to access JSON non-string as string"},
		{`{"parameters":{"config":{"max_batch_size":8}}}`, 500, "attempt to access JSON non-string as string"},
	} {
		resp, err := http.Post("http://"+s.HTTPAddr()+"/v2/repository/models/simple/load", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.says) || strings.Count(string(b), "\n") > 0 {
			t.Errorf("HTTP load %s: %d %s; want %d saying %q, one line", tc.body, resp.StatusCode, b, tc.code, tc.says)
		}
	}
	c, _ := rawGRPC(t, s)
	for _, tc := range []struct {
		param *pb.ModelRepositoryParameter
		code  codes.Code
	}{
		{&pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: `{"max_batch_size":8}`}}, codes.OK},
		{&pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: "not json"}}, codes.Internal},
		{&pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: `{"max_batch_size":9223372036854775807}`}}, codes.Internal},
		{&pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: ""}}, codes.Internal},
		{&pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_Int64Param{Int64Param: 8}}, codes.InvalidArgument},
	} {
		_, err := c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: "simple",
			Parameters: map[string]*pb.ModelRepositoryParameter{"config": tc.param}})
		if status.Code(err) != tc.code {
			t.Errorf("gRPC load with config %v: %v; want %v", tc.param, err, tc.code)
		}
	}
}
