package triton

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// httpClient is the Client over Triton's KServe v2 REST API with the
// binary tensor data extension.
type httpClient struct {
	base   string // scheme://host:port
	hc     *http.Client
	header http.Header // Options.Headers, canonical keys
	// text, when set, sends inference requests to a text endpoint
	// (Options.Endpoint) instead of /infer.
	text *textEndpoint
}

// httpIdleConns keeps enough idle keep-alive connections for high
// concurrency when Options.Connections leaves the pool unbounded; Go's
// default of 2 per host would reconnect on most requests.
const httpIdleConns = 1024

func newHTTPClient(ep endpoint, o Options, tlsConf *tls.Config) (*httpClient, error) {
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	idle := httpIdleConns
	if o.Connections > 0 {
		idle = o.Connections
	}
	tr := &http.Transport{
		// A load generator measures the server, never a proxy in between.
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     o.Connections,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		TLSClientConfig:     tlsConf,
	}
	c := &httpClient{
		base:   scheme + "://" + ep.addr,
		hc:     &http.Client{Transport: tr},
		header: http.Header{},
	}
	for k, v := range o.Headers {
		c.header.Set(k, v)
	}
	if o.Endpoint.Text() {
		base := c.base
		if o.EndpointURL != "" {
			base = strings.TrimRight(o.EndpointURL, "/")
			if !strings.Contains(base, "://") {
				base = scheme + "://" + base
			}
			if _, err := url.Parse(base); err != nil {
				return nil, fmt.Errorf("endpoint URL %s: %w", textsafe.Quote(o.EndpointURL), err)
			}
		}
		c.text = &textEndpoint{kind: o.Endpoint, base: base, stream: o.Stream}
	}
	return c, nil
}

// modelPath is /v2/models/{m}[/versions/{v}].
func modelPath(model, version string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

// do sends one request and reads the whole response.
func (c *httpClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// httpError builds the *Error for a non-2xx answer from Triton's
// {"error":"..."} body, falling back to the body text or status text.
func httpError(status int, body []byte) *Error {
	var e struct {
		Error string `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	} else if s := strings.TrimSpace(string(body)); s != "" {
		msg = oneLine(s)
	} else {
		msg = http.StatusText(status)
	}
	return &Error{Code: kserve.CodeForHTTPStatus(status), HTTPStatus: status, Message: textsafe.Excerpt(msg, maxErrorMessage)}
}

// getJSON GETs path and decodes a 200 answer into m.
func (c *httpClient) getJSON(ctx context.Context, path string, m proto.Message) error {
	status, body, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return httpError(status, body)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, m); err != nil {
		return fmt.Errorf("GET %s: decode response: %w", path, err)
	}
	return nil
}

// getBool reads Triton's health-style answer: 200 for true and 400 for
// false, both with an empty body (or an error body for 400 on models).
func (c *httpClient) getBool(ctx context.Context, path string) (bool, error) {
	status, body, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return false, err
	}
	switch status {
	case http.StatusOK:
		return true, nil
	case http.StatusBadRequest:
		return false, nil
	}
	return false, httpError(status, body)
}

// ServerLive implements Client.
func (c *httpClient) ServerLive(ctx context.Context) (bool, error) {
	return c.getBool(ctx, "/v2/health/live")
}

// ServerReady implements Client.
func (c *httpClient) ServerReady(ctx context.Context) (bool, error) {
	return c.getBool(ctx, "/v2/health/ready")
}

// ServerMetadata implements Client.
func (c *httpClient) ServerMetadata(ctx context.Context) (*pb.ServerMetadataResponse, error) {
	m := &pb.ServerMetadataResponse{}
	if err := c.getJSON(ctx, "/v2", m); err != nil {
		return nil, err
	}
	return m, nil
}

// ModelReady implements Client.
func (c *httpClient) ModelReady(ctx context.Context, model, version string) (bool, error) {
	return c.getBool(ctx, modelPath(model, version)+"/ready")
}

// ModelMetadata implements Client.
func (c *httpClient) ModelMetadata(ctx context.Context, model, version string) (*pb.ModelMetadataResponse, error) {
	m := &pb.ModelMetadataResponse{}
	if err := c.getJSON(ctx, modelPath(model, version), m); err != nil {
		return nil, err
	}
	return m, nil
}

// ModelConfig implements Client.
func (c *httpClient) ModelConfig(ctx context.Context, model, version string) (*pb.ModelConfig, error) {
	path := modelPath(model, version) + "/config"
	status, body, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, httpError(status, body)
	}
	cfg, err := kserve.ParseConfigJSON(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return cfg, nil
}

// ModelStatistics implements Client. An empty model asks for all models
// (/v2/models/stats).
func (c *httpClient) ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error) {
	path := "/v2/models/stats"
	if model != "" {
		path = modelPath(model, version) + "/stats"
	}
	m := &pb.ModelStatisticsResponse{}
	if err := c.getJSON(ctx, path, m); err != nil {
		return nil, err
	}
	return m, nil
}

// RepositoryIndex implements Client.
func (c *httpClient) RepositoryIndex(ctx context.Context, readyOnly bool) ([]*pb.RepositoryIndexResponse_ModelIndex, error) {
	const path = "/v2/repository/index"
	body := []byte(`{"ready":false}`)
	if readyOnly {
		body = []byte(`{"ready":true}`)
	}
	status, resp, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, httpError(status, resp)
	}
	var index []kserve.ModelIndex
	if err := json.Unmarshal(resp, &index); err != nil {
		return nil, fmt.Errorf("POST %s: decode response: %w", path, err)
	}
	out := make([]*pb.RepositoryIndexResponse_ModelIndex, len(index))
	for i, m := range index {
		out[i] = &pb.RepositoryIndexResponse_ModelIndex{Name: m.Name, Version: m.Version, State: m.State, Reason: m.Reason}
	}
	return out, nil
}

// OpenStream implements Client; Triton streams tensors only over gRPC. A
// text endpoint's requests go over a stream of HTTP requests, each
// answered with server-sent events or in one body.
func (c *httpClient) OpenStream(ctx context.Context) (Stream, error) {
	if c.text != nil {
		return c.openTextStream(ctx), nil
	}
	return nil, errors.New("streaming inference needs gRPC: Triton's HTTP API has no ModelStreamInfer; use the grpc protocol")
}

// Close implements Client.
func (c *httpClient) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}
