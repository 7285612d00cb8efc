package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// FuzzVarDimsInfer sends one request of an arbitrary shape, with arbitrary
// raw data, to the variable-dim models over both infer paths: the gRPC
// service and the HTTP handler. Whatever the shape, the answer is a
// response or a status (gRPC: a Triton code; HTTP: a JSON error), never a
// crash, and a response's output sizes stay within MaxOutputBytes.
func FuzzVarDimsInfer(f *testing.F) {
	shape := func(dims ...int64) []byte {
		var b []byte
		for _, d := range dims {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
		return b
	}
	seeds := []struct {
		model uint8
		dims  []byte
		data  []byte
	}{
		{0, shape(1, 1073741824, 0), nil},          // the HTTP crasher
		{0, shape(1, 2305843009213693952, 0), nil}, // the gRPC crasher
		{0, shape(1, 2, 2), make([]byte, 16)},
		{1, shape(1<<32, 0), nil},
		{1, shape(3, 3), make([]byte, 36)},
		{2, shape(1, 1<<30, 0), nil},
		{0, shape(-1, 4, 0), nil},
		{0, shape(8, 1<<22, 0), nil},
	}
	for _, s := range seeds {
		f.Add(s.model, s.dims, s.data)
	}
	e := engNew(f, varDimsRepository(), EngineOptions{})
	g := &grpcService{engine: e, settings: &settingsStore{}}
	h := newHTTPHandler(e, &settingsStore{}, HTTPLimits{}, newMemBudget(1<<30))
	models := []string{"vardims", "vardims2", "vardims_str"}
	f.Fuzz(func(t *testing.T, model uint8, dims, data []byte) {
		name := models[int(model)%len(models)]
		var sh []int64
		for b := dims; len(b) >= 8 && len(sh) < 8; b = b[8:] {
			sh = append(sh, int64(binary.LittleEndian.Uint64(b)))
		}
		req := &pb.ModelInferRequest{
			ModelName:        name,
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: sh}},
			RawInputContents: [][]byte{data},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := g.ModelInfer(ctx, proto.Clone(req).(*pb.ModelInferRequest))
		if err != nil {
			if st, ok := status.FromError(err); !ok || st.Code() == codes.Unknown {
				t.Fatalf("gRPC %v: error without a Triton status: %v", sh, err)
			}
		} else {
			for i, raw := range resp.GetRawOutputContents() {
				if len(raw) > MaxOutputBytes {
					t.Fatalf("gRPC %v: output %d holds %d bytes, over %d", sh, i, len(raw), MaxOutputBytes)
				}
			}
		}

		dimsText := strings.Trim(strings.ReplaceAll(fmt.Sprint(sh), " ", ","), "[]")
		json := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","shape":[%s],"datatype":"FP32","parameters":{"binary_data_size":%d}}],"parameters":{"binary_data_output":true}}`, dimsText, len(data))
		body := append([]byte(json), data...)
		hreq := httptest.NewRequest(http.MethodPost, "/v2/models/"+name+"/infer", bytes.NewReader(body))
		hreq.Header.Set("Inference-Header-Content-Length", fmt.Sprint(len(json)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hreq)
		if w.Code != http.StatusOK && !bytes.HasPrefix(w.Body.Bytes(), []byte(`{"error":`)) {
			t.Fatalf("HTTP %v: status %d with body %.200q", sh, w.Code, w.Body.Bytes())
		}
		if w.Code == http.StatusOK && w.Body.Len() > 2*MaxOutputBytes {
			t.Fatalf("HTTP %v: %d-byte response", sh, w.Body.Len())
		}
	})
}
