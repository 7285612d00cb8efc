package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// openAI answers the routes of Triton's OpenAI-compatible frontend, on the
// simulator's HTTP port (Triton runs that frontend as its own process,
// port 9000 by default): GET /v1/models, /v1/models/ID, POST
// /v1/chat/completions and /v1/completions, each with OpenAI's bodies, its
// chunks and "data: [DONE]" when streaming, usage (the last chunk's with
// stream_options.include_usage) counted in the model's own tokens, and
// OpenAI's error object.
func (h *httpHandler) openAI(w http.ResponseWriter, r *http.Request, path string) {
	switch {
	case path == "/v1/models":
		if openAIMethod(w, r, http.MethodGet) {
			h.openAIModels(w, "")
		}
	case strings.HasPrefix(path, "/v1/models/"):
		if openAIMethod(w, r, http.MethodGet) {
			h.openAIModels(w, strings.TrimPrefix(path, "/v1/models/"))
		}
	case path == "/v1/chat/completions":
		if openAIMethod(w, r, http.MethodPost) {
			h.completion(w, r, true)
		}
	case path == "/v1/completions":
		if openAIMethod(w, r, http.MethodPost) {
			h.completion(w, r, false)
		}
	default:
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "Not Found: "+path)
	}
}

func openAIMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	writeOpenAIError(w, http.StatusMethodNotAllowed, "invalid_request_error", "Method Not Allowed")
	return false
}

// openAIErrorBody is OpenAI's error object.
type openAIErrorBody struct {
	Error openAIError `json:"error"`
}

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *int    `json:"code"`
}

func openAIErrorJSON(status int, kind, msg string) []byte {
	return marshal(openAIErrorBody{Error: openAIError{Message: msg, Type: kind, Code: &status}})
}

// writeOpenAIErr answers err as OpenAI's API would.
func writeOpenAIErr(w http.ResponseWriter, err error) {
	status, kind, msg := openAIStatus(err)
	writeOpenAIError(w, status, kind, msg)
}

func writeOpenAIError(w http.ResponseWriter, status int, kind, msg string) {
	writeBody(w, status, "application/json", openAIErrorJSON(status, kind, msg))
}

// openAIStatus is the status, error type and message OpenAI's API answers
// err with.
func openAIStatus(err error) (int, string, string) {
	var te *kserve.Error
	if errors.As(err, &te) {
		if te.Code == codes.ResourceExhausted {
			return http.StatusServiceUnavailable, "server_error", te.Message
		}
		if s := kserve.HTTPStatusFor(te.Code); s < 500 {
			return s, "invalid_request_error", te.Message
		}
		return kserve.HTTPStatusFor(te.Code), "server_error", te.Message
	}
	return http.StatusInternalServerError, "server_error", err.Error()
}

type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// openAIModels lists the ready models, or describes one.
func (h *httpHandler) openAIModels(w http.ResponseWriter, id string) {
	created := time.Now().Unix()
	var list []openAIModel
	for _, m := range h.engine.RepositoryIndex(true) {
		if id != "" && m.GetName() != id {
			continue
		}
		list = append(list, openAIModel{ID: m.GetName(), Object: "model", Created: created, OwnedBy: "Triton Inference Server"})
	}
	if id != "" {
		if len(list) == 0 {
			writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("The model `%s` does not exist", textsafe.Bound(id)))
			return
		}
		writeJSON(w, http.StatusOK, list[0])
		return
	}
	if list == nil {
		list = []openAIModel{}
	}
	writeJSON(w, http.StatusOK, struct {
		Object string        `json:"object"`
		Data   []openAIModel `json:"data"`
	}{"list", list})
}

// completionRequest is the body of /v1/chat/completions (Messages) and
// /v1/completions (Prompt), the fields the simulator reads.
type completionRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           *int            `json:"min_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// prompt is the request's text: the prompt, or the messages' contents one
// per line.
func (c *completionRequest) prompt(chat bool) (string, error) {
	var parts []string
	if !chat {
		if len(c.Prompt) == 0 {
			return "", errors.New("'prompt' is required")
		}
		var s string
		if json.Unmarshal(c.Prompt, &s) == nil {
			return s, nil
		}
		if json.Unmarshal(c.Prompt, &parts) != nil || len(parts) != 1 {
			return "", errors.New("'prompt' must be a string or a list of one string")
		}
		return parts[0], nil
	}
	if len(c.Messages) == 0 {
		return "", errors.New("'messages' is required")
	}
	for _, m := range c.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			parts = append(parts, s)
			continue
		}
		var pieces []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &pieces) != nil {
			return "", errors.New("a message's 'content' must be a string or a list of text parts")
		}
		for _, p := range pieces {
			if p.Type == "text" {
				parts = append(parts, p.Text)
			}
		}
	}
	return strings.Join(parts, "\n"), nil
}

// completionChunk is a completion, a streamed chunk of one, or the last
// chunk with usage.
type completionChunk struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *completionUsage   `json:"usage,omitempty"`
}

type completionChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatMessage `json:"delta,omitempty"`
	Text         *string      `json:"text,omitempty"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type chatMessage struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type completionUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// completion answers a chat completion (chat) or a completion.
func (h *httpHandler) completion(w http.ResponseWriter, r *http.Request, chat bool) {
	hold := newBudgetHold(h.budget)
	defer hold.close()
	body, err := h.readBody(r, hold)
	if err == nil {
		err = hold.grow(jsonValuesCost(body))
	}
	if err != nil {
		writeOpenAIErr(w, err)
		return
	}
	var cr completionRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&cr); err != nil {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	prompt, err := cr.prompt(chat)
	if err != nil {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if cr.Model == "" {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "'model' is required")
		return
	}
	mv, err := h.engine.readyVersion(cr.Model, "")
	if err != nil {
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("The model `%s` does not exist", textsafe.Bound(cr.Model)))
		return
	}
	if _, ok := mv.model.inputIdx[llmTextInput]; !ok {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error",
			fmt.Sprintf("model `%s` has no BYTES input %q: it takes no text", textsafe.Bound(cr.Model), llmTextInput))
		return
	}
	maxTokens := cr.MaxTokens
	if cr.MaxCompletionTokens != nil {
		maxTokens = cr.MaxCompletionTokens
	}
	values := map[string]any{llmTextInput: prompt}
	if _, ok := mv.model.inputIdx[llmStream]; ok {
		values[llmStream] = cr.Stream
	}
	if maxTokens != nil && *maxTokens < 1 {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("max_tokens %d must be at least 1", *maxTokens))
		return
	}
	if _, ok := mv.model.inputIdx[llmMaxTokens]; ok || maxTokens != nil {
		// Without max_tokens the model's own length decides, as a chat
		// completion's default is no limit.
		n := math.MaxInt32
		if maxTokens != nil {
			n = *maxTokens
		}
		values[llmMaxTokens] = float64(n)
	}
	if cr.MinTokens != nil {
		values[llmMinTokens] = float64(*cr.MinTokens)
	}
	req, err := textRequest(mv, values)
	if err != nil {
		writeOpenAIErr(w, err)
		return
	}
	call := newLLMCall()
	ir, err := h.engine.submit(req, true, call.completed, call.responded, budgetShare{})
	if err != nil {
		writeOpenAIErr(w, err)
		return
	}
	c := completionChunk{ID: fmt.Sprintf("cmpl-%016x", rand.Uint64()), Created: time.Now().Unix(), Model: cr.Model}
	usage := completionUsage{PromptTokens: countTokens([]byte(prompt))}
	finish := func() *string {
		s := "stop"
		if maxTokens != nil && usage.CompletionTokens >= *maxTokens {
			s = "length"
		}
		return &s
	}
	if !cr.Stream {
		var texts []string
		for {
			got, done, err := call.next(r.Context(), ir)
			texts = append(texts, got...)
			if !done {
				continue
			}
			if err != nil {
				writeOpenAIErr(w, err)
				return
			}
			break
		}
		text := strings.Join(texts, " ")
		usage.CompletionTokens = countTokens([]byte(text))
		usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
		choice := completionChoice{FinishReason: finish()}
		if chat {
			c.Object = "chat.completion"
			choice.Message = &chatMessage{Role: "assistant", Content: &text}
		} else {
			c.Object = "text_completion"
			choice.Text = &text
		}
		c.Choices = []completionChoice{choice}
		c.Usage = &usage
		writeJSON(w, http.StatusOK, c)
		return
	}
	c.Object = "text_completion"
	if chat {
		c.Object = "chat.completion.chunk"
	}
	sse := &sseWriter{w: w}
	sse.f, _ = w.(http.Flusher)
	send := func(choice completionChoice) bool {
		c.Choices = []completionChoice{choice}
		if sse.data(marshal(c)) != nil {
			ir.version.sched.cancel(ir)
			return false
		}
		return true
	}
	piece := func(text string, final *string) completionChoice {
		if chat {
			return completionChoice{Delta: &chatMessage{Content: &text}, FinishReason: final}
		}
		return completionChoice{Text: &text, FinishReason: final}
	}
	if chat {
		// As Triton's frontend does, the first chunk gives the role.
		empty := ""
		if !send(completionChoice{Delta: &chatMessage{Role: "assistant", Content: &empty}}) {
			return
		}
	}
	for {
		texts, done, err := call.next(r.Context(), ir)
		if r.Context().Err() != nil {
			return
		}
		for i, t := range texts {
			if usage.CompletionTokens > 0 {
				t = " " + t
			}
			usage.CompletionTokens++
			var final *string
			if done && err == nil && i == len(texts)-1 {
				final = finish()
			}
			if !send(piece(t, final)) {
				return
			}
		}
		if !done {
			continue
		}
		if err != nil {
			status, kind, msg := openAIStatus(err)
			_ = sse.data(openAIErrorJSON(status, kind, msg))
			_ = sse.data([]byte("[DONE]"))
			return
		}
		if len(texts) == 0 && !send(piece("", finish())) {
			return
		}
		if cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage {
			usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
			c.Choices = []completionChoice{}
			c.Usage = &usage
			_ = sse.data(marshal(c))
		}
		_ = sse.data([]byte("[DONE]"))
		return
	}
}
