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

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

func appendUint(b []byte, n uint64, size int) []byte {
	for i := range size {
		b = append(b, byte(n>>(8*i)))
	}
	return b
}

// encodeInferResponse writes the JSON part of an infer response and
// gathers the binary part (nil when every output is JSON).
func encodeInferResponse(resp *pb.ModelInferResponse, id string, form *outputForm) (header, bin []byte, err error) {
	h := make([]byte, 0, 256)
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
	raws := resp.GetRawOutputContents()
	for i, o := range resp.GetOutputs() {
		if i > 0 {
			h = append(h, ',')
		}
		var raw []byte
		if i < len(raws) {
			raw = raws[i]
		}
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
			h = append(h, '}')
			continue
		}
		if form.isBinary(o.GetName()) {
			h = append(h, `,"parameters":{"binary_data_size":`...)
			h = strconv.AppendInt(h, int64(len(raw)), 10)
			h = append(h, '}', '}')
			if bin == nil {
				bin = make([]byte, 0, len(raw))
			}
			bin = append(bin, raw...)
			continue
		}
		h = append(h, `,"data":`...)
		h, err = appendJSONData(h, o.GetDatatype(), raw, kserve.ElementCount(o.GetShape()))
		if err != nil && o.GetDatatype() == "BYTES" {
			// Elements cut short (Triton passes a last input string cut
			// short, and an identity model returns it as it is).
			return nil, nil, &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf("output tensor shape does not match size of output for '%s'", o.GetName())}
		}
		if err != nil {
			return nil, nil, badRequest("failed to write output '%s' as JSON: %v", o.GetName(), err)
		}
		h = append(h, '}')
	}
	h = append(h, ']', '}')
	return h, bin, nil
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
