package sim

import (
	"math"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// parseInferRequest turns the JSON part and the binary part of an infer
// body into the request the engine takes, every input's data in raw form,
// as Triton's HTTP frontend reads it (EVBufferToInput): the id, then the
// parameters in the document's order, then the inputs in order (each
// checked, named, typed, shaped and given its data before the next), the
// binary part used up, then the outputs; the first error found is the
// answer, in Triton's words. maxInput bounds an input's JSON data in
// bytes (--http-max-input-size). The document is read where it lies, never
// decoded into a tree of values: what the request built from it may take
// (jsonDocCost) is reserved in hold before it is parsed, and each input's
// tensor before it is decoded.
func parseInferRequest(jsonPart, binary []byte, model, version string, maxInput int64, hold *budgetHold) (*pb.ModelInferRequest, outputForm, error) {
	var form outputForm
	if err := hold.grow(jsonDocCost(jsonPart)); err != nil {
		return nil, form, err
	}
	doc, err := parseBody(jsonPart, hold)
	if err != nil {
		return nil, form, err
	}
	req := &pb.ModelInferRequest{ModelName: model, ModelVersion: version}
	if id, ok := doc.find("id"); ok {
		if req.Id, err = id.stringOr(); err != nil {
			return nil, form, withPrefix("Unable to parse 'id'", err)
		}
	}
	if p, ok := doc.find("parameters"); ok {
		if req.Parameters, err = requestParameters(p, &form); err != nil {
			return nil, form, err
		}
	}
	inputs, err := doc.memberArray("inputs")
	if err != nil {
		return nil, form, withPrefix("Unable to parse 'inputs'", err)
	}
	req.Inputs = make([]*pb.ModelInferRequest_InferInputTensor, 0, 4)
	req.RawInputContents = make([][]byte, 0, 4)
	seen := make(map[string]bool, 4) // the names so far, inputs then outputs
	inputs.each(func(_, in jval) bool {
		err = parseInput(req, in, &binary, maxInput, seen, hold)
		return err == nil
	})
	if err != nil {
		return nil, form, err
	}
	if len(binary) > 0 {
		return nil, form, badRequest("unexpected additional input data for model '%s'", textsafe.Bound(model))
	}
	if _, ok := doc.find("outputs"); ok {
		outs, err := doc.memberArray("outputs")
		if err != nil {
			return nil, form, withPrefix("Unable to parse 'outputs'", err)
		}
		clear(seen)
		outs.each(func(_, o jval) bool {
			err = parseOutput(req, o, &form, seen)
			return err == nil
		})
		if err != nil {
			return nil, form, err
		}
	}
	return req, form, nil
}

// requestParameters reads a request's parameters as Triton's HTTP
// frontend does (ParseJsonTritonParams).
func requestParameters(p jval, form *outputForm) (map[string]*pb.InferParameter, error) {
	if !p.isObject() {
		return nil, withPrefix("failed to get request params.", tjError(tjNotObject))
	}
	out := map[string]*pb.InferParameter{}
	var err error
	p.each(func(k, v jval) bool {
		key, _ := k.asString()
		var param *pb.InferParameter
		param, err = requestParameter(key, v, form)
		if err == nil && param != nil {
			out[key] = param
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// requestParameter is one request parameter in its gRPC form (nil for
// binary_data_output, which only says how to write the outputs).
func requestParameter(key string, v jval, form *outputForm) (*pb.InferParameter, error) {
	switch key {
	case "sequence_id":
		if n, ok := v.asUint(); ok {
			return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(n)}}, nil
		}
		s, err := v.stringOr()
		if err != nil {
			return nil, withPrefix("Unable to parse 'sequence_id'", err)
		}
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: s}}, nil
	case "sequence_start", "sequence_end", "binary_data_output":
		b, err := v.boolOr()
		if err != nil {
			return nil, withPrefix("Unable to parse '"+key+"'", err)
		}
		if key == "binary_data_output" {
			form.binaryDefault = b
			return nil, nil
		}
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: b}}, nil
	case "priority", "timeout":
		n, err := v.uintOr()
		if err != nil {
			return nil, withPrefix("Unable to parse '"+key+"'", err)
		}
		if key == "priority" {
			return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: n}}, nil
		}
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(min(n, math.MaxInt64))}}, nil
	}
	if strings.HasPrefix(key, "triton_") {
		return nil, badRequest("parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.")
	}
	if s, ok := v.asString(); ok {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: s}}, nil
	}
	if n, ok := v.asInt(); ok {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: n}}, nil
	}
	if b, ok := v.asBool(); ok {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: b}}, nil
	}
	if f, ok := v.asDouble(); ok {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: f}}, nil
	}
	return nil, badRequest("parameter '%s' has invalid type. It should be either 'int', 'bool', or 'string'.", textsafe.Bound(key))
}

// parseInput reads one input (ParseJsonTritonIO's loop) into req: its
// data from the binary part (consumed), shared memory (left to the engine)
// or JSON.
func parseInput(req *pb.ModelInferRequest, in jval, binary *[]byte, maxInput int64, seen map[string]bool, hold *budgetHold) error {
	if err := checkInputContent(in); err != nil {
		return err
	}
	name, err := in.memberString("name")
	if err != nil {
		return withPrefix("Unable to parse 'name'", err)
	}
	datatype, err := in.memberString("datatype")
	if err != nil {
		return withPrefix("Unable to parse 'datatype'", err)
	}
	shapeJSON, err := in.memberArray("shape")
	if err != nil {
		return withPrefix("Unable to parse 'shape'", err)
	}
	shape := make([]int64, 0, 4)
	shapeJSON.each(func(_, d jval) bool {
		var n uint64
		n, err = d.uintOr()
		shape = append(shape, int64(n))
		return err == nil
	})
	if err != nil {
		return withPrefix("Unable to parse 'shape'", err)
	}
	if seen[name] {
		return requestError(req, "input '%s' already exists in request", textsafe.Bound(name))
	}
	seen[name] = true
	tensor := &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: datatype, Shape: shape}
	params, _ := in.find("parameters")
	if size, ok := params.find("binary_data_size"); ok {
		n, err := size.uintOr()
		if err != nil {
			return withPrefix("Unable to parse 'binary_data_size'", err)
		}
		if uint64(len(*binary)) < n {
			return badRequest("unexpected size for input '%s', expecting %d additional bytes for model '%s'", textsafe.Bound(name), n-uint64(len(*binary)), textsafe.Bound(req.GetModelName()))
		}
		req.Inputs = append(req.Inputs, tensor)
		req.RawInputContents = append(req.RawInputContents, (*binary)[:n:n])
		*binary = (*binary)[n:]
		return nil
	}
	if params.has(shmRegionParam) {
		if tensor.Parameters, err = shmTensorParams(params); err != nil {
			return err
		}
		req.Inputs = append(req.Inputs, tensor)
		return nil
	}
	raw, err := jsonInputData(in, name, datatype, shape, maxInput, hold)
	if err != nil {
		return err
	}
	req.Inputs = append(req.Inputs, tensor)
	req.RawInputContents = append(req.RawInputContents, raw)
	return nil
}

// checkInputContent is Triton's ValidateInputContentType: an input has
// exactly one of data, binary_data_size and shared_memory_region.
func checkInputContent(in jval) error {
	hasData := in.has("data")
	params, _ := in.find("parameters")
	hasBinary := params.has("binary_data_size")
	hasShm := params.has(shmRegionParam)
	n := boolInt(hasData) + boolInt(hasBinary) + boolInt(hasShm)
	if n == 1 {
		return nil
	}
	msg := "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But"
	if n == 0 {
		return invalidArg("%s no field is set", msg)
	}
	msg += " set"
	if hasData {
		msg += " 'data'"
	}
	if hasBinary {
		msg += " 'binary_data_size'"
	}
	if hasShm {
		msg += " 'shared_memory_region'"
	}
	return invalidArg("%s", msg)
}

// shmTensorParams reads a tensor's shared-memory parameters as Triton's
// HTTP frontend does (CheckSharedMemoryData), in the gRPC form the engine
// takes; an unset byte size is 0.
func shmTensorParams(params jval) (map[string]*pb.InferParameter, error) {
	out := make(map[string]*pb.InferParameter, 3)
	r, _ := params.find(shmRegionParam)
	region, err := r.stringOr()
	if err != nil {
		return nil, withPrefix("Unable to parse 'shared_memory_region'", err)
	}
	out[shmRegionParam] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: region}}
	for _, k := range []string{shmOffsetParam, shmByteSizeParam} {
		var n uint64
		if v, ok := params.find(k); ok {
			if n, err = v.uintOr(); err != nil {
				return nil, withPrefix("Unable to parse '"+k+"'", err)
			}
		}
		out[k] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(min(n, math.MaxInt64))}}
	}
	return out, nil
}

// parseOutput reads one requested output into req and form.
func parseOutput(req *pb.ModelInferRequest, o jval, form *outputForm, seen map[string]bool) error {
	params, _ := o.find("parameters")
	if params.has(shmRegionParam) {
		if params.has("classification") {
			return invalidArg("Output can't set both 'shared_memory_region' and 'classification'")
		}
		if v, ok := params.find("binary_data"); ok {
			b, err := v.boolOr()
			if err != nil {
				return withPrefix("Unable to set 'binary_data'", err)
			}
			if b {
				return invalidArg("Output can't set both 'shared_memory_region' and 'binary_data'")
			}
		}
	}
	name, err := o.memberString("name")
	if err != nil {
		return withPrefix("Unable to parse 'name'", err)
	}
	if seen[name] {
		return requestError(req, "output '%s' already exists in request", textsafe.Bound(name))
	}
	seen[name] = true
	out := &pb.ModelInferRequest_InferRequestedOutputTensor{Name: name}
	if v, ok := params.find("classification"); ok {
		n, err := v.uintOr()
		if err != nil {
			return withPrefix("Unable to set 'classification'", err)
		}
		if n > 0 {
			out.Parameters = map[string]*pb.InferParameter{"classification": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(min(n, math.MaxInt64))}}}
		}
	}
	if params.has(shmRegionParam) {
		if out.Parameters, err = shmTensorParams(params); err != nil {
			return err
		}
	} else if v, ok := params.find("binary_data"); ok {
		b, err := v.boolOr()
		if err != nil {
			return withPrefix("Unable to parse 'binary_data'", err)
		}
		if form.binary == nil {
			form.binary = make(map[string]bool, 2)
		}
		form.binary[name] = b
	}
	req.Outputs = append(req.Outputs, out)
	return nil
}

// jsonInputData converts an input's JSON "data" to its raw form as
// Triton's HTTP frontend does: no data is read for an input of no
// elements; BYTES take the strings' lengths, other types the shape's
// element count. The tensor's bytes are reserved in hold before it is
// decoded.
func jsonInputData(in jval, name, datatype string, shape []int64, maxInput int64, hold *budgetHold) ([]byte, error) {
	count := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, invalidArg("invalid shape for input '%s': shape %s contains one or more invalid dimensions", textsafe.Bound(name), dimsText(shape))
		}
		if d != 0 && count > math.MaxInt64/d {
			return nil, invalidArg("invalid shape for input '%s': shape %s causes total element count to exceed maximum size of %d", textsafe.Bound(name), dimsText(shape), int64(math.MaxInt64))
		}
		count *= d
	}
	if count == 0 {
		return []byte{}, nil
	}
	data, err := in.memberArray("data")
	if err != nil {
		return nil, withPrefix("Unable to parse 'data'", err)
	}
	var size int64
	if datatype == "BYTES" {
		if size, err = jsonBytesSize(data, 0); err != nil {
			return nil, err
		}
	} else {
		elem := int64(max(kserve.ElementSize(datatype), 0))
		if elem > 1 && count > math.MaxInt64/elem {
			return nil, invalidArg("byte size overflow for input '%s': element count (%d) * data type size (%d) exceeds maximum allowed size (%d)", textsafe.Bound(name), count, elem, int64(math.MaxInt64))
		}
		size = count * elem
	}
	if size > maxInput {
		return nil, invalidArg("JSON input '%s' has a byte_size (%d bytes) that exceeds the maximum allowed value of %d bytes. Use --http-max-input-size to increase the limit.", textsafe.Bound(name), size, maxInput)
	}
	switch datatype {
	case "FP16", "BF16":
		return nil, invalidArg("receiving %s data via JSON is not supported. Please use the binary data format for input %s", datatype, textsafe.Bound(name))
	}
	if kserve.ElementSize(datatype) == 0 && datatype != "BYTES" {
		return nil, invalidArg("invalid datatype for input %s", textsafe.Bound(name))
	}
	expected := count
	if datatype == "BYTES" {
		expected = size
	}
	// The tensor, decoded into one buffer of its final size.
	if err := hold.grow(size); err != nil {
		return nil, err
	}
	r := jsonTensorReader{datatype: datatype, expected: expected, out: make([]byte, 0, size)}
	if err := r.read(data, 0); err != nil {
		return nil, withPrefix("Unable to parse 'data'", err)
	}
	if r.counter != expected {
		return nil, tjError("Failed to parse 'data' field: shape does not match true shape")
	}
	return r.out, nil
}

// maxJSONDepth is Triton's HTTP_MAX_JSON_NESTING_DEPTH.
const maxJSONDepth = 100

func errJSONDepth() error {
	return invalidArg("JSON nesting depth exceeds maximum allowed limit (%d)", maxJSONDepth)
}

// jsonBytesSize is the serialized size of a BYTES input's JSON strings
// (JsonBytesArrayByteSize).
func jsonBytesSize(v jval, depth int) (int64, error) {
	if depth >= maxJSONDepth {
		return 0, errJSONDepth()
	}
	if !v.isArray() {
		n, ok := v.stringLen()
		if !ok {
			return 0, withPrefix("Unable to parse JSON bytes array", tjError(tjNotString))
		}
		return int64(n) + kserve.BytesLengthSize, nil
	}
	var total int64
	var err error
	v.each(func(_, e jval) bool {
		var n int64
		n, err = jsonBytesSize(e, depth+1)
		total += n
		return err == nil
	})
	return total, err
}

// jsonTensorReader reads JSON tensor data element by element, as Triton's
// ReadDataFromJsonHelper: nested arrays are walked in order, counter
// counts elements (bytes for BYTES) and an element past expected fails.
type jsonTensorReader struct {
	datatype string
	expected int64
	counter  int64
	out      []byte
}

func (r *jsonTensorReader) read(v jval, depth int) error {
	if depth >= maxJSONDepth {
		return errJSONDepth()
	}
	if v.isArray() {
		var err error
		v.each(func(_, e jval) bool {
			err = r.read(e, depth+1)
			return err == nil
		})
		return err
	}
	if r.datatype != "BYTES" && r.counter >= r.expected {
		return tjError("Shape does not match true shape of 'data' field")
	}
	switch r.datatype {
	case "BYTES":
		n, ok := v.stringLen()
		if !ok {
			return tjError(tjNotString)
		}
		if r.counter+int64(n)+kserve.BytesLengthSize > r.expected {
			return tjError("shape does not match true shape of 'data' field")
		}
		if n == len(v.b)-2 {
			// No escapes: the text is the value, copied once, into out.
			r.out = kserve.AppendBytesElement(r.out, v.b[1:len(v.b)-1])
		} else {
			s, _ := v.asString()
			r.out = kserve.AppendBytesElement(r.out, s)
		}
		r.counter += int64(n) + kserve.BytesLengthSize
		return nil
	case "BOOL":
		b, ok := v.asBool()
		if !ok {
			return tjError(tjNotBool)
		}
		r.out = append(r.out, byte(boolInt(b)))
	case "UINT8", "UINT16", "UINT32", "UINT64":
		n, ok := v.asUint()
		if !ok {
			return tjError(tjNotUint)
		}
		r.out = appendUint(r.out, n, kserve.ElementSize(r.datatype))
	case "INT8", "INT16", "INT32", "INT64":
		n, ok := v.asInt()
		if !ok {
			return tjError(tjNotInt)
		}
		r.out = appendUint(r.out, uint64(n), kserve.ElementSize(r.datatype))
	case "FP32", "FP64":
		f, ok := v.asDouble()
		if !ok {
			return tjError(tjNotNumber)
		}
		if r.datatype == "FP32" {
			r.out = appendUint(r.out, uint64(math.Float32bits(float32(f))), 4)
		} else {
			r.out = appendUint(r.out, math.Float64bits(f), 8)
		}
	}
	r.counter++
	return nil
}
