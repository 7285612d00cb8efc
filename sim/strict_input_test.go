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
