package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// generate answers Triton's generate extension, POST
// /v2/models/NAME[/versions/V]/generate and generate_stream. The body's
// keys that name model inputs become inputs, its "parameters" object's
// too, and the rest request parameters. generate answers one JSON object
// per response, written back to back once the request completes (one, for
// a model asked not to stream); generate_stream answers each response as
// a server-sent event "data: {...}\n\n" as the model makes it, and an
// error after the first response as an event {"error": "..."} (the status
// was sent with the first). A request that fails before it runs gets
// Triton's JSON error with its status.
func (h *httpHandler) generate(w http.ResponseWriter, r *http.Request, model, version string, stream bool) {
	hold := newBudgetHold(h.budget)
	defer hold.close()
	body, err := h.readBody(r, hold)
	if err == nil {
		err = hold.grow(jsonValuesCost(body))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	mv, err := h.engine.readyVersion(model, version)
	if err != nil {
		writeError(w, err)
		return
	}
	values, err := generateValues(body)
	if err != nil {
		writeError(w, err)
		return
	}
	req, err := textRequest(mv, values)
	if err != nil {
		writeError(w, err)
		return
	}
	call := newLLMCall()
	ir, err := h.engine.submit(req, true, call.completed, call.responded, budgetShare{})
	if err != nil {
		writeError(w, err)
		return
	}
	out := func(text string) []byte {
		return marshal(generateResponse{ModelName: mv.model.name, ModelVersion: mv.label, TextOutput: text})
	}
	if !stream {
		var all []byte
		for {
			texts, done, err := call.next(r.Context(), ir)
			for _, t := range texts {
				all = append(all, out(t)...)
			}
			if !done {
				continue
			}
			if err != nil {
				writeError(w, err)
				return
			}
			writeBody(w, http.StatusOK, "application/json", all)
			return
		}
	}
	sse := &sseWriter{w: w}
	sse.f, _ = w.(http.Flusher)
	for {
		texts, done, err := call.next(r.Context(), ir)
		for _, t := range texts {
			if sse.data(out(t)) != nil {
				ir.version.sched.cancel(ir)
				return
			}
		}
		if !done {
			continue
		}
		if err != nil && r.Context().Err() == nil {
			// The first response sets the status, an error's too.
			status, msg := http.StatusInternalServerError, err.Error()
			var te *kserve.Error
			if errors.As(err, &te) {
				status, msg = kserve.HTTPStatusFor(te.Code), te.Message
			}
			sse.start(status)
			_ = sse.data(append(append([]byte(`{"error":`), jsonString(msg)...), '}'))
		}
		sse.start(http.StatusOK)
		return
	}
}

// generateResponse is one response of the generate extension.
type generateResponse struct {
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version"`
	TextOutput   string `json:"text_output"`
}

// generateValues reads a generate request's JSON object into its keys'
// values, the "parameters" object's merged in (a key given in both is an
// error, as in Triton).
func generateValues(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var top map[string]any
	if err := dec.Decode(&top); err != nil || top == nil {
		msg := "the request body is not a JSON object"
		if err != nil {
			msg = err.Error()
		}
		return nil, badRequest("failed to parse the request JSON buffer: %s", textsafe.Excerpt(msg, textsafe.MaxErrorText))
	}
	params, ok := top["parameters"]
	if !ok {
		return top, nil
	}
	delete(top, "parameters")
	nested, ok := params.(map[string]any)
	if !ok {
		return nil, badRequest("Expected JSON object for keyword: 'parameters'")
	}
	for k, v := range nested {
		if _, dup := top[k]; dup {
			return nil, badRequest("Keyword '%s' given twice, at the top and in 'parameters'", textsafe.Bound(k))
		}
		top[k] = v
	}
	return top, nil
}
