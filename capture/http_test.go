package capture

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton"
)

// TestHTTPProxyRecordsInference: inference over HTTP/REST (binary tensor
// data) passes through the proxy with the server's answer and is recorded
// with its model, shapes and sizes; the tensors only with Tensors.
func TestHTTPProxyRecordsInference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tensors := range []bool{false, true} {
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, trace.Header{Tensors: tensors})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewHTTPProxy(Options{Upstream: srv.HTTPAddr(), Trace: w, Tensors: tensors})
		if err != nil {
			t.Fatal(err)
		}
		front := httptest.NewServer(p)
		c, err := triton.Dial(ctx, strings.TrimPrefix(front.URL, "http://"), triton.Options{Protocol: "http"})
		if err != nil {
			t.Fatal(err)
		}
		md, err := c.ModelMetadata(ctx, "simple", "")
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := c.ModelConfig(ctx, "simple", "")
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Infer(ctx, reqs[0])
		if err != nil || len(resp.Outputs) != 2 {
			t.Fatalf("infer through the proxy: %+v, %v", resp, err)
		}
		c.Close()
		front.Close()
		w.Flush()
		tr, err := trace.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Requests) != 1 {
			t.Fatalf("%d requests recorded", len(tr.Requests))
		}
		r := tr.Requests[0]
		in := r.Inputs[0]
		if r.Model != "simple" || r.Protocol != "http" || in.Shape[1] != 16 || in.Bytes != 64 || r.ResponseBytes == 0 {
			t.Errorf("recorded %+v", r)
		}
		if got := in.Data != nil; got != tensors || tensors && !bytes.Equal(in.Data, reqs[0].Inputs[0].Data) {
			t.Errorf("tensors %v: data recorded %v", tensors, got)
		}
		if s := p.Stats(); s.Recorded != 1 || s.Calls < 3 {
			t.Errorf("stats %+v", s)
		}
	}
}
