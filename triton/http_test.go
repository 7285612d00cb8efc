package triton

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tritontop/tritontop/triton/kserve"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// httpTestServer is a small Triton over real loopback HTTP. Its infer
// handler checks each request the way Triton parses it and answers 400
// when something is off, so a malformed client request fails the test.
type httpTestServer struct {
	*httptest.Server

	mu        sync.Mutex
	body      []byte      // last infer request body
	header    http.Header // last request's headers
	respBytes int         // last infer response body size
	indexBody string
}

func startHTTPServer(t testing.TB) *httpTestServer {
	t.Helper()
	s := &httpTestServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func replyJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func replyError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	replyJSON(w, status, string(b))
}

const simpleMetadataJSON = `{"name":"simple","versions":["1"],"platform":"tensorflow_graphdef",` +
	`"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16]},{"name":"INPUT1","datatype":"INT32","shape":[1,16]}],` +
	`"outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16]},{"name":"OUTPUT1","datatype":"INT32","shape":[1,16]}]}`

// simpleStatsJSON is simpleStats() as Triton prints it: numbers, not
// strings, for the uint64 fields.
const simpleStatsJSON = `{"model_stats":[{"name":"simple","version":"1","last_inference":1700000000000,` +
	`"inference_count":7,"execution_count":5,"inference_stats":{"success":{"count":7,"ns":7000000},` +
	`"fail":{"count":1,"ns":5000},"queue":{"count":7,"ns":70000},"compute_input":{"count":7,"ns":700},` +
	`"compute_infer":{"count":7,"ns":700000},"compute_output":{"count":7,"ns":7000},"cache_hit":{"count":0,"ns":0},` +
	`"cache_miss":{"count":0,"ns":0}},"response_stats":{},"batch_stats":[{"batch_size":1,"compute_input":{"count":5,"ns":500},` +
	`"compute_infer":{"count":5,"ns":500000},"compute_output":{"count":5,"ns":5000}}],"memory_usage":[]}]}`

func (s *httpTestServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.header = r.Header.Clone()
	s.mu.Unlock()
	path := r.URL.Path
	switch {
	case path == "/v2/health/live":
		w.WriteHeader(http.StatusOK)
	case path == "/v2/health/ready":
		w.WriteHeader(http.StatusBadRequest)
	case path == "/v2":
		replyJSON(w, 200, `{"name":"triton","version":"2.71.0","extensions":["classification","statistics"]}`)
	case path == "/v2/repository/index" && r.Method == http.MethodPost:
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.indexBody = string(b)
		s.mu.Unlock()
		if strings.Contains(string(b), `"ready":true`) {
			replyJSON(w, 200, `[{"name":"simple","version":"1","state":"READY"}]`)
		} else {
			replyJSON(w, 200, `[{"name":"loading","state":"LOADING"},{"name":"simple","version":"1","state":"READY"}]`)
		}
	case path == "/v2/models/stats":
		replyJSON(w, 200, simpleStatsJSON)
	case strings.HasPrefix(path, "/v2/models/"):
		s.serveModel(w, r, strings.Split(strings.TrimPrefix(path, "/v2/models/"), "/"))
	default:
		replyError(w, 404, "Not Found")
	}
}

func (s *httpTestServer) serveModel(w http.ResponseWriter, r *http.Request, parts []string) {
	model := parts[0]
	if len(parts) >= 3 && parts[1] == "versions" {
		if _, err := strconv.Atoi(parts[2]); err != nil {
			replyError(w, 400, "bad version")
			return
		}
		parts = append(parts[:1], parts[3:]...)
	}
	action := ""
	if len(parts) > 1 {
		action = parts[1]
	}
	if model == "broken" {
		// A proxy in front of Triton, answering in plain text.
		http.Error(w, "upstream connect error", http.StatusBadGateway)
		return
	}
	if action == "ready" && model == "loading" {
		replyError(w, 400, "Model version not ready")
		return
	}
	if model != "simple" && model != "identity" {
		replyError(w, 404, unknownModel(model))
		return
	}
	switch action {
	case "":
		replyJSON(w, 200, simpleMetadataJSON)
	case "ready":
		w.WriteHeader(200)
	case "config":
		b, err := kserve.ConfigJSON(simpleConfig())
		if err != nil {
			replyError(w, 500, err.Error())
			return
		}
		replyJSON(w, 200, string(b))
	case "stats":
		replyJSON(w, 200, simpleStatsJSON)
	case "infer":
		if r.Method != http.MethodPost {
			replyError(w, 405, "Method Not Allowed")
			return
		}
		s.infer(w, r, model)
	default:
		replyError(w, 404, "Not Found")
	}
}

type testInferRequest struct {
	ID         string         `json:"id"`
	Parameters map[string]any `json:"parameters"`
	Inputs     []struct {
		Name       string          `json:"name"`
		Datatype   string          `json:"datatype"`
		Shape      []int64         `json:"shape"`
		Parameters map[string]any  `json:"parameters"`
		Data       json.RawMessage `json:"data"`
	} `json:"inputs"`
	Outputs []struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"outputs"`
}

// infer parses a request like Triton: JSON header of
// Inference-Header-Content-Length bytes (or the whole body), then each
// binary input's bytes in order.
func (s *httpTestServer) infer(w http.ResponseWriter, r *http.Request, model string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		replyError(w, 400, err.Error())
		return
	}
	s.mu.Lock()
	s.body = body
	s.mu.Unlock()
	if r.ContentLength != int64(len(body)) {
		replyError(w, 400, fmt.Sprintf("Content-Length %d for a %d-byte body", r.ContentLength, len(body)))
		return
	}
	jsonLen := len(body)
	if h := r.Header.Get("Inference-Header-Content-Length"); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n < 0 || n > len(body) {
			replyError(w, 400, "bad Inference-Header-Content-Length "+h)
			return
		}
		jsonLen = n
	}
	var req testInferRequest
	if err := json.Unmarshal(body[:jsonLen], &req); err != nil {
		replyError(w, 400, "failed to parse the request JSON buffer: "+err.Error())
		return
	}
	bin := body[jsonLen:]
	var inputs []Tensor
	for _, in := range req.Inputs {
		t := Tensor{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}
		if sz, ok := in.Parameters["binary_data_size"].(float64); ok {
			if int(sz) > len(bin) {
				replyError(w, 400, "unexpected end of binary data for input "+in.Name)
				return
			}
			t.Data, bin = bin[:int(sz)], bin[int(sz):]
		} else if t.Data, err = testJSONData(in.Datatype, in.Data); err != nil {
			replyError(w, 400, err.Error())
			return
		}
		inputs = append(inputs, t)
	}
	if len(bin) != 0 {
		replyError(w, 400, fmt.Sprintf("%d unexpected extra bytes of binary data", len(bin)))
		return
	}
	var outs []Tensor
	if model == "identity" {
		outs = []Tensor{{Name: "OUTPUT0", Datatype: inputs[0].Datatype, Shape: inputs[0].Shape, Data: inputs[0].Data}}
	} else {
		var code codes.Code
		var msg string
		if outs, code, msg = simpleInfer(model, inputs); code != codes.OK {
			replyError(w, kserve.HTTPStatusFor(code), msg)
			return
		}
	}
	allBinary, _ := req.Parameters["binary_data_output"].(bool)
	binaryOut := map[string]bool{}
	if len(req.Outputs) > 0 {
		var kept []Tensor
		for _, o := range req.Outputs {
			for _, t := range outs {
				if t.Name == o.Name {
					kept = append(kept, t)
				}
			}
			b, ok := o.Parameters["binary_data"].(bool)
			binaryOut[o.Name] = allBinary || (ok && b)
		}
		outs = kept
	}
	type jsonOut struct {
		Name       string         `json:"name"`
		Datatype   string         `json:"datatype"`
		Shape      []int64        `json:"shape"`
		Parameters map[string]any `json:"parameters,omitempty"`
		Data       any            `json:"data,omitempty"`
	}
	resp := struct {
		ID           string    `json:"id,omitempty"`
		ModelName    string    `json:"model_name"`
		ModelVersion string    `json:"model_version"`
		Outputs      []jsonOut `json:"outputs"`
	}{ID: req.ID, ModelName: model, ModelVersion: "1"}
	var tail []byte
	for _, t := range outs {
		o := jsonOut{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
		if b, ok := binaryOut[t.Name]; (ok && b) || (!ok && allBinary) {
			o.Parameters = map[string]any{"binary_data_size": len(t.Data)}
			tail = append(tail, t.Data...)
		} else if t.Datatype == "BYTES" {
			elems, _ := kserve.DecodeBytes(t.Data, int(kserve.ElementCount(t.Shape)))
			strs := make([]string, len(elems))
			for i, e := range elems {
				strs[i] = string(e)
			}
			o.Data = strs
		} else {
			o.Data = Int32s(t.Data)
		}
		resp.Outputs = append(resp.Outputs, o)
	}
	head, _ := json.Marshal(resp)
	if len(tail) > 0 {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Inference-Header-Content-Length", strconv.Itoa(len(head)))
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	s.mu.Lock()
	s.respBytes = len(head) + len(tail)
	s.mu.Unlock()
	w.Write(append(head, tail...))
}

// testJSONData reads INT32 or BYTES JSON data, nested or flat.
func testJSONData(datatype string, data json.RawMessage) ([]byte, error) {
	switch datatype {
	case "INT32":
		var v []int32
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("INT32 data: %w", err)
		}
		return PutInt32s(v), nil
	case "BYTES":
		var v []string
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("BYTES data: %w", err)
		}
		elems := make([][]byte, len(v))
		for i, e := range v {
			elems[i] = []byte(e)
		}
		return kserve.EncodeBytes(elems), nil
	}
	return nil, fmt.Errorf("test server reads no %s JSON data", datatype)
}

func (s *httpTestServer) last() ([]byte, http.Header, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body, s.header, s.respBytes
}

func dialHTTP(t testing.TB, url string, o Options) Client {
	t.Helper()
	c, err := Dial(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestHTTPServerAndModelEndpoints(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	ctx := context.Background()

	if live, err := c.ServerLive(ctx); err != nil || !live {
		t.Errorf("ServerLive = %v, %v; want true", live, err)
	}
	if ready, err := c.ServerReady(ctx); err != nil || ready {
		t.Errorf("ServerReady = %v, %v; want false from an empty 400", ready, err)
	}
	md, err := c.ServerMetadata(ctx)
	if err != nil || md.GetName() != "triton" || len(md.GetExtensions()) != 2 {
		t.Errorf("ServerMetadata = %v, %v", md, err)
	}
	for model, want := range map[string]bool{"simple": true, "loading": false} {
		if ready, err := c.ModelReady(ctx, model, "1"); err != nil || ready != want {
			t.Errorf("ModelReady(%s) = %v, %v; want %v", model, ready, err, want)
		}
	}
	mmd, err := c.ModelMetadata(ctx, "simple", "")
	if err != nil || len(mmd.GetOutputs()) != 2 || fmt.Sprint(mmd.GetInputs()[0].GetShape()) != "[1 16]" {
		t.Errorf("ModelMetadata = %v, %v", mmd, err)
	}
	cfg, err := c.ModelConfig(ctx, "simple", "")
	if err != nil || !proto.Equal(cfg, simpleConfig()) {
		t.Errorf("ModelConfig = %v, %v", cfg, err)
	}
	for _, model := range []string{"simple", ""} {
		st, err := c.ModelStatistics(ctx, model, "")
		if err != nil || !proto.Equal(st, simpleStats()) {
			t.Errorf("ModelStatistics(%q) = %v, %v", model, st, err)
		}
	}
	idx, err := c.RepositoryIndex(ctx, true)
	if err != nil || len(idx) != 1 || idx[0].GetVersion() != "1" || idx[0].GetState() != "READY" {
		t.Errorf("RepositoryIndex(ready) = %v, %v", idx, err)
	}
	if s.indexBody != `{"ready":true}` {
		t.Errorf("index request body %q", s.indexBody)
	}
	if idx, err := c.RepositoryIndex(ctx, false); err != nil || len(idx) != 2 || idx[0].GetVersion() != "" {
		t.Errorf("RepositoryIndex(all) = %v, %v", idx, err)
	}
}

func TestHTTPInferBinary(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	req := simpleRequest(5)
	req.ID = "b-1"
	r, err := c.Infer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkSimpleOutputs(t, r, 5)
	if r.ID != "b-1" || r.Model != "simple" || r.Version != "1" {
		t.Errorf("response id %q model %q version %q", r.ID, r.Model, r.Version)
	}
	body, h, _ := s.last()
	n, err := strconv.Atoi(h.Get("Inference-Header-Content-Length"))
	if err != nil || n+128 != len(body) {
		t.Fatalf("Inference-Header-Content-Length %q for a %d-byte body with 128 binary bytes", h.Get("Inference-Header-Content-Length"), len(body))
	}
	var j testInferRequest
	if err := json.Unmarshal(body[:n], &j); err != nil {
		t.Fatal(err)
	}
	if j.Parameters["binary_data_output"] != true || len(j.Outputs) != 0 {
		t.Errorf("request parameters %v outputs %v; want binary_data_output true and no outputs", j.Parameters, j.Outputs)
	}
	for _, in := range j.Inputs {
		if in.Parameters["binary_data_size"] != 64.0 || in.Data != nil {
			t.Errorf("input %s parameters %v data %s; want binary_data_size 64 and no data", in.Name, in.Parameters, in.Data)
		}
	}
}

func TestHTTPInferJSON(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	req := simpleRequest(-4)
	req.JSON = true
	r, err := c.Infer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkSimpleOutputs(t, r, -4)
	body, h, _ := s.last()
	if h.Get("Inference-Header-Content-Length") != "" || h.Get("Content-Type") != "application/json" {
		t.Errorf("JSON request headers %v", h)
	}
	var j testInferRequest
	if err := json.Unmarshal(body, &j); err != nil {
		t.Fatal(err)
	}
	if string(j.Inputs[0].Data) != "[-4,-3,-2,-1,0,1,2,3,4,5,6,7,8,9,10,11]" || j.Parameters != nil {
		t.Errorf("INPUT0 data %s parameters %v", j.Inputs[0].Data, j.Parameters)
	}
}

func TestHTTPBytesRoundTrip(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	words := [][]byte{[]byte("hello"), {}, []byte("wörld")}
	for _, asJSON := range []bool{false, true} {
		req := &InferRequest{Model: "identity", JSON: asJSON, Outputs: []string{"OUTPUT0"},
			Inputs: []Tensor{{Name: "INPUT0", Datatype: "BYTES", Shape: []int64{3}, Data: kserve.EncodeBytes(words)}}}
		r, err := c.Infer(context.Background(), req)
		if err != nil {
			t.Fatalf("JSON %v: %v", asJSON, err)
		}
		out, _ := r.Output("OUTPUT0")
		if !bytes.Equal(out.Data, kserve.EncodeBytes(words)) || out.Datatype != "BYTES" {
			t.Errorf("JSON %v: OUTPUT0 %s % x", asJSON, out.Datatype, out.Data)
		}
		body, _, _ := s.last()
		wantOut := `"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]`
		if asJSON {
			wantOut = `"outputs":[{"name":"OUTPUT0"}]`
		}
		if !bytes.Contains(body, []byte(wantOut)) {
			t.Errorf("JSON %v: request %q lacks %s", asJSON, body, wantOut)
		}
	}
}

func TestHTTPJSONRefusesHalfFloats(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	for _, dt := range []string{"FP16", "BF16"} {
		req := &InferRequest{Model: "identity", JSON: true, Inputs: []Tensor{{Name: "X", Datatype: dt, Shape: []int64{2}, Data: make([]byte, 4)}}}
		_, err := c.Prepare(req)
		if err == nil || !strings.Contains(err.Error(), dt+", which Triton does not accept as JSON") {
			t.Errorf("%s as JSON: error %v", dt, err)
		}
	}
	short := &InferRequest{Model: "simple", JSON: true, Inputs: []Tensor{{Name: "X", Datatype: "INT32", Shape: []int64{4}, Data: make([]byte, 8)}}}
	if _, err := c.Prepare(short); err == nil || !strings.Contains(err.Error(), "needs 16") {
		t.Errorf("short JSON input: error %v", err)
	}
}

func TestHTTPPrepareSendSendsWhatInferSends(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	ctx := context.Background()
	for _, asJSON := range []bool{false, true} {
		req := simpleRequest(9)
		req.JSON = asJSON
		req.Parameters = map[string]any{"priority": 1, "sequence_id": "s", "sequence_start": true}
		if _, err := c.Infer(ctx, req); err != nil {
			t.Fatal(err)
		}
		inferBody, inferHeader, _ := s.last()
		p := mustPrepare(t, c, req)
		for range 2 {
			n, err := c.Send(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			body, h, respBytes := s.last()
			if !bytes.Equal(body, inferBody) || h.Get("Inference-Header-Content-Length") != inferHeader.Get("Inference-Header-Content-Length") ||
				h.Get("Content-Type") != inferHeader.Get("Content-Type") {
				t.Fatalf("JSON %v: Send sent %q with %v; Infer sent %q with %v", asJSON, body, h, inferBody, inferHeader)
			}
			if n != respBytes || n == 0 {
				t.Errorf("JSON %v: Send size %d; server wrote %d", asJSON, n, respBytes)
			}
		}
		if p.Size() != len(inferBody) {
			t.Errorf("Prepared.Size %d; body is %d bytes", p.Size(), len(inferBody))
		}
	}
}

func TestHTTPConcurrentSends(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{Connections: 2, Headers: map[string]string{"x-k": "v"}})
	p := mustPrepare(t, c, simpleRequest(2))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := c.Send(context.Background(), p); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHTTPOutputsByName(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	req := simpleRequest(0)
	req.Outputs = []string{"OUTPUT1"}
	r, err := c.Infer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Outputs) != 1 || r.Outputs[0].Name != "OUTPUT1" || Int32s(r.Outputs[0].Data)[3] != 2 {
		t.Errorf("outputs %+v; want OUTPUT1 only", r.Outputs)
	}
	body, _, _ := s.last()
	if bytes.Contains(body, []byte("binary_data_output")) {
		t.Errorf("request with named outputs also set binary_data_output: %q", body)
	}
}

func TestHTTPErrorsMapToError(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{})
	ctx := context.Background()
	bad := simpleRequest(0)
	bad.Model = "nope"
	_, inferErr := c.Infer(ctx, bad)
	_, sendErr := c.Send(ctx, mustPrepare(t, c, bad))
	_, cfgErr := c.ModelConfig(ctx, "nope", "")
	_, readyErr := c.ModelReady(ctx, "nope", "")
	want := Error{Code: codes.NotFound, HTTPStatus: 404, Message: unknownModel("nope")}
	for name, err := range map[string]error{"Infer": inferErr, "Send": sendErr, "ModelConfig": cfgErr, "ModelReady": readyErr} {
		var te *Error
		if !errors.As(err, &te) || *te != want {
			t.Errorf("%s error = %#v; want %#v", name, err, want)
		}
	}
	if got := sendErr.Error(); got != "HTTP 404: "+unknownModel("nope") {
		t.Errorf("error text %q", got)
	}
	shape := simpleRequest(0)
	shape.Inputs[1].Shape = []int64{16}
	if _, err := c.Infer(ctx, shape); ErrorCode(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "HTTP 400: unexpected shape") {
		t.Errorf("bad shape error = %v", err)
	}
	proxied := simpleRequest(0)
	proxied.Model = "broken"
	_, err := c.Infer(ctx, proxied)
	if te := (*Error)(nil); !errors.As(err, &te) || te.HTTPStatus != 502 || te.Code != codes.Unknown || te.Message != "upstream connect error" {
		t.Errorf("plain-text 502 error = %#v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Send(cctx, mustPrepare(t, c, simpleRequest(0))); !errors.Is(err, context.Canceled) {
		t.Errorf("Send on a cancelled context = %v; want context.Canceled", err)
	}
	g := dialGRPCForeign(t)
	if _, err := c.Send(ctx, mustPrepare(t, g, simpleRequest(0))); err == nil || !strings.Contains(err.Error(), "another protocol") {
		t.Errorf("Send of a gRPC-prepared request over HTTP = %v", err)
	}
}

// dialGRPCForeign returns a gRPC client only for its Prepare.
func dialGRPCForeign(t *testing.T) Client {
	return dialGRPC(t, startGRPCServer(t).addr, Options{})
}

func TestHTTPHeadersAndStreaming(t *testing.T) {
	s := startHTTPServer(t)
	c := dialHTTP(t, s.URL, Options{Headers: map[string]string{"x-api-key": "secret"}})
	if _, err := c.Send(context.Background(), mustPrepare(t, c, simpleRequest(0))); err != nil {
		t.Fatal(err)
	}
	if _, h, _ := s.last(); h.Get("X-Api-Key") != "secret" || h.Get("Accept-Encoding") != "" {
		t.Errorf("infer headers %v; want X-Api-Key and no Accept-Encoding", h)
	}
	if _, err := c.ServerLive(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, h, _ := s.last(); h.Get("X-Api-Key") != "secret" {
		t.Errorf("health headers %v; want X-Api-Key", h)
	}
	if _, err := c.OpenStream(context.Background()); err == nil || !strings.Contains(err.Error(), "needs gRPC") {
		t.Errorf("OpenStream over HTTP = %v", err)
	}
}

func TestHTTPDialNotTriton(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := Dial(context.Background(), srv.URL, Options{})
	if err == nil || !strings.Contains(err.Error(), "answered HTTP 404 to GET /v2/health/live") {
		t.Errorf("Dial to a non-Triton HTTP server: %v", err)
	}
}
