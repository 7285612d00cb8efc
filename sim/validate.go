package sim

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// emptyFinalResponse is the one triton_* request parameter Triton accepts.
const emptyFinalResponse = "triton_enable_empty_final_response"

// varKeySeed hashes variable dimensions; any fixed seed will do.
var varKeySeed = maphash.MakeSeed()

func invalidArg(format string, args ...any) error {
	return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// requestError is INVALID_ARG with the prefix Triton's core puts on the
// errors it finds in a request (InferenceRequest::LogRequest): the
// request's id, or <id_unknown>.
func requestError(req *pb.ModelInferRequest, format string, args ...any) error {
	id := req.GetId()
	if id == "" {
		id = "<id_unknown>"
	}
	return &kserve.Error{Code: codes.InvalidArgument, Message: "[request id: " + textsafe.Bound(id) + "] " + fmt.Sprintf(format, args...)}
}

// prepare validates a request against the model the way Triton's gRPC
// frontend and core do before the request is queued, with Triton's
// messages, and returns it ready to enqueue. Errors here are not counted
// in the statistics, as on Triton.
func (m *model) prepare(req *pb.ModelInferRequest, share budgetShare) (*request, error) {
	if err := checkParameters(req.GetParameters()); err != nil {
		return nil, err
	}
	inputs := req.GetInputs()
	data, err := m.inputData(req)
	if err != nil {
		return nil, err
	}

	// Requested outputs, returned in config order.
	r := &request{req: req}
	if outs := req.GetOutputs(); len(outs) > 0 {
		want := make([]bool, len(m.outputs))
		for _, o := range outs {
			j, ok := m.outputIdx[o.GetName()]
			if !ok {
				return nil, invalidArg("unexpected inference output '%s' for model '%s'", textsafe.Bound(o.GetName()), m.name)
			}
			want[j] = true
			if p, ok := o.GetParameters()["classification"]; ok {
				if err := m.classification(r, j, p); err != nil {
					return nil, err
				}
			}
		}
		for j, w := range want {
			if w {
				r.outputs = append(r.outputs, j)
			}
		}
	} else {
		r.outputs = m.allOutputs()
	}

	// Input count, then batch size, as in InferenceRequest::Normalize.
	if len(inputs) != len(m.inputs) {
		return nil, m.inputCountError(req)
	}
	for _, in := range inputs {
		if _, ok := m.inputIdx[in.GetName()]; !ok {
			return nil, invalidArg("unexpected inference input '%s' for model '%s'", textsafe.Bound(in.GetName()), m.name)
		}
	}
	var batch int64
	if m.spec.MaxBatchSize > 0 {
		for i, in := range inputs {
			shape := in.GetShape()
			if len(shape) == 0 {
				return nil, requestError(req, "input '%s' has no shape but model requires batch dimension for '%s'", textsafe.Bound(in.GetName()), m.name)
			}
			if i == 0 {
				batch = shape[0]
			} else if shape[0] != batch {
				return nil, requestError(req, "input '%s' batch size does not match other inputs for '%s'", textsafe.Bound(in.GetName()), m.name)
			}
		}
		// Triton keeps the batch size unsigned: a negative one is huge.
		if batch < 0 || batch > int64(m.spec.MaxBatchSize) {
			return nil, requestError(req, "inference request batch-size must be <= %d for '%s'", m.spec.MaxBatchSize, m.name)
		}
	}

	r.data = make([][]byte, len(m.inputs))
	r.shapes = make([][]int64, len(m.inputs))
	var hash maphash.Hash
	hash.SetSeed(varKeySeed)
	for i, in := range inputs {
		j := m.inputIdx[in.GetName()]
		t := &m.inputs[j]
		// The protocol speaks "INT32", never the config's "TYPE_INT32".
		if got := tritonDataTypeString(in.GetDatatype()); got != t.datatype {
			return nil, requestError(req, "inference input '%s' data-type is '%s', but model '%s' expects '%s'", textsafe.Bound(in.GetName()), textsafe.Bound(got), m.name, t.datatype)
		}
		shape := in.GetShape()
		dims := shape
		if m.spec.MaxBatchSize > 0 {
			dims = shape[1:]
		}
		match := len(dims) == len(t.dims)
		for k := 0; match && k < len(dims); k++ {
			if dims[k] == -1 {
				return nil, requestError(req, "All input dimensions should be specified for input '%s' for model '%s', got %s", textsafe.Bound(in.GetName()), m.name, dimsText(shape))
			}
			if t.dims[k] != -1 && t.dims[k] != dims[k] {
				match = false
			} else if t.dims[k] == -1 {
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], uint64(dims[k]))
				hash.Write(b[:])
			}
		}
		for k := 0; match && k < len(dims); k++ {
			if dims[k] < 0 {
				match = false
			}
		}
		if !match {
			full := t.dims
			note := ""
			if m.spec.MaxBatchSize > 0 {
				full = append([]int64{-1}, t.dims...)
				note = "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."
			}
			return nil, requestError(req, "unexpected shape for input '%s' for model '%s'. Expected %s, got %s. %s", textsafe.Bound(in.GetName()), m.name, kserve.FormatDims(full), dimsText(shape), note)
		}
		if err := m.checkSize(req, t, shape, data[i]); err != nil {
			return nil, err
		}
		r.data[j] = data[i]
		r.shapes[j] = shape
		if j == 0 {
			r.itemLen = int(elementCount(dims))
		}
	}
	r.batch = max(1, int(batch))
	r.timeout = m.queueTimeout(req.GetParameters()["timeout"].GetInt64Param())
	r.varKey = hash.Sum64()
	// An ensemble computes no output itself: its steps' models check
	// theirs, and reserve them (ensembleRun.submit).
	var outBytes int64
	if !m.ensemble {
		n, err := m.checkOutputs(r)
		if err != nil {
			return nil, err
		}
		outBytes = n
	}
	if m.seq {
		if err := m.sequenceParameters(r); err != nil {
			return nil, err
		}
	}
	// Reserved last, so that no error above leaves it held.
	r.budget = share
	if err := r.budget.grow(outBytes); err != nil {
		return nil, err
	}
	return r, nil
}

// queueTimeout is how long, in ns, a request may wait in the queue (0: no
// limit), from the default queue policy and the request's "timeout"
// parameter (µs) as Triton's PolicyQueue::Enqueue decides: the parameter
// counts only when the policy allows an override, and only to shorten a
// default timeout.
func (m *model) queueTimeout(requestUS int64) int64 {
	db := m.spec.DynamicBatching
	if db == nil {
		return 0
	}
	us := db.DefaultTimeoutMicroseconds
	if db.AllowTimeoutOverride && requestUS > 0 && uint64(requestUS) < us {
		us = uint64(requestUS)
	}
	return int64(min(us, math.MaxInt64/1000)) * 1000
}

// allOutputs lists every output index.
func (m *model) allOutputs() []int {
	all := make([]int, len(m.outputs))
	for j := range all {
		all[j] = j
	}
	return all
}

// inputCountError is Triton's message for a wrong number of inputs.
func (m *model) inputCountError(req *pb.ModelInferRequest) error {
	inputs := req.GetInputs()
	// Triton builds both lists by appending "'name'," to "[" and dropping
	// the last character, so an empty list prints as "]".
	missing := "["
	for _, t := range m.inputs {
		found := false
		for _, in := range inputs {
			found = found || in.GetName() == t.name
		}
		if !found {
			missing += "'" + t.name + "',"
		}
	}
	missing = missing[:len(missing)-1] + "]"
	// Triton lists the request's inputs from its unordered_map: for a few
	// names in distinct buckets, libstdc++ iterates them newest first.
	got := "[]"
	if len(inputs) > 0 {
		got = "["
		for i := len(inputs) - 1; i >= 0; i-- {
			if len(inputs)-1-i == maxListed {
				got += fmt.Sprintf("… (%d in all),", len(inputs))
				break
			}
			got += "'" + textsafe.Bound(inputs[i].GetName()) + "',"
		}
		got = got[:len(got)-1] + "]"
	}
	return requestError(req, "expected %d inputs but got %d inputs for model '%s'. Got input(s) %s, but missing required input(s) %s. Please provide all required input(s).",
		len(m.inputs), len(inputs), m.name, got, missing)
}

// inputData returns each request input's raw bytes, in request order,
// with the gRPC frontend's rules (InferGRPCToInput): an input with typed
// contents uses them, others take the next raw_input_contents entry, and
// both at once are refused.
func (m *model) inputData(req *pb.ModelInferRequest) ([][]byte, error) {
	inputs := req.GetInputs()
	raw := req.GetRawInputContents()
	data := make([][]byte, len(inputs))
	next := 0
	seen := make(map[string]bool, len(inputs))
	for i, in := range inputs {
		// The frontend adds each input before it looks for its data.
		if seen[in.GetName()] {
			return nil, requestError(req, "input '%s' already exists in request", textsafe.Bound(in.GetName()))
		}
		seen[in.GetName()] = true
		c := in.GetContents()
		switch {
		case c != nil && len(raw) > 0:
			return nil, invalidArg("contents field must not be specified when using raw_input_contents for '%s' for model '%s'", textsafe.Bound(in.GetName()), m.name)
		case c != nil:
			b, err := m.contentsBytes(in, c)
			if err != nil {
				return nil, err
			}
			data[i] = b
		case next < len(raw):
			data[i] = raw[next]
			next++
		default:
			return nil, invalidArg("unable to find data for input tensor '%s' for model '%s' in request.", textsafe.Bound(in.GetName()), m.name)
		}
	}
	// raw_input_contents entries beyond the inputs are ignored, as Triton's
	// gRPC frontend ignores them.
	return data, nil
}

// contentsBytes serialises typed contents as raw little-endian data. Each
// non-empty contents field must be the one for the input's datatype, and
// only one may be set, as in Triton's gRPC frontend; BYTES elements get
// the length framing.
func (m *model) contentsBytes(in *pb.ModelInferRequest_InferInputTensor, c *pb.InferTensorContents) ([]byte, error) {
	dt := in.GetDatatype()
	var out []byte
	set := false
	use := func(n int, fieldType string) error {
		if n == 0 {
			return nil
		}
		if set {
			return invalidArg("unexpected explicit tensor data for input tensor '%s' for model '%s', binary data was already supplied.", textsafe.Bound(in.GetName()), m.name)
		}
		if fieldType != dt {
			return invalidArg("unexpected explicit tensor data for input tensor '%s' for model '%s' of type '%s', expected datatype '%s'", textsafe.Bound(in.GetName()), m.name, fieldType, tritonDataTypeString(dt))
		}
		set = true
		return nil
	}
	le := binary.LittleEndian
	if err := use(len(c.GetBoolContents()), "BOOL"); err != nil {
		return nil, err
	}
	for _, v := range c.GetBoolContents() {
		b := byte(0)
		if v {
			b = 1
		}
		out = append(out, b)
	}
	intType := "INT32"
	if dt == "INT8" || dt == "INT16" {
		intType = dt
	}
	if err := use(len(c.GetIntContents()), intType); err != nil {
		return nil, err
	}
	for _, v := range c.GetIntContents() {
		switch dt {
		case "INT8":
			out = append(out, byte(v))
		case "INT16":
			out = le.AppendUint16(out, uint16(v))
		default:
			out = le.AppendUint32(out, uint32(v))
		}
	}
	if err := use(len(c.GetInt64Contents()), "INT64"); err != nil {
		return nil, err
	}
	for _, v := range c.GetInt64Contents() {
		out = le.AppendUint64(out, uint64(v))
	}
	uintType := "UINT32"
	if dt == "UINT8" || dt == "UINT16" {
		uintType = dt
	}
	if err := use(len(c.GetUintContents()), uintType); err != nil {
		return nil, err
	}
	for _, v := range c.GetUintContents() {
		switch dt {
		case "UINT8":
			out = append(out, byte(v))
		case "UINT16":
			out = le.AppendUint16(out, uint16(v))
		default:
			out = le.AppendUint32(out, v)
		}
	}
	if err := use(len(c.GetUint64Contents()), "UINT64"); err != nil {
		return nil, err
	}
	for _, v := range c.GetUint64Contents() {
		out = le.AppendUint64(out, v)
	}
	if err := use(len(c.GetFp32Contents()), "FP32"); err != nil {
		return nil, err
	}
	for _, v := range c.GetFp32Contents() {
		out = le.AppendUint32(out, math.Float32bits(v))
	}
	if err := use(len(c.GetFp64Contents()), "FP64"); err != nil {
		return nil, err
	}
	for _, v := range c.GetFp64Contents() {
		out = le.AppendUint64(out, math.Float64bits(v))
	}
	if err := use(len(c.GetBytesContents()), "BYTES"); err != nil {
		return nil, err
	}
	if len(c.GetBytesContents()) > 0 {
		out = kserve.EncodeBytes(c.GetBytesContents())
	}
	return out, nil
}

// tritonDataTypeString names a request datatype as Triton prints it:
// unknown ones, including the config's "TYPE_INT32" spelling, are
// "<invalid>".
func tritonDataTypeString(datatype string) string {
	if dt, ok := kserve.ParseDataType(datatype); ok && !strings.HasPrefix(datatype, "TYPE_") {
		return kserve.DataTypeString(dt)
	}
	return "<invalid>"
}

// checkParameters checks request parameters the way Triton's gRPC frontend
// does (SetInferenceRequestMetadata).
func checkParameters(params map[string]*pb.InferParameter) error {
	for k, p := range params {
		switch k {
		case "sequence_id":
			switch p.GetParameterChoice().(type) {
			case *pb.InferParameter_Int64Param, *pb.InferParameter_StringParam:
			default:
				return invalidArg("invalid value type for 'sequence_id' parameter, expected int64_param or string_param.")
			}
		case "sequence_start", "sequence_end", emptyFinalResponse:
			if _, ok := p.GetParameterChoice().(*pb.InferParameter_BoolParam); !ok {
				return invalidArg("invalid value type for '%s' parameter, expected bool_param.", textsafe.Bound(k))
			}
		case "priority":
			switch v := p.GetParameterChoice().(type) {
			case *pb.InferParameter_Int64Param:
				if v.Int64Param < 0 {
					return invalidArg("invalid value for 'priority', expected value >= 0.")
				}
			case *pb.InferParameter_Uint64Param:
			default:
				return invalidArg("invalid value type for 'priority' parameter, expected int64_param or uint64_param.")
			}
		case "timeout":
			if _, ok := p.GetParameterChoice().(*pb.InferParameter_Int64Param); !ok {
				return invalidArg("invalid value type for 'timeout' parameter, expected int64_param.")
			}
		default:
			if strings.HasPrefix(k, "triton_") {
				return invalidArg("parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: %s", emptyFinalResponse)
			}
			switch p.GetParameterChoice().(type) {
			case *pb.InferParameter_Int64Param, *pb.InferParameter_BoolParam, *pb.InferParameter_StringParam, *pb.InferParameter_DoubleParam:
			default:
				return invalidArg("invalid value type for '%s' parameter, expected int64_param, bool_param, or string_param.", textsafe.Bound(k))
			}
		}
	}
	return nil
}

// elementCount is the product of dims (1 for a scalar).
func elementCount(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// checkedElementCount is the product of dims (all ≥ 0), and whether that
// product times size fits in an int64.
func checkedElementCount(dims []int64, size int) (int64, bool) {
	n := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	hi, lo := bits.Mul64(n, uint64(size))
	return int64(n), hi == 0 && lo <= math.MaxInt64
}

// checkSize checks an input's data against its shape: the exact byte size,
// or for BYTES the framing and the element count.
func (m *model) checkSize(req *pb.ModelInferRequest, t *tensorInfo, shape []int64, data []byte) error {
	n, ok := checkedElementCount(shape, max(1, t.size))
	if !ok {
		// The product wrapped around: no data can be that large.
		return requestError(req, "input byte size mismatch for input '%s' for model '%s'. Expected more than %d, got %d", t.name, m.name, int64(math.MaxInt64), len(data))
	}
	if t.size > 0 {
		if want := n * int64(t.size); int64(len(data)) != want {
			return requestError(req, "input byte size mismatch for input '%s' for model '%s'. Expected %d, got %d", t.name, m.name, want, len(data))
		}
		return nil
	}
	var count int64
	for b := data; len(b) > 0; {
		if len(b) < 4 {
			return requestError(req, "incomplete string length indicator for inference input '%s' for model '%s', expecting 4 bytes but only %d bytes available. Please make sure the string length indicator is in one buffer.", t.name, m.name, len(b))
		}
		l := int64(binary.LittleEndian.Uint32(b))
		b = b[4:]
		// Triton stops at the first element too many.
		if count++; count > n {
			return requestError(req, "unexpected number of string elements %d for inference input '%s' for model '%s', expecting %d", count, t.name, m.name, n)
		}
		// A last element cut short passes, as in Triton 2.73: it fails, if
		// at all, where the output is written.
		b = b[min(l, int64(len(b))):]
	}
	if count != n {
		return requestError(req, "expected %d string elements for inference input '%s' for model '%s', got %d", n, t.name, m.name, count)
	}
	return nil
}
