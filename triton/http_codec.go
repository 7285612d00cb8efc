package triton

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// httpPrepared is a whole infer request body with its headers, built once.
// Neither is mutated after Prepare, so concurrent Sends share them.
type httpPrepared struct {
	url    string
	body   []byte
	header http.Header
	// rest, when set, is the rest of the body after body: the part a
	// sequence's request shares with the request it was prepared from
	// (see PrepareSequence); getBody reads both again for a retry.
	rest    []byte
	getBody func() (io.ReadCloser, error)
	// jsonLen is the JSON part's length (-1: the body is all JSON);
	// paramsAt is where sequence parameters go in it, inside the
	// "parameters" object when hasParams, else where one goes; -1 when
	// they cannot go in.
	jsonLen   int
	paramsAt  int
	hasParams bool
	// seqHeaders are the headers of its sequences' requests by the
	// length of their sequence parameters (see seqHeader).
	seqMu      sync.Mutex
	seqHeaders map[int]http.Header
}

// Size implements Prepared.
func (p *httpPrepared) Size() int { return len(p.body) + len(p.rest) }

// Prepare implements Client.
func (c *httpClient) Prepare(req *InferRequest) (Prepared, error) {
	if c.text != nil {
		return c.prepareText(req)
	}
	return c.prepare(req)
}

func (c *httpClient) prepare(req *InferRequest) (*httpPrepared, error) {
	if req == nil || req.Model == "" {
		return nil, errors.New("infer request needs a model name")
	}
	body, jsonLen, err := encodeHTTPInfer(req)
	if err != nil {
		return nil, fmt.Errorf("infer request for %s: %w", textsafe.Quote(req.Model), err)
	}
	h := c.header.Clone()
	head := body
	if jsonLen >= 0 {
		h.Set("Content-Type", "application/octet-stream")
		h.Set(kserve.HeaderContentLength, strconv.Itoa(jsonLen))
		head = body[:jsonLen]
	} else {
		h.Set("Content-Type", "application/json")
	}
	hasParams := len(req.Parameters) > 0 || jsonLen >= 0 && len(req.Outputs) == 0
	return &httpPrepared{url: c.base + modelPath(req.Model, req.Version) + "/infer", body: body, header: h,
		jsonLen: jsonLen, paramsAt: parametersAt(head, req.ID, hasParams), hasParams: hasParams}, nil
}

// encodeHTTPInfer builds an infer body. With req.JSON the tensors are JSON
// arrays and jsonLen is -1; otherwise every input's bytes follow the JSON
// part (binary tensor data extension), outputs are asked for in binary,
// and jsonLen is the JSON part's length.
func encodeHTTPInfer(req *InferRequest) (body []byte, jsonLen int, err error) {
	j := kserve.InferRequest{ID: req.ID, Inputs: make([]kserve.RequestInput, len(req.Inputs))}
	if len(req.Parameters) > 0 {
		j.Parameters = make(map[string]any, len(req.Parameters)+1)
		for k, v := range req.Parameters {
			if err := checkParameter(k, v); err != nil {
				return nil, 0, err
			}
			j.Parameters[k] = v
		}
	}
	binaryLen := 0
	for i, in := range req.Inputs {
		if in.Name == "" || in.Datatype == "" {
			return nil, 0, fmt.Errorf("input %d needs a name and a datatype", i)
		}
		shape := in.Shape
		if shape == nil {
			shape = []int64{}
		}
		ji := kserve.RequestInput{Name: in.Name, Shape: shape, Datatype: in.Datatype}
		if in.SharedMemory != nil {
			ji.Parameters = in.SharedMemory.params()
		} else if req.JSON {
			data, err := rawToJSON(in)
			if err != nil {
				return nil, 0, err
			}
			if ji.Data, err = json.Marshal(data); err != nil {
				return nil, 0, fmt.Errorf("input %s: encode JSON data: %w", textsafe.Quote(in.Name), err)
			}
		} else {
			ji.Parameters = map[string]any{"binary_data_size": len(in.Data)}
			binaryLen += len(in.Data)
		}
		j.Inputs[i] = ji
	}
	for _, name := range req.Outputs {
		o := kserve.RequestOutput{Name: name}
		if ref, ok := req.OutputSharedMemory[name]; ok {
			o.Parameters = ref.params()
		} else if !req.JSON {
			o.Parameters = map[string]any{"binary_data": true}
		}
		j.Outputs = append(j.Outputs, o)
	}
	if !req.JSON && len(req.Outputs) == 0 {
		if j.Parameters == nil {
			j.Parameters = map[string]any{}
		}
		j.Parameters["binary_data_output"] = true
	}
	head, err := json.Marshal(j)
	if err != nil {
		return nil, 0, fmt.Errorf("encode JSON: %w", err)
	}
	if req.JSON {
		return head, -1, nil
	}
	body = make([]byte, 0, len(head)+binaryLen)
	body = append(body, head...)
	for _, in := range req.Inputs {
		if in.SharedMemory == nil {
			body = append(body, in.Data...)
		}
	}
	return body, len(head), nil
}

func checkParameter(k string, v any) error {
	switch v.(type) {
	case bool, string, int, int32, int64, uint64, float32, float64:
		return nil
	}
	return fmt.Errorf("parameter %s has type %T: use string, bool, int64 or float64", textsafe.Quote(k), v)
}

// Send implements Client. The response body is counted and discarded; an
// error body is read and decoded.
func (c *httpClient) Send(ctx context.Context, p Prepared) (int, error) {
	hp, ok := p.(*httpPrepared)
	if !ok {
		if tp, ok := p.(*textPrepared); ok {
			return c.sendText(ctx, tp)
		}
		return 0, errForeignPrepared
	}
	if ph := phasesOf(ctx); ph != nil {
		ph.begin()
		defer ph.finish()
	}
	resp, err := c.post(ctx, hp)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, httpError(resp.StatusCode, b)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("read infer response: %w", err)
	}
	return int(n), nil
}

func (c *httpClient) post(ctx context.Context, hp *httpPrepared) (*http.Response, error) {
	var req *http.Request
	var err error
	if hp.rest == nil {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, hp.url, bytes.NewReader(hp.body))
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, hp.url, nil)
		if err == nil {
			req.Body = &bodyParts{a: hp.body, b: hp.rest}
			req.ContentLength = int64(hp.Size())
			req.GetBody = hp.getBody
		}
	}
	if err != nil {
		return nil, fmt.Errorf("infer request: %w", err)
	}
	req.Header = hp.header
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("POST %s: %w", hp.url, err)
	}
	return resp, nil
}

// Infer implements Client.
func (c *httpClient) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	hp, err := c.prepare(req)
	if err != nil {
		return nil, err
	}
	resp, err := c.post(ctx, hp)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("read infer response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(resp.StatusCode, body)
	}
	jsonLen := len(body)
	if h := resp.Header.Get(kserve.HeaderContentLength); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n < 0 || n > len(body) {
			return nil, fmt.Errorf("infer response: bad %s %s for a %d-byte body", kserve.HeaderContentLength, textsafe.Quote(h), len(body))
		}
		jsonLen = n
	}
	return decodeHTTPInfer(body[:jsonLen], body[jsonLen:])
}

// decodeHTTPInfer decodes a response's JSON part and, for outputs with
// binary_data_size, takes their bytes in order from bin.
func decodeHTTPInfer(head, bin []byte) (*InferResponse, error) {
	var j kserve.InferResponse
	if err := unmarshalNumbers(head, &j); err != nil {
		return nil, fmt.Errorf("decode infer response: %w", err)
	}
	out := &InferResponse{
		Model:      j.ModelName,
		Version:    j.ModelVersion,
		ID:         j.ID,
		Parameters: jsonParameters(j.Parameters),
		Outputs:    make([]Tensor, len(j.Outputs)),
	}
	for i, o := range j.Outputs {
		t := Tensor{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape}
		if sz, ok := o.Parameters["binary_data_size"]; ok {
			n, err := strconv.Atoi(fmt.Sprint(sz))
			if err != nil || n < 0 || n > len(bin) {
				return nil, fmt.Errorf("infer response output %s: binary_data_size %v but %d binary bytes left", textsafe.Quote(o.Name), sz, len(bin))
			}
			t.Data, bin = bin[:n:n], bin[n:]
		} else {
			b, err := jsonToRaw(o.Datatype, o.Data)
			if err != nil {
				return nil, fmt.Errorf("infer response output %s: %w", textsafe.Quote(o.Name), err)
			}
			t.Data = b
		}
		out.Outputs[i] = t
	}
	return out, nil
}

// jsonParameters turns decoded json.Numbers into int64 or float64.
func jsonParameters(in map[string]any) map[string]any {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				v = i
			} else if f, err := n.Float64(); err == nil {
				v = f
			}
		}
		out[k] = v
	}
	return out
}

// rawToJSON converts a tensor's raw data to a flat JSON array value.
func rawToJSON(t Tensor) (any, error) {
	count := kserve.ElementCount(t.Shape)
	size := kserve.ElementSize(t.Datatype)
	switch {
	case t.Datatype == "FP16" || t.Datatype == "BF16":
		return nil, fmt.Errorf("input %s is %s, which Triton does not accept as JSON: send it binary (drop the JSON option)", textsafe.Quote(t.Name), t.Datatype)
	case size == 0:
		return nil, fmt.Errorf("input %s has unknown datatype %s", textsafe.Quote(t.Name), textsafe.Quote(t.Datatype))
	case size > 0 && int64(len(t.Data)) != count*int64(size):
		return nil, fmt.Errorf("input %s: %d bytes of data, but shape %v of %s needs %d", textsafe.Quote(t.Name), len(t.Data), t.Shape, t.Datatype, count*int64(size))
	}
	b := t.Data
	le := binary.LittleEndian
	switch t.Datatype {
	case "BOOL":
		v := make([]bool, len(b))
		for i := range v {
			v[i] = b[i] != 0
		}
		return v, nil
	case "INT8":
		return ints(len(b), func(i int) int64 { return int64(int8(b[i])) }), nil
	case "INT16":
		return ints(len(b)/2, func(i int) int64 { return int64(int16(le.Uint16(b[2*i:]))) }), nil
	case "INT32":
		return ints(len(b)/4, func(i int) int64 { return int64(int32(le.Uint32(b[4*i:]))) }), nil
	case "INT64":
		return ints(len(b)/8, func(i int) int64 { return int64(le.Uint64(b[8*i:])) }), nil
	case "UINT8":
		return uints(len(b), func(i int) uint64 { return uint64(b[i]) }), nil
	case "UINT16":
		return uints(len(b)/2, func(i int) uint64 { return uint64(le.Uint16(b[2*i:])) }), nil
	case "UINT32":
		return uints(len(b)/4, func(i int) uint64 { return uint64(le.Uint32(b[4*i:])) }), nil
	case "UINT64":
		return uints(len(b)/8, func(i int) uint64 { return le.Uint64(b[8*i:]) }), nil
	case "FP32":
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(b[4*i:]))
			if math.IsNaN(float64(v[i])) || math.IsInf(float64(v[i]), 0) {
				return nil, fmt.Errorf("input %s holds NaN or Inf, which JSON cannot carry: send it binary", textsafe.Quote(t.Name))
			}
		}
		return v, nil
	case "FP64":
		v := make([]float64, len(b)/8)
		for i := range v {
			v[i] = math.Float64frombits(le.Uint64(b[8*i:]))
			if math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				return nil, fmt.Errorf("input %s holds NaN or Inf, which JSON cannot carry: send it binary", textsafe.Quote(t.Name))
			}
		}
		return v, nil
	case "BYTES":
		elems, err := kserve.DecodeBytes(b, int(count))
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", textsafe.Quote(t.Name), err)
		}
		v := make([]string, len(elems))
		for i, e := range elems {
			v[i] = string(e)
		}
		return v, nil
	}
	return nil, fmt.Errorf("input %s has unknown datatype %s", textsafe.Quote(t.Name), textsafe.Quote(t.Datatype))
}

func ints(n int, at func(int) int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = at(i)
	}
	return v
}

func uints(n int, at func(int) uint64) []uint64 {
	v := make([]uint64, n)
	for i := range v {
		v[i] = at(i)
	}
	return v
}

// jsonToRaw converts a JSON data array (flat or nested) to raw form.
func jsonToRaw(datatype string, data json.RawMessage) ([]byte, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var v any
	if err := unmarshalNumbers(data, &v); err != nil {
		return nil, fmt.Errorf("decode data: %w", err)
	}
	flat, ok := v.([]any)
	if !ok {
		flat = []any{v}
	}
	flat = flatten(flat, nil)
	if datatype == "BYTES" {
		elems := make([][]byte, len(flat))
		for i, e := range flat {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("BYTES element %d is %T, not a string", i, e)
			}
			elems[i] = []byte(s)
		}
		return kserve.EncodeBytes(elems), nil
	}
	var b []byte
	for i, e := range flat {
		var err error
		if b, err = appendElement(b, e, datatype); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return b, nil
}
