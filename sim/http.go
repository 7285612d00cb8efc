package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// httpHandler is Triton's HTTP/REST (KServe v2) API in front of an Engine,
// routed by hand to follow the endpoint patterns of Triton's
// http_server.cc: a path no pattern matches gets 400 with an empty body, a
// known path with the wrong method gets 405.
type httpHandler struct {
	engine   *Engine
	settings *settingsStore
	limits   HTTPLimits
	budget   *memBudget
}

// newHTTPHandler serves e with limits (zero fields take their defaults)
// under budget.
func newHTTPHandler(e *Engine, settings *settingsStore, limits HTTPLimits, budget *memBudget) *httpHandler {
	return &httpHandler{engine: e, settings: settings, limits: limits.withDefaults(), budget: budget}
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	// Triton's HTTP server answers text/plain unless the handler says
	// JSON (jsonReply); OpenAI's frontend always does.
	w.Header().Set("Content-Type", "text/plain")
	switch {
	case p == "/v2":
		jsonReply(w)
		if methodIs(w, r, http.MethodGet) {
			md := h.engine.ServerMetadata()
			ext := md.GetExtensions()
			if ext == nil {
				ext = []string{}
			}
			writeJSON(w, http.StatusOK, serverMetadataJSON{Name: md.GetName(), Version: md.GetVersion(), Extensions: ext})
		}
	case p == "/v2/health/live":
		if methodIs(w, r, http.MethodGet) {
			healthReply(w, h.engine.Live())
		}
	case p == "/v2/health/ready":
		if methodIs(w, r, http.MethodGet) {
			healthReply(w, h.engine.Ready())
		}
	case p == "/v2/models/stats":
		jsonReply(w)
		if methodIs(w, r, http.MethodGet) {
			h.stats(w, "", "")
		}
	case p == "/v2/logging":
		h.logging(w, r)
	case strings.HasPrefix(p, "/v2/models/") && h.model(w, r, strings.TrimPrefix(p, "/v2/models/")):
	case strings.HasPrefix(p, "/v2/repository/") && h.repository(w, r, strings.TrimPrefix(p, "/v2/repository/")):
	case strings.HasPrefix(p, "/v2/systemsharedmemory/") && h.sharedMemory(w, r, "system", strings.TrimPrefix(p, "/v2/systemsharedmemory/")):
	case strings.HasPrefix(p, "/v2/cudasharedmemory/") && h.sharedMemory(w, r, "cuda", strings.TrimPrefix(p, "/v2/cudasharedmemory/")):
	case p == "/v2/trace/setting":
		h.traceSetting(w, r, "")
	case strings.HasPrefix(p, "/v1/"):
		jsonReply(w)
		h.openAI(w, r, p)
	default:
		notFound(w)
	}
}

// jsonReply makes the answer's Content-Type application/json, as Triton's
// handlers of JSON bodies say first, before any check.
func jsonReply(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/json") }

// notFound is Triton's answer to a path none of its patterns matches.
func notFound(w http.ResponseWriter) {
	writeErrorStatus(w, http.StatusNotFound, "Not Found")
}

// methodIs answers 405 unless the request uses method.
func methodIs(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	writeErrorStatus(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	return false
}

// healthReply is Triton's health answer: a status code and no body.
func healthReply(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Length", "0")
	if ok {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusBadRequest)
	}
}

// model routes /v2/models/{m}[/versions/{v}][/action] as Triton's
// pattern does; false when the path does not match it.
func (h *httpHandler) model(w http.ResponseWriter, r *http.Request, rest string) bool {
	if strings.HasSuffix(rest, "/") {
		return false // no pattern of Triton's ends with a slash
	}
	name, rest, _ := strings.Cut(rest, "/")
	version := ""
	if v, ok := strings.CutPrefix(rest, "versions/"); ok {
		version, rest, _ = strings.Cut(v, "/")
		if !isDigits(version) {
			return false
		}
	} else if rest == "versions" {
		return false
	}
	if name == "" {
		return false
	}
	switch rest {
	case "":
		jsonReply(w)
		if methodIs(w, r, http.MethodGet) {
			md, err := h.engine.ModelMetadata(name, version)
			if err != nil {
				writeError(w, err)
				return true
			}
			writeJSON(w, http.StatusOK, metadataJSON(md))
		}
	case "ready":
		if methodIs(w, r, http.MethodGet) {
			ready, err := h.engine.ModelReady(name, version)
			switch {
			case err != nil:
				writeError(w, err)
			case !ready:
				writeErrorStatus(w, http.StatusBadRequest, "Model version not ready")
			default:
				healthReply(w, true)
			}
		}
	case "config":
		jsonReply(w)
		if methodIs(w, r, http.MethodGet) {
			cfg, err := h.engine.ModelConfig(name, version)
			if err != nil {
				writeError(w, err)
				return true
			}
			b, err := kserve.ConfigJSON(cfg)
			if err != nil {
				writeError(w, &kserve.Error{Code: codes.Internal, Message: err.Error()})
				return true
			}
			writeBody(w, http.StatusOK, "application/json", b)
		}
	case "stats":
		jsonReply(w)
		if methodIs(w, r, http.MethodGet) {
			h.stats(w, name, version)
		}
	case "infer":
		if methodIs(w, r, http.MethodPost) {
			h.infer(w, r, name, version)
		}
	case "trace/setting":
		if version != "" {
			return false // Triton's trace setting takes no version
		}
		h.traceSetting(w, r, name)
	case "generate", "generate_stream":
		jsonReply(w)
		if methodIs(w, r, http.MethodPost) {
			h.generate(w, r, name, version, rest == "generate_stream")
		}
	default:
		return false
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// repository routes /v2/repository[/{repo}]/index and
// /v2/repository[/{repo}]/models/{m}/(load|unload); false when the path
// is none of them.
func (h *httpHandler) repository(w http.ResponseWriter, r *http.Request, rest string) bool {
	parts := strings.Split(rest, "/")
	named := false
	if len(parts) == 2 && parts[1] == "index" || len(parts) == 4 && parts[1] == "models" {
		parts = parts[1:] // a named repository: the simulator has only one
		named = parts[0] == "models"
	}
	switch {
	case len(parts) == 1 && parts[0] == "index":
		jsonReply(w)
		if !methodIs(w, r, http.MethodPost) {
			return true
		}
		ready, err := h.indexReady(r)
		if err != nil {
			writeError(w, err)
			return true
		}
		writeJSON(w, http.StatusOK, indexJSON(h.engine.RepositoryIndex(ready)))
	case len(parts) == 3 && parts[0] == "models" && parts[1] != "" && (parts[2] == "load" || parts[2] == "unload"):
		jsonReply(w)
		if !methodIs(w, r, http.MethodPost) {
			return true
		}
		if err := h.control(r, parts[1], parts[2] == "load", named); err != nil {
			writeError(w, err)
			return true
		}
		writeBody(w, http.StatusOK, "", nil)
	default:
		return false
	}
	return true
}

// indexReady reads an index request's "ready" as Triton does: a body is
// optional, "ready" in it must be a boolean.
func (h *httpHandler) indexReady(r *http.Request) (bool, error) {
	hold := newBudgetHold(h.budget)
	defer hold.close()
	doc, ok, err := h.readJSON(r, hold, false)
	if err != nil || !ok {
		return false, err
	}
	v, found := doc.find("ready")
	if !found {
		return false, nil
	}
	ready, isBool := v.asBool()
	if !isBool {
		return false, invalidArg("Invalid value for 'ready': expected a boolean")
	}
	return ready, nil
}

// control loads (with the body's parameters) or unloads a model, with
// Triton's answers for a named repository and bad parameters.
func (h *httpHandler) control(r *http.Request, name string, load, named bool) error {
	if named {
		return errRepositoryName
	}
	hold := newBudgetHold(h.budget)
	defer hold.close()
	b, err := h.readBody(r, hold)
	if err != nil {
		return err
	}
	if err := hold.grow(jsonValuesCost(b)); err != nil {
		return err
	}
	if !load {
		dependents, err := httpUnloadDependents(b, hold)
		if err != nil {
			return err
		}
		if dependents {
			return h.engine.UnloadModelAndDependents(name)
		}
		return h.engine.UnloadModel(name)
	}
	lr, err := httpLoadRequest(b, hold)
	if err != nil {
		return err
	}
	return h.engine.loadRequested(name, lr)
}

// readJSON reads a request body and parses it as Triton does: an empty
// body is not parsed (ok false) unless allowEmpty, which parses it and
// fails as rapidjson does. The body and what parsing it holds are
// reserved in hold, which the caller closes once it is done with the
// document (it aliases the body).
func (h *httpHandler) readJSON(r *http.Request, hold *budgetHold, allowEmpty bool) (doc jval, ok bool, err error) {
	b, err := h.readBody(r, hold)
	if err != nil {
		return jval{}, false, err
	}
	if len(b) == 0 && !allowEmpty {
		return jval{}, false, nil
	}
	doc, err = parseBody(b, hold)
	if err != nil {
		return jval{}, false, err
	}
	return doc, true, nil
}

// sharedMemory answers /v2/{system,cuda}sharedmemory[/region/{r}]/{status,
// register,unregister}: system regions in shm_http.go, CUDA ones refused
// (no GPU); false when the path is none of them.
func (h *httpHandler) sharedMemory(w http.ResponseWriter, r *http.Request, kind, rest string) bool {
	region := ""
	if v, ok := strings.CutPrefix(rest, "region/"); ok {
		region, rest, _ = strings.Cut(v, "/")
		if region == "" {
			return false
		}
	}
	if rest != "status" && rest != "register" && rest != "unregister" {
		return false
	}
	jsonReply(w)
	if rest == "status" && !methodIs(w, r, http.MethodGet) || rest != "status" && !methodIs(w, r, http.MethodPost) {
		return true
	}
	if kind == "system" {
		h.systemSharedMemory(w, r, region, rest)
		return true
	}
	switch rest {
	case "status":
		if region != "" {
			writeError(w, shmNotFound(kind, region))
			return true
		}
		writeBody(w, http.StatusOK, "", []byte("[]"))
	case "register":
		if err := h.engine.clientShm(); err != nil {
			writeError(w, err)
			return true
		}
		if region == "" {
			writeError(w, invalidArg("'region name' is necessary to register cuda shared memory region"))
			return true
		}
		writeError(w, cudaShmRegisterError(region))
	case "unregister":
		if err := h.engine.clientShm(); err != nil {
			writeError(w, err)
			return true
		}
		writeBody(w, http.StatusOK, "", nil)
	}
	return true
}

// traceSetting answers GET and POST /v2[/models/{m}]/trace/setting.
func (h *httpHandler) traceSetting(w http.ResponseWriter, r *http.Request, model string) {
	jsonReply(w)
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeErrorStatus(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if model != "" {
		if _, err := h.engine.ModelConfig(model, ""); err != nil {
			writeError(w, err)
			return
		}
	}
	upd := map[string][]string{}
	if r.Method == http.MethodPost {
		var body map[string]any
		hold := newBudgetHold(h.budget)
		defer hold.close()
		doc, ok, err := h.readJSON(r, hold, false)
		if err != nil {
			writeError(w, err)
			return
		}
		if ok {
			// Decoded into Go values, which take more than the text.
			if err := hold.grow(jsonValuesCost(doc.b)); err != nil {
				writeError(w, err)
				return
			}
		}
		if ok && json.Unmarshal(doc.b, &body) != nil {
			writeError(w, tjError(tjNotObject))
			return
		}
		for k, v := range body {
			switch x := v.(type) {
			case nil:
				upd[k] = nil
			case string:
				upd[k] = []string{x}
			case []any:
				for _, e := range x {
					s, ok := e.(string)
					if !ok {
						writeErrorStatus(w, http.StatusBadRequest, fmt.Sprintf("expect string for '%s'", textsafe.Bound(k)))
						return
					}
					upd[k] = append(upd[k], s)
				}
			default:
				writeErrorStatus(w, http.StatusBadRequest, fmt.Sprintf("expect string for '%s'", textsafe.Bound(k)))
				return
			}
		}
	}
	cur, err := h.settings.updateTrace(upd)
	if err != nil {
		writeError(w, err)
		return
	}
	// Triton prints single values as strings and trace_level as a list.
	out := make(map[string]any, len(cur))
	for k, v := range cur {
		if k == "trace_level" || len(v) != 1 {
			out[k] = v
		} else {
			out[k] = v[0]
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// writeError answers with Triton's HTTP status for err's code and the
// {"error": message} body.
func writeError(w http.ResponseWriter, err error) {
	var te *kserve.Error
	if errors.As(err, &te) {
		status := kserve.HTTPStatusFor(te.Code)
		if te.Code == codes.ResourceExhausted {
			// The memory budget's refusal: Triton answers 503 when it
			// cannot take a request now.
			status = http.StatusServiceUnavailable
		}
		writeErrorStatus(w, status, te.Message)
		return
	}
	writeErrorStatus(w, http.StatusInternalServerError, err.Error())
}

// writeErrorStatus answers {"error": msg} with the Content-Type the
// handler set.
func writeErrorStatus(w http.ResponseWriter, status int, msg string) {
	b := append([]byte(`{"error":`), jsonString(msg)...)
	b = append(b, '}')
	writeBody(w, status, "", b)
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeErrorStatus(w, http.StatusInternalServerError, fmt.Sprintf("failed to write JSON: %v", err))
		return
	}
	writeBody(w, status, "application/json", bytes.TrimRight(buf.Bytes(), "\n"))
}

func writeBody(w http.ResponseWriter, status int, contentType string, b []byte) {
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Response bodies, with fields in Triton's order.

type serverMetadataJSON struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

type tensorMetadataJSON struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

type modelMetadataJSON struct {
	Name     string               `json:"name"`
	Versions []string             `json:"versions"`
	Platform string               `json:"platform"`
	Inputs   []tensorMetadataJSON `json:"inputs"`
	Outputs  []tensorMetadataJSON `json:"outputs"`
}

func metadataJSON(md *pb.ModelMetadataResponse) modelMetadataJSON {
	tensors := func(ts []*pb.ModelMetadataResponse_TensorMetadata) []tensorMetadataJSON {
		out := make([]tensorMetadataJSON, len(ts))
		for i, t := range ts {
			shape := t.GetShape()
			if shape == nil {
				shape = []int64{}
			}
			out[i] = tensorMetadataJSON{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: shape}
		}
		return out
	}
	versions := md.GetVersions()
	if versions == nil {
		versions = []string{}
	}
	return modelMetadataJSON{
		Name: md.GetName(), Versions: versions, Platform: md.GetPlatform(),
		Inputs: tensors(md.GetInputs()), Outputs: tensors(md.GetOutputs()),
	}
}

func indexJSON(models []*pb.RepositoryIndexResponse_ModelIndex) []kserve.ModelIndex {
	out := make([]kserve.ModelIndex, len(models))
	for i, m := range models {
		out[i] = kserve.ModelIndex{Name: m.GetName(), Version: m.GetVersion(), State: m.GetState(), Reason: m.GetReason()}
	}
	return out
}
