package kserve

import (
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
