package sim

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// BenchmarkSimIdentityGRPC measures the simulator's serving throughput: the
// demo identity model (no simulated compute time) over loopback gRPC, with
// parallel clients sending a prepared 16-element FP32 request. ns/op is
// wall time per request across all clients, so 1e9/ns/op is requests/s.
func BenchmarkSimIdentityGRPC(b *testing.B) {
	s := startSim(b, DemoRepository(), EngineOptions{})
	c, err := triton.Dial(context.Background(), s.GRPCAddr(), triton.Options{Protocol: "grpc", Connections: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.Prepare(&triton.InferRequest{
		Model:  "identity",
		Inputs: []triton.Tensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 16}, Data: make([]byte, 64)}},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Send(ctx, p); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkSimIdentityHTTP is BenchmarkSimIdentityGRPC over HTTP/REST: the
// same request, binary tensor data, parallel clients on loopback.
func BenchmarkSimIdentityHTTP(b *testing.B) {
	s := startSim(b, DemoRepository(), EngineOptions{})
	c, err := triton.Dial(context.Background(), "http://"+s.HTTPAddr(), triton.Options{Protocol: "http"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.Prepare(&triton.InferRequest{
		Model:  "identity",
		Inputs: []triton.Tensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 16}, Data: make([]byte, 64)}},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Send(ctx, p); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkHTTPInferHandler measures the HTTP frontend's own cost per
// infer request (body read, JSON and binary parsing, response encoding)
// without the network: the handler is called directly with a reused body.
func BenchmarkHTTPInferHandler(b *testing.B) {
	e := engNew(b, DemoRepository(), EngineOptions{})
	h := newHTTPHandler(e, &settingsStore{}, HTTPLimits{}, newMemBudget(1<<30))
	jsonPart := []byte(`{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","parameters":{"binary_data_size":64}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`)
	body := append(append([]byte{}, jsonPart...), make([]byte, 64)...)
	hdrLen := strconv.Itoa(len(jsonPart))
	rd := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, "/v2/models/identity/infer", rd)
	req.Header.Set(kserve.HeaderContentLength, hdrLen)
	w := &discardResponse{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd.Reset(body)
		req.Body = io.NopCloser(rd)
		req.ContentLength = int64(len(body))
		clear(w.h)
		w.status = 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// discardResponse is a ResponseWriter that keeps only the status, so that
// BenchmarkHTTPInferHandler counts the handler's allocations and not a
// recorder's.
type discardResponse struct {
	h      http.Header
	status int
}

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardResponse) WriteHeader(status int)      { d.status = status }
