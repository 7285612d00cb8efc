package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// post sends body (nil: none) to path on the server's HTTP endpoint and
// returns the status and the answer.
func (s *Server) post(t testing.TB, path string, body any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("interop: %s: %v", path, err)
		}
		r = bytes.NewReader(b)
	}
	return s.do(t, http.MethodPost, path, r)
}

// do sends one request to the server's HTTP endpoint.
func (s *Server) do(t testing.TB, method, path string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.HTTP+path, body)
	if err != nil {
		t.Fatalf("interop: %s %s: %v", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("interop: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("interop: %s %s: %v", method, path, err)
	}
	return resp.StatusCode, string(b)
}

// LoadModel loads model through the repository API (the server must run
// with Options.Explicit), with config, when not empty, as its config
// override: the model's config in JSON, as Triton's load request takes
// it. It returns Triton's status and answer.
func (s *Server) LoadModel(t testing.TB, model, config string) (int, string) {
	t.Helper()
	var body any
	if config != "" {
		body = map[string]any{"parameters": map[string]string{"config": config}}
	}
	return s.post(t, "/v2/repository/models/"+url.PathEscape(model)+"/load", body)
}

// UnloadModel unloads model through the repository API and returns
// Triton's status and answer.
func (s *Server) UnloadModel(t testing.TB, model string) (int, string) {
	t.Helper()
	return s.post(t, "/v2/repository/models/"+url.PathEscape(model)+"/unload", nil)
}

// ModelConfig is the model's config as v2/models/NAME/config answers it.
func (s *Server) ModelConfig(t testing.TB, model string) map[string]any {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/v2/models/"+url.PathEscape(model)+"/config", nil)
	var cfg map[string]any
	if err := json.Unmarshal([]byte(body), &cfg); code != http.StatusOK || err != nil {
		t.Fatalf("interop: config of %s: HTTP %d %v: %s", model, code, err, body)
	}
	return cfg
}

// SharedMemoryRegion is a system shared-memory region registered on the
// server, as v2/systemsharedmemory/status lists it.
type SharedMemoryRegion struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Offset   uint64 `json:"offset"`
	ByteSize uint64 `json:"byte_size"`
}

// SystemSharedMemory lists the system shared-memory regions registered on
// the server.
func (s *Server) SystemSharedMemory(t testing.TB) []SharedMemoryRegion {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/v2/systemsharedmemory/status", nil)
	var regions []SharedMemoryRegion
	if err := json.Unmarshal([]byte(body), &regions); code != http.StatusOK || err != nil {
		t.Fatalf("interop: system shared memory status: HTTP %d %v: %s", code, err, body)
	}
	return regions
}

// String is the region for a log.
func (r SharedMemoryRegion) String() string {
	return fmt.Sprintf("%s (key %s, %d bytes at %d)", r.Name, r.Key, r.ByteSize, r.Offset)
}

// ModelIndex is one entry of the server's repository index.
type ModelIndex struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
}

// RepositoryIndex is the server's repository index
// (v2/repository/index): every model, with each version's state.
func (s *Server) RepositoryIndex(t testing.TB) []ModelIndex {
	t.Helper()
	code, body := s.post(t, "/v2/repository/index", nil)
	var idx []ModelIndex
	if err := json.Unmarshal([]byte(body), &idx); code != http.StatusOK || err != nil {
		t.Fatalf("interop: repository index: HTTP %d %v: %s", code, err, body)
	}
	return idx
}

// ModelState is model's state in the repository index (its first
// version's), "" when the index does not have it.
func (s *Server) ModelState(t testing.TB, model string) string {
	t.Helper()
	for _, m := range s.RepositoryIndex(t) {
		if m.Name == model {
			return m.State
		}
	}
	return ""
}
