package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton/kserve"
)

// inferPath matches KServe's inference endpoint: the model, and its
// version when given.
var inferPath = regexp.MustCompile(`^/v2/models/([^/]+)(?:/versions/([^/]+))?/infer$`)

// HTTPProxy forwards HTTP/REST calls to an upstream Triton and records
// the inference requests among them.
type HTTPProxy struct {
	opts  Options
	proxy *httputil.ReverseProxy
	calls atomic.Int64
	rec   atomic.Int64
	fail  atomic.Int64
}

// NewHTTPProxy returns a proxy to opts.Upstream (a URL, or HOST:PORT).
func NewHTTPProxy(opts Options) (*HTTPProxy, error) {
	up := opts.Upstream
	if !strings.Contains(up, "://") {
		up = "http://" + up
	}
	u, err := url.Parse(up)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("capture: bad upstream %s: want HOST:PORT or http://HOST:PORT", textsafe.Quote(opts.Upstream))
	}
	p := &HTTPProxy{opts: opts}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1, // stream generate_stream's events as they come
	}
	return p, nil
}

// Stats returns what the proxy forwarded so far.
func (p *HTTPProxy) Stats() Stats {
	return Stats{Calls: p.calls.Load(), Recorded: p.rec.Load(), Errors: p.fail.Load()}
}

// ServeHTTP implements http.Handler: it forwards r, recording it first
// when it is an inference request. The body is read once and handed on
// unchanged.
func (p *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.calls.Add(1)
	m := inferPath.FindStringSubmatch(r.URL.Path)
	if p.opts.Trace == nil || m == nil || r.Method != http.MethodPost {
		p.proxy.ServeHTTP(w, r)
		return
	}
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		http.Error(w, "capture: reading the request: "+err.Error(), http.StatusBadGateway)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	model, _ := url.PathUnescape(m[1])
	version, _ := url.PathUnescape(m[2])
	req, ok := httpRequest(body, r.Header.Get("Inference-Header-Content-Length"), p.opts.Tensors)
	if !ok {
		p.fail.Add(1)
	}
	req.Model, req.Version, req.Protocol, req.RequestBytes = model, version, "http", int64(len(body))
	cw := &countingWriter{ResponseWriter: w}
	p.proxy.ServeHTTP(cw, r)
	req.ResponseBytes = cw.n
	if ok {
		if err := p.opts.Trace.Write(req, arrived); err != nil {
			p.fail.Add(1)
			return
		}
		p.rec.Add(1)
	}
}

// countingWriter counts the bytes of a response.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// Flush passes a streaming response's flushes on.
func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// httpRequest reads a KServe JSON inference request (with binary tensor
// data after its JSON header when headerLen is set).
func httpRequest(body []byte, headerLen string, tensors bool) (trace.Request, bool) {
	header := body
	var binary []byte
	if headerLen != "" {
		n, err := strconv.Atoi(headerLen)
		if err != nil || n < 0 || n > len(body) {
			return trace.Request{}, false
		}
		header, binary = body[:n], body[n:]
	}
	var h struct {
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
			Name string `json:"name"`
		} `json:"outputs"`
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	if err := dec.Decode(&h); err != nil {
		return trace.Request{}, false
	}
	r := trace.Request{ID: h.ID, Parameters: trace.PlainParameters(h.Parameters)}
	off := 0
	for _, in := range h.Inputs {
		ti := trace.Input{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}
		if v, ok := in.Parameters["binary_data_size"].(json.Number); ok {
			size, err := v.Int64()
			if err != nil || size < 0 || off+int(size) > len(binary) {
				return trace.Request{}, false
			}
			ti.Bytes = size
			if tensors {
				ti.Data = binary[off : off+int(size)]
			}
			off += int(size)
		} else if n := kserve.ElementCount(in.Shape); n >= 0 && kserve.ElementSize(in.Datatype) > 0 {
			// JSON data: its size in Triton's raw form (the values
			// themselves stay out of the trace).
			ti.Bytes = n * int64(kserve.ElementSize(in.Datatype))
		}
		r.Inputs = append(r.Inputs, ti)
	}
	for _, o := range h.Outputs {
		r.Outputs = append(r.Outputs, o.Name)
	}
	return r, true
}
