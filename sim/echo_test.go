package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/triton/pb"
)

// hostileSize is the length of hostileValue: 10 MB, as the hardening pass
// sent; 1 MB under the race detector, which spends half a minute parsing
// and copying 10 MB values. Either is a thousand times the 1 KiB an answer
// may quote.
var hostileSize = func() int {
	if testenv.Race {
		return 1 << 20
	}
	return 10 << 20
}()

// hostileValue is a value of hostileSize bytes a client puts where a name
// goes.
var hostileValue = strings.Repeat("A", hostileSize)

// checkBounded fails unless msg, an answer to a request carrying
// hostileValue, quotes it cut: a line of at most 1 KiB saying its length.
func checkBounded(t *testing.T, what, msg string) {
	t.Helper()
	if len(msg) > 1<<10 || !strings.Contains(msg, fmt.Sprintf("(%d bytes in all)", hostileSize)) || strings.Contains(msg, "\n") {
		t.Errorf("%s: %d bytes: %.200q…; want one line under 1 KiB that quotes the value cut, with its length", what, len(msg), msg)
	}
}

// TestGRPCEchoesAreBounded: every answer that quotes a value of a gRPC
// request quotes at most the start of it, however long it is.
func TestGRPCEchoesAreBounded(t *testing.T) {
	t.Parallel()
	s := startSim(t, testRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	c, _ := rawGRPC(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	good := func() *pb.ModelInferRequest {
		return &pb.ModelInferRequest{ModelName: "simple",
			Inputs: []*pb.ModelInferRequest_InferInputTensor{
				{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}}, {Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}}},
			RawInputContents: [][]byte{make([]byte, 64), make([]byte, 64)}}
	}
	long := make([]int64, 1<<20)
	for i := range long {
		long[i] = 1
	}
	for _, tc := range []struct {
		name string
		edit func(r *pb.ModelInferRequest)
		want string // besides the length: proof of which check answered
	}{
		{"model name", func(r *pb.ModelInferRequest) { r.ModelName = hostileValue }, "Request for unknown model: 'AAAA"},
		{"version", func(r *pb.ModelInferRequest) { r.ModelVersion = hostileValue }, "version string 'AAAA"},
		{"input name", func(r *pb.ModelInferRequest) { r.Inputs[1].Name = hostileValue }, "unexpected inference input 'AAAA"},
		{"output name", func(r *pb.ModelInferRequest) {
			r.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: hostileValue}}
		}, "unexpected inference output 'AAAA"},
		{"request id", func(r *pb.ModelInferRequest) { r.Id = hostileValue; r.Inputs[0].Datatype = "FP32" }, "[request id: AAAA"},
		{"parameter key", func(r *pb.ModelInferRequest) {
			r.Parameters = map[string]*pb.InferParameter{hostileValue: {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 1}}}
		}, "invalid value type for 'AAAA"},
		{"shared memory region", func(r *pb.ModelInferRequest) {
			r.Inputs[0].Parameters = map[string]*pb.InferParameter{
				"shared_memory_region":    {ParameterChoice: &pb.InferParameter_StringParam{StringParam: hostileValue}},
				"shared_memory_byte_size": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 64}}}
			r.RawInputContents = r.RawInputContents[1:]
		}, "Unable to find shared memory region: 'AAAA"},
	} {
		r := good()
		tc.edit(r)
		_, err := c.ModelInfer(ctx, r)
		msg := status.Convert(err).Message()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %.200q; want it to say %q", tc.name, msg, tc.want)
		}
		checkBounded(t, tc.name, msg)
	}

	r := good()
	r.Inputs[0].Shape = long // 1048576 dims
	_, err := c.ModelInfer(ctx, r)
	if msg := status.Convert(err).Message(); len(msg) > 1<<10 || !strings.Contains(msg, "… (1048576 dims)]") {
		t.Errorf("a shape of a million dims: %d bytes %.300q; want it cut, with the count", len(msg), msg)
	}

	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"load of a model", func() error {
			_, err := c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: hostileValue})
			return err
		}, "failed to load 'AAAA"},
		{"statistics of a model", func() error {
			_, err := c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: hostileValue})
			return err
		}, "requested model 'AAAA"},
		{"trace setting key", func() error {
			_, err := c.TraceSetting(ctx, &pb.TraceSettingRequest{Settings: map[string]*pb.TraceSettingRequest_SettingValue{hostileValue: {Value: []string{"x"}}}})
			return err
		}, "unknown trace setting 'AAAA"},
		{"log format", func() error {
			// Triton ignores a log setting it does not know; it quotes a
			// log_format it does not take.
			_, err := c.LogSettings(ctx, &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{"log_format": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: hostileValue}}}})
			return err
		}, "invalid argument for log_format, got: AAAA"},
		{"shared memory region status", func() error {
			_, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{Name: hostileValue})
			return err
		}, "'AAAA"},
		{"CUDA shared memory register", func() error {
			_, err := c.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: hostileValue})
			return err
		}, "failed to register CUDA shared memory region: 'AAAA"},
	} {
		msg := status.Convert(tc.call()).Message()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %.200q; want it to say %q", tc.name, msg, tc.want)
		}
		checkBounded(t, tc.name, msg)
	}
}

// TestHTTPEchoesAreBounded: every answer that quotes a value of an HTTP
// request (its body, or a header) quotes at most the start of it.
func TestHTTPEchoesAreBounded(t *testing.T) {
	t.Parallel()
	s := startSim(t, testRepository(), EngineOptions{})
	post := func(header map[string]string, body string) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+s.HTTPAddr()+"/v2/models/simple/infer", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	in := func(name, datatype, shape, data string) string {
		return `{"name":"` + name + `","datatype":"` + datatype + `","shape":` + shape + `,"data":` + data + `}`
	}
	sixteen := "[" + strings.Repeat("0,", 15) + "0]"
	ok1 := in("INPUT1", "INT32", "[1,16]", sixteen)
	huge := hostileValue
	for _, tc := range []struct {
		name, body, want string
	}{
		{"input name", `{"inputs":[` + in(huge, "INT32", "[1,16]", sixteen) + `,` + ok1 + `]}`, "unexpected inference input 'AAAA"},
		{"output name", `{"inputs":[` + in("INPUT0", "INT32", "[1,16]", sixteen) + `,` + ok1 + `],"outputs":[{"name":"` + huge + `"}]}`, "unexpected inference output 'AAAA"},
		{"parameter key", `{"parameters":{"` + huge + `":[1]},"inputs":[]}`, "parameter 'AAAA"},
		{"request id", `{"id":"` + huge + `","inputs":[` + in("INPUT0", "FP32", "[1,16]", sixteen) + `,` + ok1 + `]}`, "[request id: AAAA"},
	} {
		checkBounded(t, tc.name, post(nil, tc.body))
		if got := post(nil, tc.body); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %.200q; want it to say %q", tc.name, got, tc.want)
		}
	}
	// A number out of range is answered in TritonJson's words, which do
	// not quote it.
	long := `{"inputs":[` + in("INPUT0", "INT32", "[1,1]", "["+strings.Repeat("1", hostileSize)+"]") + `,` + ok1 + `]}`
	if got := post(nil, long); len(got) > 1<<10 || !strings.Contains(got, "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer") {
		t.Errorf("a number in data: %d bytes %.200q; want TritonJson's short answer", len(got), got)
	}
	// Headers: net/http takes 1 MB of them.
	for _, tc := range []struct{ header, want string }{
		{"Content-Encoding", "Unsupported Content-Encoding: 'aaaa"},
		{"Inference-Header-Content-Length", "Unable to parse Inference-Header-Content-Length, got: AAAA"},
	} {
		got := post(map[string]string{tc.header: hostileValue[:512<<10]}, "{}")
		if len(got) > 1<<10 || !strings.Contains(got, tc.want) || !strings.Contains(got, "(524288 bytes in all)") {
			t.Errorf("a 512 KiB %s: %d bytes %.200q; want it cut, with its length", tc.header, len(got), got)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1`)
	for range 1 << 20 {
		b.WriteString(",1")
	}
	b.WriteString(`],"data":[0]},` + ok1 + `]}`)
	if got := post(nil, b.String()); len(got) > 1<<10 || !strings.Contains(got, "dims)]") {
		t.Errorf("a shape of a million dims: %d bytes %.300q; want it cut, with the count", len(got), got)
	}
}
