package sim

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// errDecoupledHTTP is Triton's answer to HTTP infer on a decoupled model,
// given before the body is read.
var errDecoupledHTTP = &kserve.Error{Code: codes.Unimplemented,
	Message: "HTTP end point doesn't support models with decoupled transaction policy"}

func badRequest(format string, args ...any) error {
	return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// outputForm says, per output name, whether the response carries it as
// binary data; outputs not listed follow binaryDefault.
type outputForm struct {
	binaryDefault bool
	binary        map[string]bool
}

func (f *outputForm) isBinary(name string) bool {
	if b, ok := f.binary[name]; ok {
		return b
	}
	return f.binaryDefault
}

// infer answers POST /v2/models/{m}[/versions/{v}]/infer.
func (h *httpHandler) infer(w http.ResponseWriter, r *http.Request, model, version string) {
	if mv, err := h.engine.readyVersion(model, version); err == nil && mv.model.spec.Decoupled {
		writeError(w, errDecoupledHTTP)
		return
	}
	// Everything the request holds is reserved in hold, given back once the
	// response is written: the body (raw inputs alias it), its JSON
	// decoded, the tensors, the outputs and the encoded response.
	hold := newBudgetHold(h.budget)
	defer hold.close()
	body, err := h.readBody(r, hold)
	if err != nil {
		writeError(w, err)
		return
	}
	headerLen := -1
	if v := r.Header.Get(kserve.HeaderContentLength); v != "" {
		// Triton reads the header with std::stoi.
		n, ok := parseCInt(v, 32)
		if !ok {
			writeError(w, badRequest("Unable to parse %s, got: %s", kserve.HeaderContentLength, textsafe.Bound(v)))
			return
		}
		if n < 0 || n > int64(len(body)) {
			writeError(w, badRequest("inference header size should be in range (0, %d), got: %s", len(body), textsafe.Bound(v)))
			return
		}
		headerLen = int(n)
	}
	var (
		req  *pb.ModelInferRequest
		form outputForm
	)
	if headerLen == 0 {
		req, err = h.rawBinaryRequest(model, version, body)
		form.binaryDefault = true
	} else {
		jsonPart, binary := body, []byte(nil)
		if headerLen > 0 {
			jsonPart, binary = body[:headerLen], body[headerLen:]
		}
		req, form, err = parseInferRequest(jsonPart, binary, model, version, hold)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	resp, err := h.engine.infer(r.Context(), req, false, hold)
	if err != nil {
		writeError(w, err)
		return
	}
	out, headerLen, err := encodeInferResponse(resp, req.GetId(), &form, hold)
	if err != nil {
		writeError(w, err)
		return
	}
	contentType := "application/json"
	if headerLen >= 0 {
		w.Header().Set(kserve.HeaderContentLength, strconv.Itoa(headerLen))
		contentType = "application/octet-stream"
	}
	writeCompressed(w, r, contentType, out, hold)
}

// writeCompressed writes a response body, compressed when the client
// accepts gzip or deflate, as Triton does, and hold has room for the
// compressed copy (else it is sent as it is).
func writeCompressed(w http.ResponseWriter, r *http.Request, contentType string, body []byte, hold *budgetHold) {
	accept := r.Header.Get("Accept-Encoding")
	var enc string
	switch {
	case acceptsEncoding(accept, "gzip"):
		enc = "gzip"
	case acceptsEncoding(accept, "deflate"):
		enc = "deflate"
	}
	if enc != "" && hold.grow(int64(len(body))+4096) == nil {
		var buf bytes.Buffer
		var zw io.WriteCloser
		if enc == "gzip" {
			zw = gzip.NewWriter(&buf)
		} else {
			zw = zlib.NewWriter(&buf)
		}
		_, _ = zw.Write(body)
		if err := zw.Close(); err == nil {
			w.Header().Set("Content-Encoding", enc)
			body = buf.Bytes()
		}
	}
	writeBody(w, http.StatusOK, contentType, body)
}

func acceptsEncoding(header, enc string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), enc) {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// rawBinaryRequest builds the request for a body that is just the data of
// the model's only input (Inference-Header-Content-Length: 0): datatype and
// shape come from the config, as one batch item.
func (h *httpHandler) rawBinaryRequest(model, version string, body []byte) (*pb.ModelInferRequest, error) {
	cfg, err := h.engine.ModelConfig(model, version)
	if err != nil {
		return nil, err
	}
	if len(cfg.GetInput()) != 1 {
		return nil, badRequest("Raw request must only have 1 input (found 1) to be deduced but got %d inputs in '%s' model configuration", len(cfg.GetInput()), textsafe.Bound(model))
	}
	in := cfg.GetInput()[0]
	datatype := kserve.DataTypeString(in.GetDataType())
	var elems int64
	if size := kserve.ElementSize(datatype); size > 0 {
		elems = int64(len(body) / size)
	} else {
		for b := body; ; elems++ {
			n, ok := kserve.BytesLength(b)
			if !ok || n > int64(len(b)-kserve.BytesLengthSize) {
				break
			}
			b = b[kserve.BytesLengthSize+n:]
		}
	}
	shape := deduceShape(in.GetDims(), elems)
	if cfg.GetMaxBatchSize() > 0 {
		shape = append([]int64{1}, shape...)
	}
	return &pb.ModelInferRequest{
		ModelName:        model,
		ModelVersion:     version,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: in.GetName(), Datatype: datatype, Shape: shape}},
		RawInputContents: [][]byte{body},
	}, nil
}

// deduceShape fills the variable (-1) dims of a config shape so that it
// holds elems elements: the last variable dim takes what is left, earlier
// ones are 1.
func deduceShape(dims []int64, elems int64) []int64 {
	shape := make([]int64, len(dims))
	fixed, last := int64(1), -1
	for i, d := range dims {
		if d < 0 {
			shape[i], last = 1, i
		} else {
			shape[i] = d
			fixed *= d
		}
	}
	if last >= 0 && fixed > 0 {
		shape[last] = elems / fixed
	}
	return shape
}

// parseInferRequest turns the JSON part and the binary part of an infer
// body into the request the engine takes, with every input's data in raw
// form.
func parseInferRequest(jsonPart, binary []byte, model, version string, hold *budgetHold) (*pb.ModelInferRequest, outputForm, error) {
	var form outputForm
	if err := hold.grow(jsonRequestCost(jsonPart)); err != nil {
		return nil, form, err
	}
	var in kserve.InferRequest
	dec := json.NewDecoder(bytes.NewReader(jsonPart))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, form, badRequest("failed to parse the request JSON buffer: %s", errorText(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, form, badRequest("failed to parse the request JSON buffer: The document root must not be followed by other values.")
	}
	req := &pb.ModelInferRequest{
		ModelName:        model,
		ModelVersion:     version,
		Id:               in.ID,
		Inputs:           make([]*pb.ModelInferRequest_InferInputTensor, 0, len(in.Inputs)),
		RawInputContents: make([][]byte, 0, len(in.Inputs)),
	}
	for k, v := range in.Parameters {
		if k == "binary_data_output" {
			b, ok := v.(bool)
			if !ok {
				return nil, form, badRequest("parameter 'binary_data_output' must be a boolean")
			}
			form.binaryDefault = b
			continue
		}
		p, err := inferParameter(k, v)
		if err != nil {
			return nil, form, err
		}
		if req.Parameters == nil {
			req.Parameters = make(map[string]*pb.InferParameter, len(in.Parameters))
		}
		req.Parameters[k] = p
	}
	for _, t := range in.Inputs {
		_, inShm := t.Parameters[shmRegionParam]
		var raw []byte
		var err error
		if inShm {
			err = checkShmInput(&t)
		} else {
			raw, err = inputData(&t, &binary, model, hold)
		}
		if err != nil {
			return nil, form, err
		}
		tensor := &pb.ModelInferRequest_InferInputTensor{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
		for k, v := range t.Parameters {
			if k == "binary_data_size" {
				continue
			}
			p, err := inferParameter(k, v)
			if err != nil {
				return nil, form, err
			}
			if tensor.Parameters == nil {
				tensor.Parameters = make(map[string]*pb.InferParameter, len(t.Parameters))
			}
			tensor.Parameters[k] = p
		}
		req.Inputs = append(req.Inputs, tensor)
		if !inShm {
			req.RawInputContents = append(req.RawInputContents, raw)
		}
	}
	if len(binary) > 0 {
		return nil, form, badRequest("unexpected additional input data for model '%s'", textsafe.Bound(model))
	}
	for _, o := range in.Outputs {
		if err := checkShmOutput(o.Parameters); err != nil {
			return nil, form, err
		}
		out := &pb.ModelInferRequest_InferRequestedOutputTensor{Name: o.Name}
		for k, v := range o.Parameters {
			switch k {
			case "binary_data":
				b, ok := v.(bool)
				if !ok {
					return nil, form, badRequest("parameter 'binary_data' of output '%s' must be a boolean", textsafe.Bound(o.Name))
				}
				if form.binary == nil {
					form.binary = make(map[string]bool, len(in.Outputs))
				}
				form.binary[o.Name] = b
			default:
				p, err := inferParameter(k, v)
				if err != nil {
					return nil, form, err
				}
				if out.Parameters == nil {
					out.Parameters = make(map[string]*pb.InferParameter, len(o.Parameters))
				}
				out.Parameters[k] = p
			}
		}
		req.Outputs = append(req.Outputs, out)
	}
	return req, form, nil
}

// inferParameter converts a JSON parameter value to its protobuf form.
func inferParameter(key string, v any) (*pb.InferParameter, error) {
	switch x := v.(type) {
	case bool:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: x}}, nil
	case string:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: x}}, nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: n}}, nil
		}
		if n, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: n}}, nil
		}
		if f, err := x.Float64(); err == nil {
			return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: f}}, nil
		}
	}
	return nil, badRequest("parameter '%s' has an unsupported value type: it must be a boolean, number or string", textsafe.Bound(key))
}

// inputData returns an input's raw bytes: the next binary_data_size bytes
// of the binary part, or its JSON data converted.
func inputData(t *kserve.RequestInput, binary *[]byte, model string, hold *budgetHold) ([]byte, error) {
	if v, ok := t.Parameters["binary_data_size"]; ok {
		num, isNum := v.(json.Number)
		size, err := num.Int64()
		if !isNum || err != nil || size < 0 {
			return nil, badRequest("parameter 'binary_data_size' of input '%s' must be a non-negative integer", textsafe.Bound(t.Name))
		}
		if int64(len(*binary)) < size {
			return nil, badRequest("unexpected size for input '%s', expecting %d additional bytes for model '%s'", textsafe.Bound(t.Name), size-int64(len(*binary)), textsafe.Bound(model))
		}
		raw := (*binary)[:size:size]
		*binary = (*binary)[size:]
		return raw, nil
	}
	if len(t.Data) == 0 {
		return nil, badRequest("unable to find data for input tensor '%s' for model '%s' in request.", textsafe.Bound(t.Name), textsafe.Bound(model))
	}
	return jsonTensorData(t.Name, t.Datatype, t.Shape, t.Data, hold)
}
