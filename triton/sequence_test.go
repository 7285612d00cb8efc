package triton

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"reflect"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// withSequence is req with the sequence parameters Triton's clients add,
// encoded the ordinary way: what a sequence's request must equal.
func withSequence(req *InferRequest, id uint64, start, end bool) *InferRequest {
	r := *req
	r.Parameters = maps.Clone(req.Parameters)
	if r.Parameters == nil {
		r.Parameters = map[string]any{}
	}
	r.Parameters[SequenceIDParameter] = int64(id)
	r.Parameters[SequenceStartParameter] = start
	r.Parameters[SequenceEndParameter] = end
	return &r
}

// sequenceRequests are requests in every form the parameters' place
// depends on: with and without an id, parameters and named outputs.
func sequenceRequests() map[string]*InferRequest {
	plain := simpleRequest(3)
	withID := simpleRequest(3)
	withID.ID = `req "7" <&>`
	withParams := simpleRequest(3)
	withParams.Parameters = map[string]any{"priority": int64(2), "note": "x"}
	outputs := simpleRequest(3)
	outputs.Outputs = []string{"OUTPUT0"}
	jsonPlain := simpleRequest(3)
	jsonPlain.JSON = true
	jsonParams := simpleRequest(3)
	jsonParams.JSON, jsonParams.ID, jsonParams.Parameters = true, "j", map[string]any{"priority": int64(1)}
	return map[string]*InferRequest{"plain": plain, "id": withID, "parameters": withParams, "outputs": outputs,
		"JSON": jsonPlain, "JSON with id and parameters": jsonParams}
}

// TestGRPCSequenceWire: each request of a gRPC sequence decodes to exactly
// the message the request with the sequence parameters added encodes to,
// the flags set as the place asks and the other parameters kept.
func TestGRPCSequenceWire(t *testing.T) {
	c := &grpcClient{}
	for name, req := range sequenceRequests() {
		p, err := c.Prepare(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []uint64{1, 300, 1<<63 - 1} {
			seq, err := c.PrepareSequence(p, id)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, start := range []bool{false, true} {
				for _, end := range []bool{false, true} {
					sp := seq.Request(start, end).(*grpcPrepared)
					got := new(pb.ModelInferRequest)
					if err := proto.Unmarshal(sp.wire.Materialize(), got); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want, err := buildModelInferRequest(withSequence(req, id, start, end))
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(got, want) {
						t.Errorf("%s id %d start %v end %v:\n got %v\nwant %v", name, id, start, end, got, want)
					}
					if sp.Size() != sp.wire.Len() {
						t.Errorf("%s: Size %d, wire %d bytes", name, sp.Size(), sp.wire.Len())
					}
				}
			}
		}
	}
}

// httpBody reads a prepared HTTP request's body as Send sends it, and its
// JSON part.
func httpBody(t *testing.T, p *httpPrepared) (head map[string]any, bin []byte) {
	t.Helper()
	r := io.Reader(bytes.NewReader(p.body))
	if p.rest != nil {
		r = &bodyParts{a: p.body, b: p.rest}
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) != p.Size() {
		t.Fatalf("body %d bytes, Size %d", len(body), p.Size())
	}
	jsonLen := len(body)
	if h := p.header.Get(kserve.HeaderContentLength); h != "" {
		if jsonLen, err = strconv.Atoi(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := json.Unmarshal(body[:jsonLen], &head); err != nil {
		t.Fatalf("JSON part %q: %v", body[:jsonLen], err)
	}
	return head, body[jsonLen:]
}

// TestHTTPSequenceBody: each request of an HTTP sequence carries the JSON
// and binary data that the request with the sequence parameters added
// carries, with a matching Inference-Header-Content-Length, and a retry
// (GetBody) reads the same body again.
func TestHTTPSequenceBody(t *testing.T) {
	c := &httpClient{base: "http://h:8000", header: map[string][]string{"X-Key": {"v"}}}
	for name, req := range sequenceRequests() {
		p, err := c.prepare(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []uint64{1, 4242, 1<<63 - 1} {
			seq, err := c.PrepareSequence(p, id)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, start := range []bool{false, true} {
				for _, end := range []bool{false, true} {
					sp := seq.Request(start, end).(*httpPrepared)
					want, err := c.prepare(withSequence(req, id, start, end))
					if err != nil {
						t.Fatal(err)
					}
					gotHead, gotBin := httpBody(t, sp)
					wantHead, wantBin := httpBody(t, want)
					if !reflect.DeepEqual(gotHead, wantHead) || !bytes.Equal(gotBin, wantBin) {
						t.Errorf("%s id %d start %v end %v:\n got %v\nwant %v", name, id, start, end, gotHead, wantHead)
					}
					if sp.header.Get("Content-Type") != want.header.Get("Content-Type") || sp.header.Get("X-Key") != "v" {
						t.Errorf("%s: headers %v, want %v", name, sp.header, want.header)
					}
					rc, err := sp.getBody()
					if err != nil {
						t.Fatal(err)
					}
					again, _ := io.ReadAll(rc)
					if len(again) != sp.Size() {
						t.Errorf("%s: GetBody read %d bytes of %d", name, len(again), sp.Size())
					}
				}
			}
		}
	}
}

// TestPrepareSequenceRefuses: id 0 names no sequence, an id past int64
// does not fit Triton's parameter, and a request of another client is not
// this one's to change.
func TestPrepareSequenceRefuses(t *testing.T) {
	g := &grpcClient{}
	h := &httpClient{base: "http://h:8000", header: map[string][]string{}}
	gp, _ := g.Prepare(simpleRequest(1))
	hp, _ := h.Prepare(simpleRequest(1))
	cases := []struct {
		name string
		c    Client
		p    Prepared
		id   uint64
	}{
		{"gRPC id 0", g, gp, 0},
		{"HTTP id 0", h, hp, 0},
		{"gRPC id past int64", g, gp, 1 << 63},
		{"HTTP id past int64", h, hp, 1 << 63},
		{"gRPC with an HTTP request", g, hp, 1},
		{"HTTP with a gRPC request", h, gp, 1},
	}
	for _, c := range cases {
		if _, err := c.c.PrepareSequence(c.p, c.id); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	seq, _ := g.PrepareSequence(gp, 5)
	if _, err := g.PrepareSequence(seq.Request(true, false), 6); err == nil {
		t.Error("a sequence's request made into another sequence: no error")
	}
}
