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
