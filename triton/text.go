package triton

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// Endpoint names the HTTP API that a load run's inference requests go to:
// KServe's tensors (infer), or text for an LLM through Triton's generate
// extension or its OpenAI-compatible frontend.
type Endpoint string

// The endpoints.
const (
	// EndpointInfer is POST /v2/models/NAME/infer with tensors (or gRPC).
	EndpointInfer Endpoint = "infer"
	// EndpointGenerate is POST /v2/models/NAME/generate: one JSON answer.
	EndpointGenerate Endpoint = "generate"
	// EndpointGenerateStream is POST /v2/models/NAME/generate_stream: a
	// server-sent event per response.
	EndpointGenerateStream Endpoint = "generate_stream"
	// EndpointChat is the OpenAI-compatible POST /v1/chat/completions.
	EndpointChat Endpoint = "chat"
	// EndpointCompletions is the OpenAI-compatible POST /v1/completions.
	EndpointCompletions Endpoint = "completions"
)

// Endpoints lists the endpoints by name, infer first.
var Endpoints = []Endpoint{EndpointInfer, EndpointGenerate, EndpointGenerateStream, EndpointChat, EndpointCompletions}

// ParseEndpoint parses an endpoint name; empty is EndpointInfer.
func ParseEndpoint(s string) (Endpoint, error) {
	if s == "" {
		return EndpointInfer, nil
	}
	for _, e := range Endpoints {
		if string(e) == s {
			return e, nil
		}
	}
	names := make([]string, len(Endpoints))
	for i, e := range Endpoints {
		names[i] = string(e)
	}
	return "", fmt.Errorf("unknown endpoint %s: use %s", textsafe.Quote(s), strings.Join(names, ", "))
}

// Text reports whether the endpoint takes text rather than tensors.
func (e Endpoint) Text() bool { return e != "" && e != EndpointInfer }

// Streams reports whether requests to the endpoint stream their responses
// as server-sent events: generate_stream always, the OpenAI endpoints when
// asked to (stream).
func (e Endpoint) Streams(stream bool) bool {
	switch e {
	case EndpointGenerateStream:
		return true
	case EndpointChat, EndpointCompletions:
		return stream
	}
	return false
}

// Path is the endpoint's path for a model.
func (e Endpoint) Path(model, version string) string {
	switch e {
	case EndpointChat:
		return "/v1/chat/completions"
	case EndpointCompletions:
		return "/v1/completions"
	case EndpointGenerate, EndpointGenerateStream:
		return modelPath(model, version) + "/" + string(e)
	}
	return modelPath(model, version) + "/infer"
}

// textEndpoint is how an HTTP client sends a text endpoint's requests.
type textEndpoint struct {
	kind   Endpoint
	base   string // scheme://host:port of the endpoint's server
	stream bool   // the OpenAI endpoints' "stream": true
}

// textPrepared is a text endpoint's request, its JSON body made once.
type textPrepared struct {
	url    string
	body   []byte
	header http.Header
	stream bool
}

// Size implements Prepared.
func (p *textPrepared) Size() int { return len(p.body) }

// prepareText makes the request's body for the client's text endpoint: the
// prompt from the BYTES input text_input, max_tokens from the integer
// input of that name, the request parameters (--request-parameter) as the
// endpoint's fields (generate's "parameters", the OpenAI body's top
// level), and the endpoint's stream flag (with stream_options.include_usage
// for OpenAI, so that the server counts the tokens).
func (c *httpClient) prepareText(req *InferRequest) (*textPrepared, error) {
	t := c.text
	if req == nil || req.Model == "" {
		return nil, fmt.Errorf("%s request needs a model name", t.kind)
	}
	prompt, maxTokens, ok := "", int64(-1), false
	for _, in := range req.Inputs {
		switch in.Name {
		case LLMTextInput:
			elems, err := kserve.DecodeBytes(in.Data, 1)
			if err != nil || len(elems) == 0 {
				return nil, fmt.Errorf("%s request for %s: input %s is not one BYTES element", t.kind, textsafe.Quote(req.Model), LLMTextInput)
			}
			prompt, ok = string(elems[0]), true
		case LLMMaxTokens:
			if v, isInt := readIntTensor(in); isInt {
				maxTokens = v
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("endpoint %s sends text: model %s has no BYTES input %s to take the prompt from", t.kind, textsafe.Quote(req.Model), textsafe.Quote(LLMTextInput))
	}
	if v, isInt := req.Parameters[LLMMaxTokens].(int64); isInt {
		maxTokens = v
	}
	stream := t.kind.Streams(t.stream)
	body := map[string]any{}
	switch t.kind {
	case EndpointGenerate, EndpointGenerateStream:
		body[LLMTextInput] = prompt
		body[LLMStream] = stream
		if maxTokens >= 0 {
			body[LLMMaxTokens] = maxTokens
		}
		params := map[string]any{}
		for k, v := range req.Parameters {
			if _, top := body[k]; !top {
				params[k] = v
			}
		}
		if len(params) > 0 {
			body["parameters"] = params
		}
	default:
		for k, v := range req.Parameters {
			body[k] = v
		}
		body["model"] = req.Model
		if t.kind == EndpointChat {
			body["messages"] = []map[string]string{{"role": "user", "content": prompt}}
		} else {
			body["prompt"] = prompt
		}
		body[LLMStream] = stream
		if stream {
			body["stream_options"] = map[string]bool{"include_usage": true}
		}
		if maxTokens >= 0 {
			body[LLMMaxTokens] = maxTokens
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s request for %s: %w", t.kind, textsafe.Quote(req.Model), err)
	}
	h := c.header.Clone()
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return &textPrepared{url: t.base + t.kind.Path(req.Model, req.Version), body: b, header: h, stream: stream}, nil
}

// readIntTensor reads the one element of an integer tensor.
func readIntTensor(t Tensor) (int64, bool) {
	le := binary.LittleEndian
	switch {
	case t.Datatype == "INT32" && len(t.Data) >= 4:
		return int64(int32(le.Uint32(t.Data))), true
	case t.Datatype == "INT64" && len(t.Data) >= 8:
		return int64(le.Uint64(t.Data)), true
	case t.Datatype == "UINT32" && len(t.Data) >= 4:
		return int64(le.Uint32(t.Data)), true
	case t.Datatype == "INT16" && len(t.Data) >= 2:
		return int64(int16(le.Uint16(t.Data))), true
	}
	return 0, false
}

// postText posts a text request.
func (c *httpClient) postText(ctx context.Context, p *textPrepared) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(p.body))
	if err != nil {
		return nil, fmt.Errorf("%s request: %w", c.text.kind, err)
	}
	req.Header = p.header
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("POST %s: %w", p.url, err)
	}
	return resp, nil
}

// sendText sends a request that is answered in one body.
func (c *httpClient) sendText(ctx context.Context, p *textPrepared) (int, error) {
	resp, err := c.postText(ctx, p)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return 0, textError(resp.StatusCode, b)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("read %s response: %w", c.text.kind, err)
	}
	return int(n), nil
}

// textError is the *Error of an error body of the generate extension
// ({"error": "..."}) or of OpenAI's API ({"error": {"message": ...}}, or
// FastAPI's {"detail": ...}), with the status's code.
func textError(status int, body []byte) *Error {
	msg, code := textErrorMessage(body)
	if msg == "" {
		if s := strings.TrimSpace(string(body)); s != "" {
			msg = oneLine(s)
		} else {
			msg = http.StatusText(status)
		}
	}
	if code == 0 {
		code = status
	}
	c := kserve.CodeForHTTPStatus(code)
	if c == codes.OK {
		c = codes.Unknown
	}
	return &Error{Code: c, HTTPStatus: status, Message: msg}
}

// textErrorMessage reads an error object's message and, when it has one,
// its numeric code; "" when body is no error object.
func textErrorMessage(body []byte) (string, int) {
	var e struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", 0
	}
	var s string
	if len(e.Error) > 0 {
		if json.Unmarshal(e.Error, &s) == nil {
			return s, 0
		}
		var o struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(e.Error, &o) == nil && o.Message != "" {
			code, _ := o.Code.(float64)
			return o.Message, int(code)
		}
	}
	if len(e.Detail) > 0 {
		if json.Unmarshal(e.Detail, &s) == nil {
			return s, 0
		}
		return oneLine(string(e.Detail)), 0
	}
	return "", 0
}
