package triton

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/triton/pb"
)

// DataTypeString returns the protocol datatype string of a config data type:
// the enum name without "TYPE_", except TYPE_STRING, which is "BYTES"
// (common/src/model_config.cc DataTypeToProtocolString).
func DataTypeString(dt pb.DataType) string {
	switch dt {
	case pb.DataType_TYPE_STRING:
		return "BYTES"
	case pb.DataType_TYPE_INVALID:
		return "INVALID"
	}
	return strings.TrimPrefix(dt.String(), "TYPE_")
}

// ParseDataType accepts a protocol datatype ("INT32", "BYTES") or a config
// enum name ("TYPE_INT32", "TYPE_STRING").
func ParseDataType(s string) (pb.DataType, bool) {
	if s == "BYTES" {
		return pb.DataType_TYPE_STRING, true
	}
	if !strings.HasPrefix(s, "TYPE_") {
		s = "TYPE_" + s
	}
	v, ok := pb.DataType_value[s]
	if !ok || v == 0 {
		return pb.DataType_TYPE_INVALID, false
	}
	return pb.DataType(v), true
}

// ElementSize returns the size in bytes of one element of a protocol
// datatype, -1 for BYTES (variable) and 0 for an unknown datatype.
func ElementSize(datatype string) int {
	switch datatype {
	case "BOOL", "UINT8", "INT8":
		return 1
	case "UINT16", "INT16", "FP16", "BF16":
		return 2
	case "UINT32", "INT32", "FP32":
		return 4
	case "UINT64", "INT64", "FP64":
		return 8
	case "BYTES":
		return -1
	}
	return 0
}

// ElementCount returns the number of elements of a shape (1 for a scalar
// shape []). Negative dimensions count as 0.
func ElementCount(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0
		}
		n *= d
	}
	return n
}

// FormatDims formats a shape the way Triton's messages print one
// (DimsListToString): "[-1,16]".
func FormatDims(dims []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range dims {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// EncodeBytes serialises BYTES elements in Triton's raw form: each element
// as a 4-byte little-endian length followed by its bytes.
func EncodeBytes(elems [][]byte) []byte {
	size := 0
	for _, e := range elems {
		size += 4 + len(e)
	}
	out := make([]byte, 0, size)
	for _, e := range elems {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

// DecodeBytes parses n BYTES elements from Triton's raw form. It fails like
// Triton does on a truncated length or a wrong element count.
func DecodeBytes(b []byte, n int) ([][]byte, error) {
	out := make([][]byte, 0, max(n, 0))
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("incomplete string length indicator, expected 4 bytes, got %d", len(b))
		}
		l := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		if l > len(b) {
			return nil, fmt.Errorf("incomplete string data, expected %d bytes, got %d", l, len(b))
		}
		out = append(out, b[:l])
		b = b[l:]
	}
	if n >= 0 && len(out) != n {
		return nil, fmt.Errorf("expected %d string elements, got %d", n, len(out))
	}
	return out, nil
}

// Int32s decodes little-endian INT32 raw data.
func Int32s(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// PutInt32s encodes INT32 values as little-endian raw data.
func PutInt32s(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// Int64s decodes little-endian INT64 raw data.
func Int64s(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// PutInt64s encodes INT64 values as little-endian raw data.
func PutInt64s(v []int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

// Float32s decodes little-endian FP32 raw data.
func Float32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// PutFloat32s encodes FP32 values as little-endian raw data.
func PutFloat32s(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// Float64s decodes little-endian FP64 raw data.
func Float64s(b []byte) []float64 {
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// PutFloat64s encodes FP64 values as little-endian raw data.
func PutFloat64s(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}
