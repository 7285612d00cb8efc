package sim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/tritontop/tritontop/triton/pb"
)

// respond builds the response of an executed request: the requested
// outputs in config order, each with its raw_output_contents entry.
func (m *model) respond(r *request) *pb.ModelInferResponse {
	resp := &pb.ModelInferResponse{
		ModelName:         m.name,
		ModelVersion:      r.version.label,
		Id:                r.req.GetId(),
		Outputs:           make([]*pb.ModelInferResponse_InferOutputTensor, 0, len(r.outputs)),
		RawOutputContents: make([][]byte, 0, len(r.outputs)),
	}
	for _, j := range r.outputs {
		t := &m.outputs[j]
		shape, data := m.output(r, j)
		resp.Outputs = append(resp.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: t.name, Datatype: t.datatype, Shape: shape})
		resp.RawOutputContents = append(resp.RawOutputContents, data)
	}
	return resp
}

// output computes output j of a request according to the model's
// behaviour.
func (m *model) output(r *request, j int) ([]int64, []byte) {
	t := &m.outputs[j]
	switch m.spec.Behaviour {
	case BehaviourIdentity:
		if j < len(m.inputs) && m.inputs[j].dtype == t.dtype {
			return r.shapes[j], r.data[j]
		}
	case BehaviourAddSub:
		if m.inputs[0].dtype == t.dtype && m.inputs[1].dtype == t.dtype && len(r.data[0]) == len(r.data[1]) {
			return r.shapes[0], addSub(t.dtype, r.data[0], r.data[1], j == 1)
		}
	}
	shape := m.outputShape(r, t)
	n := int(elementCount(shape))
	if t.size < 0 {
		// n empty strings: a zero length each.
		return shape, make([]byte, 4*n)
	}
	data := make([]byte, n*t.size)
	if m.spec.Behaviour == BehaviourClassifier {
		fillScores(t.dtype, data, r.data[0])
	}
	return shape, data
}

// outputShape is an output's shape for a request: the batch dimension when
// the model batches, then the config dims, where each -1 takes the first
// input's variable size (or 1).
func (m *model) outputShape(r *request, t *tensorInfo) []int64 {
	var shape []int64
	in0 := r.shapes[0]
	if m.spec.MaxBatchSize > 0 {
		shape = append(shape, in0[0])
		in0 = in0[1:]
	}
	variable := int64(1)
	for k, d := range m.inputs[0].dims {
		if d == -1 && k < len(in0) {
			variable = in0[k]
			break
		}
	}
	for _, d := range t.dims {
		if d == -1 {
			d = variable
		}
		shape = append(shape, d)
	}
	return shape
}

// addSub computes a+b (or a−b when sub) element-wise on raw data.
func addSub(dt pb.DataType, a, b []byte, sub bool) []byte {
	out := make([]byte, len(a))
	le := binary.LittleEndian
	sign := int64(1)
	if sub {
		sign = -1
	}
	switch dt {
	case pb.DataType_TYPE_INT32:
		for i := 0; i+4 <= len(a); i += 4 {
			le.PutUint32(out[i:], uint32(int32(le.Uint32(a[i:]))+int32(sign)*int32(le.Uint32(b[i:]))))
		}
	case pb.DataType_TYPE_INT64:
		for i := 0; i+8 <= len(a); i += 8 {
			le.PutUint64(out[i:], uint64(int64(le.Uint64(a[i:]))+sign*int64(le.Uint64(b[i:]))))
		}
	case pb.DataType_TYPE_FP32:
		for i := 0; i+4 <= len(a); i += 4 {
			x := math.Float32frombits(le.Uint32(a[i:])) + float32(sign)*math.Float32frombits(le.Uint32(b[i:]))
			le.PutUint32(out[i:], math.Float32bits(x))
		}
	case pb.DataType_TYPE_FP64:
		for i := 0; i+8 <= len(a); i += 8 {
			x := math.Float64frombits(le.Uint64(a[i:])) + float64(sign)*math.Float64frombits(le.Uint64(b[i:]))
			le.PutUint64(out[i:], math.Float64bits(x))
		}
	}
	return out
}

// fillScores fills floating-point data with scores in [0, 1) drawn from a
// source seeded by the input, so equal inputs give equal outputs.
func fillScores(dt pb.DataType, data, input []byte) {
	h := fnv.New64a()
	h.Write(input[:min(len(input), 4096)])
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(len(input))))
	le := binary.LittleEndian
	switch dt {
	case pb.DataType_TYPE_FP32:
		for i := 0; i+4 <= len(data); i += 4 {
			le.PutUint32(data[i:], math.Float32bits(rng.Float32()))
		}
	case pb.DataType_TYPE_FP64:
		for i := 0; i+8 <= len(data); i += 8 {
			le.PutUint64(data[i:], math.Float64bits(rng.Float64()))
		}
	}
}
