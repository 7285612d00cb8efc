package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// sseEvents splits a whole event-stream body into its data payloads.
func sseEvents(t *testing.T, body []byte) []string {
	t.Helper()
	s := string(body)
	if !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("event stream does not end with a blank line: %q", s)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		d, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event %q is not a data line", ev)
		}
		out = append(out, d)
	}
	return out
}

// lastLLMRecord is the LLM model's account of its latest request.
func lastLLMRecord(t *testing.T, s *Server, model string) LLMRequest {
	t.Helper()
	st, err := s.Engine().LLMStats(model)
	if err != nil || len(st.Requests) == 0 {
		t.Fatalf("LLMStats = %+v, %v", st, err)
	}
	return st.Requests[len(st.Requests)-1]
}

func TestHTTPGenerateStreamOneEventPerToken(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 20, nil)}}, EngineOptions{})
	url := "http://" + s.HTTPAddr() + "/v2/models/llm/generate_stream"
	status, h, body := httpDo(t, http.MethodPost, url, []byte(`{"text_input": "one two three", "max_tokens": 5, "parameters": {"temperature": 0.5, "stream": true}}`), nil)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q: %s", status, h.Get("Content-Type"), body)
	}
	events := sseEvents(t, body)
	rec := lastLLMRecord(t, s, "llm")
	if len(events) != 5 || rec.Tokens != 5 || rec.Responses != 5 || rec.PromptTokens != 3 || !rec.Stream {
		t.Fatalf("%d events, record %+v: %q", len(events), rec, events)
	}
	for i, ev := range events {
		var g generateResponse
		if err := json.Unmarshal([]byte(ev), &g); err != nil || g.ModelName != "llm" || g.ModelVersion != "1" || g.TextOutput != tokenWords[i] {
			t.Fatalf("event %d = %q (%v)", i, ev, err)
		}
	}
}

func TestHTTPGenerateOneObject(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 4, nil)}}, EngineOptions{})
	url := "http://" + s.HTTPAddr() + "/v2/models/llm/versions/1/generate"
	status, h, body := httpDo(t, http.MethodPost, url, []byte(`{"text_input": "hello there", "max_tokens": 10, "parameters": {"stream": false}}`), nil)
	var g generateResponse
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" || json.Unmarshal(body, &g) != nil {
		t.Fatalf("status %d, %q: %s", status, h.Get("Content-Type"), body)
	}
	if g.TextOutput != "the model says a" {
		t.Fatalf("text_output %q", g.TextOutput)
	}
	if rec := lastLLMRecord(t, s, "llm"); rec.Tokens != 4 || rec.Stream || rec.MaxTokens != 10 {
		t.Fatalf("record %+v", rec)
	}
}

func TestHTTPGenerateErrors(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 4, nil)}}, EngineOptions{})
	base := "http://" + s.HTTPAddr() + "/v2/models/"
	for _, c := range []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"unknown model", "nope/generate", `{"text_input": "x"}`, 404, "Request for unknown model: 'nope' is not found"},
		{"not JSON", "llm/generate_stream", `{"text_input": `, 400, "failed to parse the request JSON buffer"},
		{"parameters not an object", "llm/generate", `{"text_input": "x", "parameters": 3}`, 400, "Expected JSON object for keyword: 'parameters'"},
		{"wrong input type", "llm/generate", `{"text_input": 7}`, 400, "expected string for input 'text_input'"},
		{"GET", "llm/generate", ``, 405, "Method Not Allowed"},
	} {
		method := http.MethodPost
		if c.name == "GET" {
			method = http.MethodGet
		}
		status, h, body := httpDo(t, method, base+c.path, []byte(c.body), nil)
		var e struct{ Error string }
		if status != c.status || h.Get("Content-Type") != "application/json" || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s: status %d %q, body %s; want %d with %q", c.name, status, h.Get("Content-Type"), body, c.status, c.msg)
		}
	}
	// A request the model fails after it began gets the error as an event.
	s.Engine().SetFaults(Faults{ErrorRate: 1})
	status, h, body := httpDo(t, http.MethodPost, base+"llm/generate_stream", []byte(`{"text_input": "x", "max_tokens": 3, "stream": true}`), nil)
	events := sseEvents(t, body)
	if status != http.StatusInternalServerError || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") ||
		len(events) != 1 || events[0] != `{"error":"`+simulatedFailure+`"}` {
		t.Fatalf("status %d %q: %q", status, h.Get("Content-Type"), events)
	}
}

// chunk is the part of an OpenAI chunk the tests read.
type chunk struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta *struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *completionUsage `json:"usage"`
}

func TestHTTPChatCompletionsStreamWithUsage(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 20, nil)}}, EngineOptions{})
	url := "http://" + s.HTTPAddr() + "/v1/chat/completions"
	req := `{"model": "llm", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "say six words"}]}],
		"max_tokens": 6, "stream": true, "stream_options": {"include_usage": true}}`
	status, h, body := httpDo(t, http.MethodPost, url, []byte(req), nil)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %q: %s", status, h.Get("Content-Type"), body)
	}
	events := sseEvents(t, body)
	// The role, six tokens, the usage, [DONE].
	if len(events) != 9 || events[8] != "[DONE]" {
		t.Fatalf("events %q", events)
	}
	var text strings.Builder
	for i, ev := range events[:8] {
		var c chunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil || c.Object != "chat.completion.chunk" || c.Model != "llm" {
			t.Fatalf("event %d %q: %v", i, ev, err)
		}
		switch {
		case i == 0:
			if c.Choices[0].Delta.Role != "assistant" || c.Choices[0].FinishReason != nil {
				t.Fatalf("first chunk %q", ev)
			}
		case i < 7:
			text.WriteString(*c.Choices[0].Delta.Content)
			if last := c.Choices[0].FinishReason; (i == 6) != (last != nil) || last != nil && *last != "length" {
				t.Fatalf("chunk %d finish_reason: %q", i, ev)
			}
		default:
			rec := lastLLMRecord(t, s, "llm")
			if len(c.Choices) != 0 || c.Usage == nil || c.Usage.CompletionTokens != rec.Tokens || rec.Tokens != 6 ||
				c.Usage.PromptTokens != rec.PromptTokens || rec.PromptTokens != 6 || c.Usage.TotalTokens != 12 {
				t.Fatalf("usage chunk %q, record %+v", ev, rec)
			}
		}
	}
	if text.String() != "the model says a token at" {
		t.Fatalf("text %q", text.String())
	}
}

func TestHTTPCompletions(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 3, nil)}}, EngineOptions{})
	url := "http://" + s.HTTPAddr() + "/v1/completions"
	status, _, body := httpDo(t, http.MethodPost, url, []byte(`{"model": "llm", "prompt": "a b c d", "max_tokens": 50, "min_tokens": 7}`), nil)
	var c chunk
	if status != http.StatusOK || json.Unmarshal(body, &c) != nil || c.Object != "text_completion" || len(c.Choices) != 1 {
		t.Fatalf("status %d: %s", status, body)
	}
	rec := lastLLMRecord(t, s, "llm")
	if *c.Choices[0].Text != "the model says a token at a" || *c.Choices[0].FinishReason != "stop" ||
		c.Usage == nil || c.Usage.CompletionTokens != 7 || rec.Tokens != 7 || c.Usage.PromptTokens != 4 || rec.Stream {
		t.Fatalf("completion %s, record %+v", body, rec)
	}
	// Streaming without include_usage: no usage chunk.
	status, _, body = httpDo(t, http.MethodPost, url, []byte(`{"model": "llm", "prompt": ["a"], "stream": true}`), nil)
	events := sseEvents(t, body)
	if status != http.StatusOK || len(events) != 4 || events[3] != "[DONE]" || strings.Contains(string(body), "usage") {
		t.Fatalf("status %d: %q", status, events)
	}
}

func TestHTTPOpenAIModelsAndErrors(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 3, nil)}}, EngineOptions{})
	base := "http://" + s.HTTPAddr()
	status, _, body := httpDo(t, http.MethodGet, base+"/v1/models", nil, nil)
	var list struct {
		Object string        `json:"object"`
		Data   []openAIModel `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &list) != nil || list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "llm" {
		t.Fatalf("models: %d %s", status, body)
	}
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"unknown model", "POST", "/v1/chat/completions", `{"model": "gpt", "messages": [{"role": "user", "content": "hi"}]}`, 404, "The model `gpt` does not exist"},
		{"no messages", "POST", "/v1/chat/completions", `{"model": "llm"}`, 400, "'messages' is required"},
		{"bad JSON", "POST", "/v1/completions", `{`, 400, "invalid JSON body"},
		{"max_tokens 0", "POST", "/v1/completions", `{"model": "llm", "prompt": "x", "max_tokens": 0}`, 400, "max_tokens 0 must be at least 1"},
		{"GET a POST route", "GET", "/v1/completions", ``, 405, "Method Not Allowed"},
		{"unknown model by id", "GET", "/v1/models/gpt", ``, 404, "The model `gpt` does not exist"},
	} {
		status, _, body := httpDo(t, c.method, base+c.path, []byte(c.body), nil)
		var e openAIErrorBody
		if status != c.status || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, c.msg) || e.Error.Type == "" {
			t.Errorf("%s: %d %s; want %d with %q", c.name, status, body, c.status, c.msg)
		}
	}
	// A failure after the stream began is an error event, then [DONE].
	s.Engine().SetFaults(Faults{ErrorRate: 1})
	_, _, body = httpDo(t, http.MethodPost, base+"/v1/chat/completions", []byte(`{"model": "llm", "messages": [{"role": "user", "content": "hi"}], "stream": true}`), nil)
	events := sseEvents(t, body)
	var e openAIErrorBody
	if len(events) != 3 || json.Unmarshal([]byte(events[1]), &e) != nil || e.Error.Message != simulatedFailure || e.Error.Type != "server_error" || events[2] != "[DONE]" {
		t.Fatalf("events %q", events)
	}
}
