package sim

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
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

// infer answers POST /v2/models/{m}[/versions/{v}]/infer in Triton's
// order: the model and its transaction policy, the body's lengths (these
// errors are text/plain), the body (JSON errors from here), the request's
// checks, then its execution (text/plain again, as Triton answers a
// failed response).
func (h *httpHandler) infer(w http.ResponseWriter, r *http.Request, model, version string) {
	mv, err := h.engine.readyVersion(model, version)
	if err == nil && mv.model.spec.Decoupled {
		err = errDecoupledHTTP
	}
	if err != nil {
		writeError(w, err)
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
	headerLen := len(body)
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
	jsonReply(w)
	var (
		req  *pb.ModelInferRequest
		form outputForm
	)
	if headerLen == 0 {
		req, err = h.rawBinaryRequest(model, version, body)
		form.binaryDefault = true
	} else {
		req, form, err = parseInferRequest(body[:headerLen], body[headerLen:], model, version, h.limits.MaxInputSize, hold)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	resp, late, err := h.engine.inferStaged(r.Context(), req, hold)
	if err != nil {
		if late {
			w.Header().Set("Content-Type", "text/plain")
		}
		writeError(w, err)
		return
	}
	out, headerLen, err := encodeInferResponse(resp, req.GetId(), &form, hold)
	if err != nil {
		w.Header().Set("Content-Type", "text/plain")
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
