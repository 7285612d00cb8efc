package sim

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// respond builds the response of an executed request: the requested
// outputs in config order, each with its raw_output_contents entry. An
// error is the model's own (a string that is not a number for the string
// add/sub model), which fails the request as a backend error.
func (m *model) respond(r *request) (*pb.ModelInferResponse, error) {
	if err := m.emu.requestError(m, r); err != nil {
		r.unreported = m.emu.backend == backendSequence || m.emu.backend == backendDynaSequence
		return nil, err
	}
	resp := &pb.ModelInferResponse{
		ModelName:         m.name,
		ModelVersion:      r.version.label,
		Id:                r.req.GetId(),
		Outputs:           make([]*pb.ModelInferResponse_InferOutputTensor, 0, len(r.outputs)),
		RawOutputContents: make([][]byte, 0, len(r.outputs)),
	}
	for _, j := range r.outputs {
		t := &m.outputs[j]
		shape, data, err := m.output(r, j)
		if err != nil {
			return nil, err
		}
		datatype := t.datatype
		if r.classify != nil && r.classify[j] > 0 {
			shape, data = m.classify(j, shape, data, r.classify[j])
			datatype = "BYTES"
		}
		resp.Outputs = append(resp.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: t.name, Datatype: datatype, Shape: shape})
		resp.RawOutputContents = append(resp.RawOutputContents, data)
	}
	m.emu.decorate(resp)
	if m.emu != nil && m.emu.backend == backendIdentity && m.identity != nil {
		// The backend counts the bytes of each input it copied.
		var n uint64
		for _, j := range r.outputs {
			if k := m.identity[j]; k >= 0 {
				n += uint64(len(r.data[k]))
			}
		}
		r.version.stats.inputBytes.Add(n)
	}
	return resp, nil
}

// output computes output j of a request according to the model's
// behaviour.
func (m *model) output(r *request, j int) ([]int64, []byte, error) {
	t := &m.outputs[j]
	if m.passesThrough(r, j) {
		switch m.spec.Behaviour {
		case BehaviourIdentity:
			k := m.identity[j]
			return r.shapes[k], r.data[k], nil
		case BehaviourAddSub:
			if t.dtype == pb.DataType_TYPE_STRING {
				data, err := m.addSubStrings(r, j == 1)
				return r.shapes[0], data, err
			}
			return r.shapes[0], addSub(t.dtype, r.data[0], r.data[1], j == 1), nil
		case BehaviourSequence, BehaviourAccumulate:
			shape, data := m.sequenceOutput(r)
			return shape, data, nil
		case BehaviourAccumulateSum:
			shape, data := m.accumulateSumOutput(r)
			return shape, data, nil
		}
	}
	// checkOutputs has bounded this output's size before the request was
	// queued.
	shape := m.outputShape(r, t)
	n := int(elementCount(shape))
	if t.size < 0 {
		// n empty strings: a zero length each.
		return shape, make([]byte, 4*n), nil
	}
	if m.spec.Behaviour == BehaviourZeros {
		return shape, m.zeroBytes(n * t.size), nil
	}
	data := make([]byte, n*t.size)
	if m.spec.Behaviour == BehaviourClassifier {
		// Each batch item's scores come from that item alone, so equal
		// images score alike wherever they sit in a batch.
		in := r.data[0]
		items := 1
		if m.spec.MaxBatchSize > 0 && len(shape) > 0 && shape[0] > 1 &&
			len(in)%int(shape[0]) == 0 && len(data)%int(shape[0]) == 0 {
			items = int(shape[0])
		}
		inPer, outPer := len(in)/items, len(data)/items
		for k := range items {
			fillScores(t.dtype, data[k*outPer:(k+1)*outPer], in[k*inPer:(k+1)*inPer])
		}
	}
	return shape, data, nil
}

// addSubStrings is the add/sub of Triton's simple_string model: each
// element is a decimal INT32 as a string, and so is each result.
func (m *model) addSubStrings(r *request, sub bool) ([]byte, error) {
	n := int(elementCount(r.shapes[0]))
	a, err := kserve.DecodeBytes(r.data[0], n)
	if err != nil {
		return nil, err
	}
	b, err := kserve.DecodeBytes(r.data[1], n)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, n*8)
	for i := range n {
		x, err := m.stringInt32(0, i, a[i])
		if err != nil {
			return nil, err
		}
		y, err := m.stringInt32(1, i, b[i])
		if err != nil {
			return nil, err
		}
		v := x + y
		if sub {
			v = x - y
		}
		s := strconv.AppendInt(nil, int64(v), 10)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
		out = append(out, s...)
	}
	return out, nil
}

func (m *model) stringInt32(input, i int, s []byte) (int32, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(string(s)), 10, 32)
	if err != nil {
		return 0, &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf(
			"model '%s': element %d of input '%s' is %q, not a decimal 32-bit integer", m.name, i, m.inputs[input].name, s)}
	}
	return int32(v), nil
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
	case pb.DataType_TYPE_INT8, pb.DataType_TYPE_UINT8:
		for i := range a {
			out[i] = byte(int64(a[i]) + sign*int64(b[i]))
		}
	case pb.DataType_TYPE_INT16, pb.DataType_TYPE_UINT16:
		for i := 0; i+2 <= len(a); i += 2 {
			le.PutUint16(out[i:], uint16(int64(le.Uint16(a[i:]))+sign*int64(le.Uint16(b[i:]))))
		}
	case pb.DataType_TYPE_UINT32:
		for i := 0; i+4 <= len(a); i += 4 {
			le.PutUint32(out[i:], uint32(int64(le.Uint32(a[i:]))+sign*int64(le.Uint32(b[i:]))))
		}
	case pb.DataType_TYPE_UINT64:
		for i := 0; i+8 <= len(a); i += 8 {
			le.PutUint64(out[i:], le.Uint64(a[i:])+uint64(sign)*le.Uint64(b[i:]))
		}
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

// zeroBytes returns n zero bytes, which the caller must not write: a zeros
// model's outputs share one buffer (its length and capacity n, so that an
// append copies), so that a large output such as an image tensor costs no
// allocation and no clearing per request.
func (m *model) zeroBytes(n int) []byte {
	if p := m.zeros.Load(); p != nil && len(*p) >= n {
		return (*p)[:n:n]
	}
	b := make([]byte, n)
	m.zeros.Store(&b)
	return b[:n:n]
}
