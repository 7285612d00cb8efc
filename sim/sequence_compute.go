package sim

import (
	"encoding/binary"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// sequenceParameters reads a sequence request's correlation ID and flags
// (already type-checked by checkParameters) and checks the ID's type
// against the model's CORRID control, as Triton's
// InferenceRequest::ValidateCorrelationId does.
func (m *model) sequenceParameters(r *request) error {
	params := r.req.GetParameters()
	r.seq = &seqInfo{}
	switch v := params["sequence_id"].GetParameterChoice().(type) {
	case *pb.InferParameter_Int64Param:
		r.seq.corrID = corrID{num: uint64(v.Int64Param)}
	case *pb.InferParameter_StringParam:
		r.seq.corrID = corrID{str: v.StringParam, isStr: true}
	}
	r.seq.start = params["sequence_start"].GetBoolParam()
	r.seq.end = params["sequence_end"].GetBoolParam()
	cv := &m.controls
	if !cv.hasCorrID {
		return nil
	}
	got := ""
	switch {
	case r.seq.corrID.isStr && cv.corrIDType != pb.DataType_TYPE_STRING:
		got = "BYTES"
	case !r.seq.corrID.isStr && cv.corrIDType != pb.DataType_TYPE_UINT64 && cv.corrIDType != pb.DataType_TYPE_INT64 &&
		cv.corrIDType != pb.DataType_TYPE_UINT32 && cv.corrIDType != pb.DataType_TYPE_INT32:
		got = "UINT64"
	default:
		return nil
	}
	return requestError(r.req, "sequence batching control '%s' data-type is '%s', but model '%s' expects '%s'",
		cv.corrIDName, got, m.name, kserve.DataTypeString(cv.corrIDType))
}

// sequenceOutput computes the output of BehaviourSequence or
// BehaviourAccumulate (an INT32 or INT64 tensor shaped like the input).
func (m *model) sequenceOutput(r *request) ([]int64, []byte) {
	in := r.data[0]
	size := m.inputs[0].size
	n := len(in) / size
	out := make([]byte, len(in))
	get := func(i int) int64 {
		if size == 4 {
			return int64(int32(binary.LittleEndian.Uint32(in[4*i:])))
		}
		return int64(binary.LittleEndian.Uint64(in[8*i:]))
	}
	put := func(i int, v int64) {
		if size == 4 {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(v)))
		} else {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		}
	}
	if m.spec.Behaviour == BehaviourAccumulate {
		l := r.seq.lane
		if r.seq.start || len(l.acc) != n {
			l.acc = make([]int64, n)
		}
		for i := range n {
			l.acc[i] += get(i)
			put(i, l.acc[i])
		}
		return r.shapes[0], out
	}
	// Triton's example models: READY × (INPUT + START + END × CORRID),
	// with the control values the config gives for false and true.
	cv := &m.controls
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	var add int64
	if cv.hasStart {
		add += cv.start[b(r.seq.start)]
	}
	if cv.hasEnd && cv.hasCorrID && !r.seq.corrID.isStr {
		corr := int64(r.seq.corrID.num)
		if cv.corrIDType == pb.DataType_TYPE_INT32 || cv.corrIDType == pb.DataType_TYPE_UINT32 || size == 4 {
			corr = int64(int32(r.seq.corrID.num)) // the model casts CORRID to its own type
		}
		add += cv.end[b(r.seq.end)] * corr
	}
	mul := int64(1)
	if cv.hasReady {
		mul = cv.ready[1] // every request the server executes is ready
	}
	for i := range n {
		put(i, mul*(get(i)+add))
	}
	return r.shapes[0], out
}

// accumulateSumOutput computes BehaviourAccumulateSum (Triton's sequence
// and dyna_sequence backends): the sequence's accumulator, set to the sum
// of the elements of its START request's INPUT, adds each later request's
// sum and, with END on a model with END and CORRID controls, the
// correlation ID cast to the accumulator's type; every element of OUTPUT
// is the accumulator.
func (m *model) accumulateSumOutput(r *request) ([]int64, []byte) {
	in := r.data[0]
	size := m.inputs[0].size
	n := len(in) / size
	le := binary.LittleEndian
	var sum int64
	for i := range n {
		if size == 4 {
			sum += int64(int32(le.Uint32(in[4*i:])))
		} else {
			sum += int64(le.Uint64(in[8*i:]))
		}
	}
	l := r.seq.lane
	if r.seq.start || len(l.acc) != 1 {
		l.acc = []int64{0}
	}
	l.acc[0] += sum
	cv := &m.controls
	if r.seq.end && cv.hasEnd && cv.hasCorrID {
		id := int64(r.seq.corrID.num)
		if r.seq.corrID.isStr {
			id, _ = parseCInt(r.seq.corrID.str, 32)
		}
		l.acc[0] += id
	}
	if size == 4 {
		l.acc[0] = int64(int32(l.acc[0]))
	}
	out := make([]byte, len(in))
	for i := range n {
		if size == 4 {
			le.PutUint32(out[4*i:], uint32(int32(l.acc[0])))
		} else {
			le.PutUint64(out[8*i:], uint64(l.acc[0]))
		}
	}
	return r.shapes[0], out
}
