package sim

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/tritontop/tritontop/triton/pb"
)

// classification reads the "classification" parameter of requested output
// j (Triton's classification extension) with the gRPC frontend's checks.
func (m *model) classification(r *request, j int, p *pb.InferParameter) error {
	v, ok := p.GetParameterChoice().(*pb.InferParameter_Int64Param)
	if !ok {
		return invalidArg("invalid value type for 'classification' parameter, expected int64_param")
	}
	if v.Int64Param <= 0 {
		return invalidArg("invalid value for 'classification' parameter, expected >= 0")
	}
	// Triton finds an unsupported type only when it writes the response,
	// after the request has executed; here it fails before.
	switch t := &m.outputs[j]; t.datatype {
	case "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP32", "FP64":
	default:
		return invalidArg("class result not available for output due to unsupported type '%s'", t.datatype)
	}
	if r.classify == nil {
		r.classify = make([]uint32, len(m.outputs))
	}
	r.classify[j] = uint32(min(v.Int64Param, math.MaxUint32))
	return nil
}

// classify turns output j's data into Triton's classification answer: per
// batch item, the k highest values as BYTES strings "value:index" or
// "value:index:label", shaped [batch, k] for batching models and [k]
// otherwise (k capped at the item's element count).
func (m *model) classify(j int, shape []int64, data []byte, k uint32) ([]int64, []byte) {
	t := &m.outputs[j]
	labels := m.spec.Outputs[j].Labels
	batch := int64(0)
	item := shape
	if m.spec.MaxBatchSize > 0 && len(shape) > 0 {
		batch, item = shape[0], shape[1:]
	}
	per := int(elementCount(item))
	count := min(int(k), per)
	values := make([]float64, per)
	idx := make([]int, per)
	var out []byte
	for b := range max(1, batch) {
		base := int(b) * per * t.size
		for i := range per {
			values[i] = elementValue(t.dtype, data[base+i*t.size:])
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int {
			switch {
			case values[x] > values[y]:
				return -1
			case values[x] < values[y]:
				return 1
			}
			return 0
		})
		for _, i := range idx[:count] {
			s := formatClassValue(t.dtype, data[base+i*t.size:])
			s = append(s, ':')
			s = strconv.AppendInt(s, int64(i), 10)
			if i < len(labels) {
				s = append(s, ':')
				s = append(s, labels[i]...)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
			out = append(out, s...)
		}
	}
	if batch > 0 {
		return []int64{batch, int64(count)}, out
	}
	return []int64{int64(count)}, out
}

// elementValue reads one element for ranking.
func elementValue(dt pb.DataType, b []byte) float64 {
	le := binary.LittleEndian
	switch dt {
	case pb.DataType_TYPE_UINT8:
		return float64(b[0])
	case pb.DataType_TYPE_INT8:
		return float64(int8(b[0]))
	case pb.DataType_TYPE_UINT16:
		return float64(le.Uint16(b))
	case pb.DataType_TYPE_INT16:
		return float64(int16(le.Uint16(b)))
	case pb.DataType_TYPE_UINT32:
		return float64(le.Uint32(b))
	case pb.DataType_TYPE_INT32:
		return float64(int32(le.Uint32(b)))
	case pb.DataType_TYPE_UINT64:
		return float64(le.Uint64(b))
	case pb.DataType_TYPE_INT64:
		return float64(int64(le.Uint64(b)))
	case pb.DataType_TYPE_FP32:
		return float64(math.Float32frombits(le.Uint32(b)))
	case pb.DataType_TYPE_FP64:
		return math.Float64frombits(le.Uint64(b))
	}
	return 0
}

// formatClassValue writes an element as C++'s std::to_string does:
// integers in decimal, floating point with six decimals ("%f").
func formatClassValue(dt pb.DataType, b []byte) []byte {
	le := binary.LittleEndian
	switch dt {
	case pb.DataType_TYPE_FP32:
		return strconv.AppendFloat(nil, float64(math.Float32frombits(le.Uint32(b))), 'f', 6, 64)
	case pb.DataType_TYPE_FP64:
		return strconv.AppendFloat(nil, math.Float64frombits(le.Uint64(b)), 'f', 6, 64)
	case pb.DataType_TYPE_UINT64:
		return strconv.AppendUint(nil, le.Uint64(b), 10)
	case pb.DataType_TYPE_INT64:
		return strconv.AppendInt(nil, int64(le.Uint64(b)), 10)
	}
	return strconv.AppendInt(nil, int64(elementValue(dt, b)), 10)
}
