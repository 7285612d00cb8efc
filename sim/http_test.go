package sim

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// httpDo sends one request and returns status, headers and body.
func httpDo(t *testing.T, method, url string, body []byte, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func TestHTTPRoundTripThroughClient(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c := dial(t, s, "http")
	ctx := ctxT(t)
	md, err := c.ServerMetadata(ctx)
	if err != nil || md.GetName() != "triton" {
		t.Fatalf("ServerMetadata = %v, %v", md, err)
	}
	mm, err := c.ModelMetadata(ctx, "simple", "")
	if err != nil || !slices.Equal(mm.GetOutputs()[1].GetShape(), []int64{-1, 16}) || mm.GetOutputs()[1].GetName() != "OUTPUT1" {
		t.Fatalf("ModelMetadata = %v, %v", mm, err)
	}
	cfg, err := c.ModelConfig(ctx, "batched", "1")
	if err != nil || cfg.GetMaxBatchSize() != 8 || cfg.GetDynamicBatching().GetMaxQueueDelayMicroseconds() != 200000 {
		t.Fatalf("ModelConfig = %v, %v", cfg, err)
	}
	for _, asJSON := range []bool{false, true} {
		a, b := seq(48, 1), seq(48, 1000)
		resp, err := c.Infer(ctx, &triton.InferRequest{
			Model: "simple", ID: "h1", JSON: asJSON,
			Inputs: []triton.Tensor{
				{Name: "INPUT0", Datatype: "INT32", Shape: []int64{3, 16}, Data: triton.PutInt32s(a)},
				{Name: "INPUT1", Datatype: "INT32", Shape: []int64{3, 16}, Data: triton.PutInt32s(b)},
			},
		})
		if err != nil {
			t.Fatalf("JSON=%v: %v", asJSON, err)
		}
		if resp.ID != "h1" {
			t.Fatalf("id %q", resp.ID)
		}
		checkAddSub(t, resp, a, b)
	}
	st, err := c.ModelStatistics(ctx, "simple", "")
	if err != nil || st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount() != 2 {
		t.Fatalf("ModelStatistics = %v, %v", st, err)
	}
	idx, err := c.RepositoryIndex(ctx, true)
	if err != nil || len(idx) != len(testRepository().Models) {
		t.Fatalf("RepositoryIndex = %v, %v", idx, err)
	}
}

func TestHTTPInferErrorsThroughClient(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	c := dial(t, s, "http")
	ctx := ctxT(t)
	for _, tc := range badRequests() {
		if tc.name == "raw and contents" {
			continue // gRPC only: HTTP data is always raw
		}
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req()
			req := &triton.InferRequest{Model: r.GetModelName()}
			for i, in := range r.GetInputs() {
				req.Inputs = append(req.Inputs, triton.Tensor{Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape(), Data: r.GetRawInputContents()[i]})
			}
			_, err := c.Infer(ctx, req)
			te, ok := err.(*triton.Error)
			if !ok {
				t.Fatalf("error %v (%T), want *triton.Error", err, err)
			}
			msg := tc.msg
			if tc.name == "decoupled" {
				msg = errDecoupledHTTP.Message // the HTTP frontend's own words
			}
			if te.HTTPStatus != kserve.HTTPStatusFor(tc.code) || !hasMessage(te.Message, msg) {
				t.Fatalf("got %d %q\nwant %d %q", te.HTTPStatus, te.Message, kserve.HTTPStatusFor(tc.code), msg)
			}
		})
	}
}

func TestHTTPHealthBodiesAndMethods(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	base := "http://" + s.HTTPAddr()
	for _, path := range []string{"/v2/health/live", "/v2/health/ready", "/v2/models/simple/ready", "/v2/models/simple/versions/1/ready"} {
		code, _, body := httpDo(t, "GET", base+path, nil, nil)
		if code != 200 || len(body) != 0 {
			t.Fatalf("GET %s = %d %q; want 200 with no body", path, code, body)
		}
	}
	code, hdr, body := httpDo(t, "POST", base+"/v2/health/live", nil, nil)
	if code != 405 || string(body) != `{"error":"Method Not Allowed"}` || hdr.Get("Content-Type") != "text/plain" {
		t.Fatalf("POST live = %d %q %q", code, body, hdr.Get("Content-Type"))
	}
	code, _, body = httpDo(t, "GET", base+"/v2/models/simple/infer", nil, nil)
	if code != 405 || string(body) != `{"error":"Method Not Allowed"}` {
		t.Fatalf("GET infer = %d %q", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"/v2/models/nope", nil, nil)
	if code != 404 || string(body) != `{"error":"Request for unknown model: 'nope' is not found"}` {
		t.Fatalf("GET unknown model = %d %q", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"/v2/models/nope/stats", nil, nil)
	if code != 400 || string(body) != `{"error":"requested model 'nope' is not available"}` {
		t.Fatalf("stats of unknown model = %d %q", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"/v3/nothing", nil, nil)
	if code != 404 || string(body) != `{"error":"Not Found"}` {
		t.Fatalf("unknown path = %d %q; want Triton's 404", code, body)
	}
	if code, _, body := httpDo(t, "POST", base+"/v2/repository/models/nobatch/unload", nil, nil); code != 200 || len(body) != 0 {
		t.Fatalf("unload = %d %q", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"/v2/models/nobatch/ready", nil, nil)
	if code != 404 || string(body) != `{"error":"Request for unknown model: 'nobatch' has no available versions"}` {
		t.Fatalf("ready of unloaded model = %d %q; want Triton 2.73's 404", code, body)
	}
}

func TestHTTPHealthNotReadyWhileStarting(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{Faults: Faults{SlowStart: time.Hour}})
	code, _, body := httpDo(t, "GET", "http://"+s.HTTPAddr()+"/v2/health/ready", nil, nil)
	if code != 400 || len(body) != 0 {
		t.Fatalf("ready while starting = %d %q; want 400 with no body", code, body)
	}
	code, _, body = httpDo(t, "GET", "http://"+s.HTTPAddr()+"/v2/health/live", nil, nil)
	if code != 200 || len(body) != 0 {
		t.Fatalf("live while starting = %d %q; want 200 with no body", code, body)
	}
}

func TestHTTPStatsJSONNumbersInTritonOrder(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	if _, err := raw.ModelInfer(ctxT(t), simpleRequest(4)); err != nil {
		t.Fatal(err)
	}
	code, hdr, body := httpDo(t, "GET", "http://"+s.HTTPAddr()+"/v2/models/simple/versions/1/stats", nil, nil)
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("stats = %d %s", code, hdr.Get("Content-Type"))
	}
	text := string(body)
	order := []string{`"model_stats":[{"name":"simple"`, `"version":"1"`, `"last_inference":`, `"inference_count":4`,
		`"execution_count":1`, `"inference_stats":{"success":{"count":1,"ns":`, `"fail":{"count":0,"ns":0}`, `"queue":{"count":1,`,
		`"compute_input":`, `"compute_infer":`, `"compute_output":`, `"cache_hit":{"count":0,"ns":0}`, `"cache_miss":`,
		`"response_stats":{}`, `"batch_stats":[{"batch_size":4,"compute_input":{"count":1,`, `"memory_usage":[`}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("stats JSON lacks %s after offset %d:\n%s", want, at, text)
		}
		at += i + len(want)
	}
	var all struct {
		ModelStats []map[string]any `json:"model_stats"`
	}
	code, _, body = httpDo(t, "GET", "http://"+s.HTTPAddr()+"/v2/models/stats", nil, nil)
	if err := json.Unmarshal(body, &all); code != 200 || err != nil || len(all.ModelStats) != len(testRepository().Models) {
		t.Fatalf("all stats = %d %v %s", code, err, body)
	}
	if _, isNum := all.ModelStats[0]["last_inference"].(float64); !isNum {
		t.Fatalf("last_inference is %T, want a JSON number", all.ModelStats[0]["last_inference"])
	}
}

func TestHTTPConfigAndIndexJSON(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	base := "http://" + s.HTTPAddr()
	code, _, body := httpDo(t, "GET", base+"/v2/models/simple/config", nil, nil)
	for _, want := range []string{`"max_batch_size":8`, `"data_type":"TYPE_INT32"`, `"kind":"KIND_GPU"`, `"dims":[16]`} {
		if code != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("config = %d, lacks %s: %s", code, want, body)
		}
	}
	code, _, body = httpDo(t, "POST", base+"/v2/repository/index", []byte(`{"ready":true}`), nil)
	var idx []map[string]any
	if err := json.Unmarshal(body, &idx); code != 200 || err != nil || len(idx) != len(testRepository().Models) {
		t.Fatalf("index = %d %v %s", code, err, body)
	}
	if idx[0]["state"] != "READY" || idx[0]["name"] == "" {
		t.Fatalf("index entry = %v", idx[0])
	}
	code, _, body = httpDo(t, "GET", base+"/v2", nil, nil)
	if code != 200 || !strings.HasPrefix(string(body), `{"name":"triton","version":"`) {
		t.Fatalf("server metadata = %d %s", code, body)
	}
}

// binaryBody is an infer body with binary inputs for the simple model.
func binaryBody(t *testing.T, a, b []int32, outputs string) ([]byte, int) {
	t.Helper()
	n := len(a) / 16
	header := fmt.Sprintf(`{"id":"bin","inputs":[`+
		`{"name":"INPUT0","datatype":"INT32","shape":[%d,16],"parameters":{"binary_data_size":%d}},`+
		`{"name":"INPUT1","datatype":"INT32","shape":[%d,16],"parameters":{"binary_data_size":%d}}]%s}`,
		n, 4*len(a), n, 4*len(b), outputs)
	body := append([]byte(header), triton.PutInt32s(a)...)
	return append(body, triton.PutInt32s(b)...), len(header)
}

func TestHTTPBinaryTensorExtension(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	url := "http://" + s.HTTPAddr() + "/v2/models/simple/infer"
	a, b := seq(16, 3), seq(16, 40)

	// One output binary, one JSON.
	body, hlen := binaryBody(t, a, b, `,"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}},{"name":"OUTPUT1"}]`)
	code, hdr, resp := httpDo(t, "POST", url, body, map[string]string{kserve.HeaderContentLength: strconv.Itoa(hlen)})
	if code != 200 || hdr.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("binary infer = %d %s %s", code, hdr.Get("Content-Type"), resp)
	}
	jlen, err := strconv.Atoi(hdr.Get(kserve.HeaderContentLength))
	if err != nil || jlen > len(resp) {
		t.Fatalf("%s = %q for a %d-byte body", kserve.HeaderContentLength, hdr.Get(kserve.HeaderContentLength), len(resp))
	}
	var out struct {
		ID, ModelName, ModelVersion string
		Outputs                     []struct {
			Name       string
			Shape      []int64
			Parameters map[string]int
			Data       []int32
		}
	}
	if err := json.Unmarshal(resp[:jlen], &out); err != nil {
		t.Fatalf("JSON part %q: %v", resp[:jlen], err)
	}
	if out.ID != "bin" || len(out.Outputs) != 2 || out.Outputs[0].Parameters["binary_data_size"] != 64 || out.Outputs[1].Data == nil {
		t.Fatalf("response header = %s", resp[:jlen])
	}
	sum, diff := triton.Int32s(resp[jlen:]), out.Outputs[1].Data
	for i := range a {
		if sum[i] != a[i]+b[i] || diff[i] != a[i]-b[i] {
			t.Fatalf("element %d: %d %d", i, sum[i], diff[i])
		}
	}

	// binary_data_output for all outputs, gzip request and response.
	body, hlen = binaryBody(t, a, b, `,"parameters":{"binary_data_output":true}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	code, hdr, resp = httpDo(t, "POST", url, gz.Bytes(), map[string]string{
		kserve.HeaderContentLength: strconv.Itoa(hlen), "Content-Encoding": "gzip", "Accept-Encoding": "gzip",
	})
	if code != 200 || hdr.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip infer = %d %v %q", code, hdr, resp)
	}
	zr, err := gzip.NewReader(bytes.NewReader(resp))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	jlen, _ = strconv.Atoi(hdr.Get(kserve.HeaderContentLength))
	if len(plain) != jlen+128 || !strings.Contains(string(plain[:jlen]), `"binary_data_size":64`) {
		t.Fatalf("gzip response: %d bytes, header %d: %q", len(plain), jlen, plain[:jlen])
	}

	// A header length beyond the body is rejected.
	code, _, resp = httpDo(t, "POST", url, body, map[string]string{kserve.HeaderContentLength: strconv.Itoa(len(body) + 1)})
	if code != 400 || !strings.HasPrefix(string(resp), `{"error":"inference header size should be in range`) {
		t.Fatalf("oversized header length = %d %s", code, resp)
	}
	// Triton parses the header with std::stoi: text is an error of its
	// own, trailing text after digits is ignored.
	code, _, resp = httpDo(t, "POST", url, body, map[string]string{kserve.HeaderContentLength: "abc"})
	if code != 400 || string(resp) != `{"error":"Unable to parse Inference-Header-Content-Length, got: abc"}` {
		t.Fatalf("header length abc = %d %s", code, resp)
	}
	code, _, resp = httpDo(t, "POST", url, body, map[string]string{kserve.HeaderContentLength: strconv.Itoa(hlen) + "x"})
	if code != 200 {
		t.Fatalf("header length %dx = %d %s", hlen, code, resp)
	}
	// Binary data missing its last bytes.
	code, _, resp = httpDo(t, "POST", url, body[:len(body)-4], map[string]string{kserve.HeaderContentLength: strconv.Itoa(hlen)})
	if code != 400 || !strings.Contains(string(resp), "unexpected size for input 'INPUT1'") {
		t.Fatalf("short binary data = %d %s", code, resp)
	}
}

func TestHTTPRawBinaryRequest(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	data := triton.PutFloat32s([]float32{1.5, -2, 3, 4})
	code, hdr, resp := httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/models/batched/infer", data, map[string]string{kserve.HeaderContentLength: "0"})
	if code != 200 || hdr.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("raw binary infer = %d %s %s", code, hdr.Get("Content-Type"), resp)
	}
	jlen, _ := strconv.Atoi(hdr.Get(kserve.HeaderContentLength))
	if !strings.Contains(string(resp[:jlen]), `"shape":[1,4],"parameters":{"binary_data_size":16}`) || !bytes.Equal(resp[jlen:], data) {
		t.Fatalf("raw binary response %q + %v", resp[:jlen], resp[jlen:])
	}
	code, _, resp = httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/models/simple/infer", data, map[string]string{kserve.HeaderContentLength: "0"})
	if code != 400 || !strings.Contains(string(resp), "Raw request must only have 1 input") {
		t.Fatalf("raw binary to a two-input model = %d %s", code, resp)
	}
}

func TestHTTPJSONInference(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	base := "http://" + s.HTTPAddr() + "/v2/models/"
	// Nested data, no batch dimension.
	code, hdr, resp := httpDo(t, "POST", base+"nobatch/infer",
		[]byte(`{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[[1,2.5,3],[4,5,-6.25]]}]}`), nil)
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("nested JSON = %d %s", code, resp)
	}
	// Floats as Triton writes them (rapidjson): 1.0, not 1.
	want := `{"model_name":"nobatch","model_version":"1","outputs":[{"name":"Y","datatype":"FP32","shape":[2,3],"data":[1.0,2.5,3.0,4.0,5.0,-6.25]}]}`
	if string(resp) != want {
		t.Fatalf("response\n%s\nwant\n%s", resp, want)
	}
	// BYTES as JSON strings.
	code, _, resp = httpDo(t, "POST", base+"strings/infer",
		[]byte(`{"inputs":[{"name":"TEXT","shape":[1,2],"datatype":"BYTES","data":["hello","wörld \"q\""]}]}`), nil)
	if code != 200 || !strings.Contains(string(resp), `"data":["hello","wörld \"q\""]`) {
		t.Fatalf("BYTES JSON = %d %s", code, resp)
	}
	// Data that does not fill the shape: Triton's 500 (the real server's
	// answer, held by the interop corpus).
	code, _, resp = httpDo(t, "POST", base+"nobatch/infer",
		[]byte(`{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3]}]}`), nil)
	if code != 500 || string(resp) != `{"error":"Failed to parse 'data' field: shape does not match true shape"}` {
		t.Fatalf("short data = %d %s", code, resp)
	}
	// A deflate (zlib) body.
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	zw.Write([]byte(`{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}]}`))
	zw.Close()
	code, _, resp = httpDo(t, "POST", base+"nobatch/infer", zb.Bytes(), map[string]string{"Content-Encoding": "deflate"})
	if code != 200 || !strings.Contains(string(resp), `"data":[1.0,2.0,3.0,4.0,5.0,6.0]`) {
		t.Fatalf("deflate body = %d %s", code, resp)
	}
	// Broken JSON: rapidjson's words, Triton's INTERNAL.
	code, _, resp = httpDo(t, "POST", base+"nobatch/infer", []byte(`{"inputs":[`), nil)
	if code != 500 || string(resp) != `{"error":"failed to parse the request JSON buffer: Invalid value. at 11"}` {
		t.Fatalf("broken JSON = %d %s", code, resp)
	}
	// No data at all.
	code, _, resp = httpDo(t, "POST", base+"nobatch/infer", []byte(`{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32"}]}`), nil)
	if code != 400 || string(resp) != `{"error":"Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But no field is set"}` {
		t.Fatalf("no data = %d %s", code, resp)
	}
	// Decoupled models refuse HTTP infer with 501.
	code, _, resp = httpDo(t, "POST", base+"decoupled/infer", []byte(`{"inputs":[{"name":"IN","shape":[2],"datatype":"FP32","data":[1,2]}]}`), nil)
	if code != 501 || string(resp) != `{"error":"HTTP end point doesn't support models with decoupled transaction policy"}` {
		t.Fatalf("decoupled = %d %s", code, resp)
	}
	// Triton refuses a decoupled model before it reads the body.
	code, _, resp = httpDo(t, "POST", base+"decoupled/infer", []byte(`{"inputs":`), nil)
	if code != 501 || !strings.Contains(string(resp), "HTTP end point doesn't support") {
		t.Fatalf("decoupled with a bad body = %d %s", code, resp)
	}
}

func TestHTTPSettingsAndSharedMemory(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{AllowClientShm: true})
	base := "http://" + s.HTTPAddr()
	code, _, body := httpDo(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
	if code != 200 || string(body) != "[]" {
		t.Fatalf("shm status = %d %s", code, body)
	}
	code, _, body = httpDo(t, "POST", base+"/v2/systemsharedmemory/region/r0/register", []byte(`{"key":"/k0","offset":0,"byte_size":64}`), nil)
	if code != 500 || string(body) != `{"error":"Unable to open shared memory region: '/k0'"}` {
		t.Fatalf("shm register = %d %s", code, body)
	}
	code, _, body = httpDo(t, "POST", base+"/v2/trace/setting", []byte(`{"trace_level":["TIMESTAMPS"]}`), nil)
	var tr map[string]any
	if err := json.Unmarshal(body, &tr); code != 200 || err != nil || fmt.Sprint(tr["trace_level"]) != "[TIMESTAMPS]" || tr["trace_rate"] != "1000" {
		t.Fatalf("trace setting = %d %s", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"/v2/logging", nil, nil)
	if code != 200 || !strings.Contains(string(body), `"log_info":true`) {
		t.Fatalf("logging = %d %s", code, body)
	}
}

func TestHTTPVersionedPaths(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	base := "http://" + s.HTTPAddr() + "/v2/models/"
	code, _, body := httpDo(t, "GET", base+"simple/versions/1", nil, nil)
	if code != 200 || !strings.HasPrefix(string(body), `{"name":"simple","versions":["1"],"platform":"python","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[-1,16]}`) {
		t.Fatalf("versioned metadata = %d %s", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"simple/versions/1/config", nil, nil)
	if code != 200 || !strings.Contains(string(body), `"name":"simple"`) {
		t.Fatalf("versioned config = %d %s", code, body)
	}
	code, _, body = httpDo(t, "POST", base+"nobatch/versions/1/infer",
		[]byte(`{"id":"v","inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}],"outputs":[{"name":"Y","parameters":{"binary_data":false}}]}`), nil)
	if code != 200 || !strings.HasPrefix(string(body), `{"id":"v","model_name":"nobatch","model_version":"1",`) {
		t.Fatalf("versioned infer = %d %s", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"nope/ready", nil, nil)
	if code != 404 || string(body) != `{"error":"Request for unknown model: 'nope' is not found"}` {
		t.Fatalf("ready of unknown model = %d %s", code, body)
	}
	code, _, body = httpDo(t, "GET", base+"simple/versions/x", nil, nil)
	if code != 404 || string(body) != `{"error":"Not Found"}` {
		t.Fatalf("non-numeric version = %d %q; want Triton's 404, as no endpoint matches", code, body)
	}
}
