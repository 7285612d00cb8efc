package sim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// FuzzHTTPInferBody feeds arbitrary infer bodies (JSON part plus binary
// part) to the HTTP infer endpoint of every test model: whatever the body,
// the answer is a status with a body, never a panic, and a rejected
// request gets a JSON error.
func FuzzHTTPInferBody(f *testing.F) {
	i32 := string(triton.PutInt32s(make([]int32, 16)))
	seeds := []struct {
		model, json, bin string
		hdr              int // Inference-Header-Content-Length: -1 none, -2 the JSON length
	}{
		{"simple", `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, i32 + i32, -2},
		{"nobatch", `{"id":"x","inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[[1,2,3],[4,5,6]]}],"parameters":{"binary_data_output":true}}`, "", -1},
		{"strings", `{"inputs":[{"name":"TEXT","shape":[1,2],"datatype":"BYTES","data":["a","bc"]}]}`, "", -1},
		{"strings", `{"inputs":[{"name":"TEXT","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":7}}]}`, "\x03\x00\x00\x00abc", -2},
		{"batched", "", "\x00\x00\x80\x3f\x00\x00\x00\x40", 0},
		{"simple", `{"inputs":[{"name":"INPUT0","shape":[-1,16],"datatype":"INT32","data":[1]}]}`, "", -1},
		{"nobatch", `{"inputs":[{"name":"X","shape":[9223372036854775807,3],"datatype":"FP32","data":[]}]}`, "", -1},
		{"simple", `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":-5}}]}`, "", -2},
		{"strings", `{"inputs":[{"name":"TEXT","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":4}}]}`, "\xff\xff\xff\xff", -2},
	}
	for _, s := range seeds {
		f.Add(s.model, []byte(s.json), []byte(s.bin), s.hdr)
	}
	e := engNew(f, testRepository(), EngineOptions{})
	h := newHTTPHandler(e, &settingsStore{}, HTTPLimits{}, newMemBudget(1<<30))
	f.Fuzz(func(t *testing.T, model string, jsonPart, bin []byte, hdr int) {
		switch model {
		case "simple", "nobatch", "strings", "batched":
		default:
			model = "simple"
		}
		body := append(append([]byte{}, jsonPart...), bin...)
		req := httptest.NewRequest(http.MethodPost, "/v2/models/"+model+"/infer", bytes.NewReader(body))
		switch {
		case hdr == -2:
			req.Header.Set(kserve.HeaderContentLength, strconv.Itoa(len(jsonPart)))
		case hdr >= 0:
			req.Header.Set(kserve.HeaderContentLength, strconv.Itoa(hdr))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK && !bytes.HasPrefix(w.Body.Bytes(), []byte(`{"error":`)) {
			t.Fatalf("status %d with body %q", w.Code, w.Body.Bytes())
		}
	})
}

// FuzzHTTPTextBody feeds arbitrary bodies to the LLM's text endpoints
// (generate, generate_stream, chat and completions): whatever the body,
// the answer is a status with Triton's or OpenAI's error, or a success,
// never a panic or a hang.
func FuzzHTTPTextBody(f *testing.F) {
	for _, s := range []struct {
		path, body string
	}{
		{"/v2/models/llm/generate", `{"text_input":"a b","max_tokens":3,"stream":false}`},
		{"/v2/models/llm/generate_stream", `{"text_input":"a","max_tokens":2,"stream":true,"parameters":{"min_tokens":4}}`},
		{"/v2/models/llm/generate", `{"text_input":["a","b"],"max_tokens":[1,2],"stream":true,"parameters":{"x":[1]}}`},
		{"/v1/chat/completions", `{"model":"llm","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/completions", `{"model":"llm","prompt":["a"],"max_tokens":2,"min_tokens":99999999999}`},
		{"/v1/completions", `{"model":"llm","prompt":3}`},
	} {
		f.Add(s.path, []byte(s.body))
	}
	m := llmTestModel("llm", 3, func(m *ModelSpec) { m.LLM.PrefillUS, m.LLM.TokenUS, m.LLM.TokenPerSequenceUS = 0, 1, 0 })
	e := engNew(f, Repository{Models: []ModelSpec{m}}, EngineOptions{})
	h := newHTTPHandler(e, &settingsStore{}, HTTPLimits{}, newMemBudget(1<<30))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		switch path {
		case "/v2/models/llm/generate", "/v2/models/llm/generate_stream", "/v1/chat/completions", "/v1/completions":
		default:
			path = "/v1/completions"
		}
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK && !bytes.HasPrefix(w.Body.Bytes(), []byte(`{"error":`)) && !bytes.HasPrefix(w.Body.Bytes(), []byte(`data: {"error":`)) {
			t.Fatalf("status %d with body %q", w.Code, w.Body.Bytes())
		}
	})
}
