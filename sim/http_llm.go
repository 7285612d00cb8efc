package sim

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// llmCall is one request of the text endpoints (the generate extension and
// the OpenAI-compatible frontend) submitted to the engine. The model's
// responses arrive on the engine's goroutines, which must not block, and
// wait here until the handler writes them.
type llmCall struct {
	mu     sync.Mutex
	texts  []string // the responses' text, not yet taken
	done   bool
	err    error
	signal chan struct{}
}

func newLLMCall() *llmCall { return &llmCall{signal: make(chan struct{}, 1)} }

// responded is the request's onResponse: a response before the final one.
// The text endpoints answer text: an error such a response carries is
// not theirs to tell.
func (c *llmCall) responded(_ *request, resp *pb.ModelInferResponse, err error) {
	if err != nil {
		return
	}
	text, ok := responseText(resp)
	c.mu.Lock()
	if ok {
		c.texts = append(c.texts, text)
	}
	c.mu.Unlock()
	c.wake()
}

// completed is the request's onDone: its final response or its error.
func (c *llmCall) completed(r *request) {
	c.mu.Lock()
	if r.err == nil {
		if text, ok := responseText(r.resp); ok {
			c.texts = append(c.texts, text)
		}
	}
	c.err = r.err
	c.done = true
	c.mu.Unlock()
	c.wake()
}

func (c *llmCall) wake() {
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// next waits for responses: it returns the texts that came since the last
// call, and once the request completed, done and its error. A cancelled
// ctx (the client went away) cancels the request and returns ctx's error.
func (c *llmCall) next(ctx context.Context, r *request) (texts []string, done bool, err error) {
	for {
		c.mu.Lock()
		texts, done, err = c.texts, c.done, c.err
		c.texts = nil
		c.mu.Unlock()
		if len(texts) > 0 || done {
			return texts, done, err
		}
		select {
		case <-c.signal:
		case <-ctx.Done():
			r.version.sched.cancel(r)
			return nil, true, ctx.Err()
		}
	}
}

// responseText is the text a response carries on its first BYTES output;
// ok is false for a response without outputs (an empty final response).
func responseText(resp *pb.ModelInferResponse) (string, bool) {
	if resp == nil {
		return "", false
	}
	for i, o := range resp.GetOutputs() {
		if o.GetDatatype() != "BYTES" || i >= len(resp.GetRawOutputContents()) {
			continue
		}
		elems, err := kserve.DecodeBytes(resp.GetRawOutputContents()[i], 1)
		if err != nil || len(elems) == 0 {
			return "", true
		}
		return string(elems[0]), true
	}
	return "", false
}

// textRequest builds the inference request of a text endpoint for model
// version mv: values whose key names one of the model's inputs become
// that input (a string for BYTES, a number or a bool, or a 1-D array of
// them), the other keys request parameters, as Triton's generate extension
// maps its JSON.
func textRequest(mv *modelVersion, values map[string]any) (*pb.ModelInferRequest, error) {
	m := mv.model
	req := &pb.ModelInferRequest{ModelName: m.name, ModelVersion: mv.label}
	for key, v := range values {
		i, ok := m.inputIdx[key]
		if !ok {
			p, err := textParameter(key, v)
			if err != nil {
				return nil, err
			}
			if req.Parameters == nil {
				req.Parameters = map[string]*pb.InferParameter{}
			}
			req.Parameters[key] = p
			continue
		}
		in := m.inputs[i]
		elems, ok := v.([]any)
		if !ok {
			elems = []any{v}
		}
		raw, err := encodeTextInput(in, elems)
		if err != nil {
			return nil, err
		}
		shape := make([]int64, len(in.dims))
		n := int64(len(elems))
		for j := len(in.dims) - 1; j >= 0; j-- {
			shape[j] = in.dims[j]
			if in.dims[j] < 0 {
				shape[j], n = n, 1
			}
		}
		req.Inputs = append(req.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: in.name, Datatype: in.datatype, Shape: shape})
		req.RawInputContents = append(req.RawInputContents, raw)
	}
	return req, nil
}

// textParameter converts a JSON value to a request parameter.
func textParameter(key string, v any) (*pb.InferParameter, error) {
	switch x := v.(type) {
	case string:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: x}}, nil
	case bool:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: x}}, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(x)}}, nil
		}
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: x}}, nil
	}
	return nil, badRequest("parameter '%s' has invalid type. It should be either 'int', 'bool', or 'string'.", textsafe.Bound(key))
}

// encodeTextInput encodes JSON values as the raw data of input in.
func encodeTextInput(in tensorInfo, elems []any) ([]byte, error) {
	if in.size < 0 {
		parts := make([][]byte, len(elems))
		for i, e := range elems {
			s, ok := e.(string)
			if !ok {
				return nil, badRequest("expected string for input '%s'", in.name)
			}
			parts[i] = []byte(s)
		}
		return kserve.EncodeBytes(parts), nil
	}
	out := make([]byte, 0, len(elems)*in.size)
	le := binary.LittleEndian
	for _, e := range elems {
		var f float64
		switch x := e.(type) {
		case bool:
			if x {
				f = 1
			}
		case float64:
			f = x
		default:
			return nil, badRequest("expected number or boolean for input '%s'", in.name)
		}
		switch in.dtype {
		case pb.DataType_TYPE_BOOL, pb.DataType_TYPE_INT8, pb.DataType_TYPE_UINT8:
			out = append(out, byte(int64(f)))
		case pb.DataType_TYPE_INT16, pb.DataType_TYPE_UINT16:
			out = le.AppendUint16(out, uint16(int64(f)))
		case pb.DataType_TYPE_INT32, pb.DataType_TYPE_UINT32:
			out = le.AppendUint32(out, uint32(int64(f)))
		case pb.DataType_TYPE_INT64, pb.DataType_TYPE_UINT64:
			out = le.AppendUint64(out, uint64(int64(f)))
		case pb.DataType_TYPE_FP32:
			out = le.AppendUint32(out, math.Float32bits(float32(f)))
		case pb.DataType_TYPE_FP64:
			out = le.AppendUint64(out, math.Float64bits(f))
		default:
			return nil, badRequest("input '%s' has unsupported datatype %s", in.name, in.datatype)
		}
	}
	return out, nil
}

// sseWriter writes server-sent events, each flushed as it is written.
type sseWriter struct {
	w       http.ResponseWriter
	f       http.Flusher
	started bool
}

// start sends the header of an event stream with status.
func (s *sseWriter) start(status int) {
	if s.started {
		return
	}
	s.started = true
	s.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	s.w.Header().Set("Cache-Control", "no-cache")
	s.w.WriteHeader(status)
}

// data writes one "data: ...\n\n" event.
func (s *sseWriter) data(b []byte) error {
	s.start(http.StatusOK)
	buf := make([]byte, 0, len(b)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return fmt.Errorf("write event: %w", err)
	}
	if s.f != nil {
		s.f.Flush()
	}
	return nil
}

// marshal encodes v as JSON, one line.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}
