package sim

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

func appendUint(b []byte, n uint64, size int) []byte {
	for i := range size {
		b = append(b, byte(n>>(8*i)))
	}
	return b
}

// encodeInferResponse writes an infer response's body: its JSON part,
// followed by the binary data of the outputs asked for as binary. headerLen
// is the JSON part's length when there is binary data, else -1. What the
// JSON text may take is reserved in hold first (the outputs' binary copy
// was reserved with the outputs).
func encodeInferResponse(resp *pb.ModelInferResponse, id string, form *outputForm, hold *budgetHold) (body []byte, headerLen int, err error) {
	raws := resp.GetRawOutputContents()
	raw := func(i int) []byte {
		if i < len(raws) {
			return raws[i]
		}
		return nil
	}
	text, binLen := int64(256+6*len(id)), 0
	for i, o := range resp.GetOutputs() {
		text += 64 + 6*int64(len(o.GetName())) + 21*int64(len(o.GetShape()))
		if _, inShm := o.GetParameters()[shmRegionParam]; inShm {
			continue
		}
		if form.isBinary(o.GetName()) {
			binLen += len(raw(i))
			continue
		}
		text += jsonDataBound(o.GetDatatype(), raw(i), kserve.ElementCount(o.GetShape()))
	}
	if err := hold.grow(text); err != nil {
		return nil, -1, err
	}
	h := make([]byte, 0, min(text, 1<<30))
	h = append(h, '{')
	if id != "" {
		h = append(h, `"id":`...)
		h = append(h, jsonString(id)...)
		h = append(h, ',')
	}
	h = append(h, `"model_name":`...)
	h = append(h, jsonString(resp.GetModelName())...)
	h = append(h, `,"model_version":`...)
	h = append(h, jsonString(resp.GetModelVersion())...)
	if len(resp.GetParameters()) > 0 {
		h = append(h, `,"parameters":`...)
		h = appendParameters(h, resp.GetParameters())
	}
	h = append(h, `,"outputs":[`...)
	for i, o := range resp.GetOutputs() {
		if i > 0 {
			h = append(h, ',')
		}
		if h, err = appendOutputJSON(h, o, raw(i), form); err != nil {
			return nil, -1, err
		}
	}
	h = append(h, ']', '}')
	if binLen == 0 {
		// No binary data (none asked for, or all empty): a JSON body.
		return h, -1, nil
	}
	body = make([]byte, 0, len(h)+binLen)
	body = append(body, h...)
	for i, o := range resp.GetOutputs() {
		if _, inShm := o.GetParameters()[shmRegionParam]; !inShm && form.isBinary(o.GetName()) {
			body = append(body, raw(i)...)
		}
	}
	return body, len(h), nil
}

// appendOutputJSON writes one output's object of an infer response.
func appendOutputJSON(h []byte, o *pb.ModelInferResponse_InferOutputTensor, raw []byte, form *outputForm) ([]byte, error) {
	h = append(h, `{"name":`...)
	h = append(h, jsonString(o.GetName())...)
	h = append(h, `,"datatype":`...)
	h = append(h, jsonString(o.GetDatatype())...)
	h = append(h, `,"shape":[`...)
	for j, d := range o.GetShape() {
		if j > 0 {
			h = append(h, ',')
		}
		h = strconv.AppendInt(h, d, 10)
	}
	h = append(h, ']')
	if _, inShm := o.GetParameters()[shmRegionParam]; inShm {
		// Written into its region: no data in the body.
		return append(h, '}'), nil
	}
	if form.isBinary(o.GetName()) {
		h = append(h, `,"parameters":{"binary_data_size":`...)
		h = strconv.AppendInt(h, int64(len(raw)), 10)
		return append(h, '}', '}'), nil
	}
	h = append(h, `,"data":`...)
	h, err := appendJSONData(h, o.GetDatatype(), raw, kserve.ElementCount(o.GetShape()))
	if err != nil && o.GetDatatype() == "BYTES" {
		// Elements cut short (Triton passes a last input string cut
		// short, and an identity model returns it as it is).
		return nil, &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf("output tensor shape does not match size of output for '%s'", textsafe.Bound(o.GetName()))}
	}
	if err != nil {
		return nil, badRequest("failed to write output '%s' as JSON: %v", textsafe.Bound(o.GetName()), err)
	}
	return append(h, '}'), nil
}

// jsonDataBound is the most bytes appendJSONData writes for raw: the
// longest text of an element of the datatype and its comma, per element
// (a BYTES element's bytes may each take six, \u00XX, plus its quotes).
func jsonDataBound(datatype string, raw []byte, elems int64) int64 {
	perElem := int64(25) // FP64: -2.2250738585072014e-308,
	switch datatype {
	case "BOOL":
		perElem = 6
	case "INT8", "UINT8", "UINT16", "INT16":
		perElem = 7
	case "INT32", "UINT32":
		perElem = 12
	case "INT64", "UINT64":
		perElem = 21
	case "FP16", "BF16", "FP32":
		perElem = 16
	case "BYTES":
		return 2 + 6*int64(len(raw)) + 3*max(elems, 0)
	}
	if size := kserve.ElementSize(datatype); size > 0 {
		elems = int64(len(raw) / size)
	}
	return 2 + perElem*max(elems, 0)
}

// appendParameters writes response parameters as a JSON object in the
// order Triton writes them: an ensemble's sequence_id, sequence_start and
// sequence_end first, as its ensemble scheduler adds them, then the others
// sorted (the identity backend's param0 to param3).
func appendParameters(b []byte, params map[string]*pb.InferParameter) []byte {
	b = append(b, '{')
	for i, k := range slices.SortedFunc(maps.Keys(params), compareParameters) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, jsonString(k)...)
		b = append(b, ':')
		switch p := params[k].GetParameterChoice().(type) {
		case *pb.InferParameter_BoolParam:
			b = strconv.AppendBool(b, p.BoolParam)
		case *pb.InferParameter_Int64Param:
			b = strconv.AppendInt(b, p.Int64Param, 10)
		case *pb.InferParameter_Uint64Param:
			b = strconv.AppendUint(b, p.Uint64Param, 10)
		case *pb.InferParameter_DoubleParam:
			b = appendJSONFloat(b, p.DoubleParam, 64)
		case *pb.InferParameter_StringParam:
			b = append(b, jsonString(p.StringParam)...)
		default:
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// compareParameters orders response parameter names as appendParameters
// writes them.
func compareParameters(a, b string) int {
	if c := cmp.Compare(parameterRank(a), parameterRank(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// parameterRank places the sequence parameters before the others.
func parameterRank(name string) int {
	switch name {
	case "sequence_id":
		return 0
	case "sequence_start":
		return 1
	case "sequence_end":
		return 2
	}
	return 3
}

// appendJSONFloat writes a float as Triton's JSON writer (rapidjson) does
// (appendRapidJSONDouble): an FP32 value widened to a double first, as
// Triton appends it, so 0.1 reads 0.10000000149011612.
func appendJSONFloat(b []byte, f float64, _ int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...) // JSON has no NaN or infinity
	}
	return appendRapidJSONDouble(b, f)
}

// appendJSONData writes raw tensor data as a flat JSON array.
func appendJSONData(b []byte, datatype string, raw []byte, elems int64) ([]byte, error) {
	b = append(b, '[')
	if datatype == "BYTES" {
		strs, err := kserve.DecodeBytes(raw, int(elems))
		if err != nil {
			return nil, err
		}
		for i, s := range strs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, jsonString(string(s))...)
		}
		return append(b, ']'), nil
	}
	size := kserve.ElementSize(datatype)
	if size <= 0 {
		return nil, fmt.Errorf("unknown datatype %q", datatype)
	}
	if len(raw)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %s elements", len(raw), datatype)
	}
	le := binary.LittleEndian
	for i := 0; i+size <= len(raw); i += size {
		if i > 0 {
			b = append(b, ',')
		}
		e := raw[i : i+size]
		switch datatype {
		case "BOOL":
			b = strconv.AppendBool(b, e[0] != 0)
		case "INT8":
			b = strconv.AppendInt(b, int64(int8(e[0])), 10)
		case "INT16":
			b = strconv.AppendInt(b, int64(int16(le.Uint16(e))), 10)
		case "INT32":
			b = strconv.AppendInt(b, int64(int32(le.Uint32(e))), 10)
		case "INT64":
			b = strconv.AppendInt(b, int64(le.Uint64(e)), 10)
		case "UINT8":
			b = strconv.AppendUint(b, uint64(e[0]), 10)
		case "UINT16":
			b = strconv.AppendUint(b, uint64(le.Uint16(e)), 10)
		case "UINT32":
			b = strconv.AppendUint(b, uint64(le.Uint32(e)), 10)
		case "UINT64":
			b = strconv.AppendUint(b, le.Uint64(e), 10)
		case "FP32":
			b = appendJSONFloat(b, float64(math.Float32frombits(le.Uint32(e))), 32)
		case "FP64":
			b = appendJSONFloat(b, math.Float64frombits(le.Uint64(e)), 64)
		case "FP16":
			b = appendJSONFloat(b, float64(halfToFloat(le.Uint16(e))), 32)
		case "BF16":
			b = appendJSONFloat(b, float64(math.Float32frombits(uint32(le.Uint16(e))<<16)), 32)
		}
	}
	return append(b, ']'), nil
}

// halfToFloat widens an IEEE 754 half-precision value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(frac) / 1024 / 16384 // subnormal: frac × 2^-24
		if sign != 0 {
			return -f
		}
		return f
	default:
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	}
}
