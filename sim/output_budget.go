package sim

import (
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// MaxOutputBytes is the most bytes the simulator computes for one output of
// one request (64 MiB, the default largest HTTP request body). An output the model computes (rather than passes
// through from an input) is allocated whole; its shape comes from the
// request's variable dims, so a request of zero input elements such as
// [1,1073741824,0] could otherwise ask for gigabytes. Triton's own answer
// depends on the backend; the simulator refuses such a request with
// INVALID_ARG before it is queued.
const MaxOutputBytes = 64 << 20

// checkOutputs checks, before a request is queued, the size of every output
// the model will compute for it: the element count must not overflow and
// the bytes must stay within MaxOutputBytes. Outputs passed through from an
// input are bounded by the input's own checks. It returns what the outputs
// make the simulator hold, for the memory budget: the outputs the model
// builds (an identity output is its input's own bytes) and the response's
// copy of every output when it is encoded.
func (m *model) checkOutputs(r *request) (int64, error) {
	var held int64
	for _, j := range r.outputs {
		if m.passesThrough(r, j) {
			n := m.passedBytes(r, j)
			held += n
			if m.spec.Behaviour != BehaviourIdentity {
				held += n
			}
			continue
		}
		t := &m.outputs[j]
		shape := m.outputShape(r, t)
		size := t.size
		if size < 0 {
			size = 4 // an empty string is its 4-byte length
		}
		n, ok := checkedElementCount(shape, max(1, size))
		if ok && n*int64(max(1, size)) <= MaxOutputBytes {
			held += 2 * n * int64(max(1, size))
			continue
		}
		if !ok {
			return 0, requestError(r.req, "output '%s' for model '%s' would have shape %s, whose element count overflows; use smaller variable dimensions",
				t.name, m.name, kserve.FormatDims(shape))
		}
		return 0, requestError(r.req, "output '%s' for model '%s' would have shape %s, %d bytes, over the simulator's limit of %d bytes per output; use smaller variable dimensions",
			t.name, m.name, kserve.FormatDims(shape), n*int64(max(1, size)), int64(MaxOutputBytes))
	}
	return held, nil
}

// passedBytes is the size of output j of r, which passesThrough: as large
// as the input it comes from.
func (m *model) passedBytes(r *request, j int) int64 {
	switch m.spec.Behaviour {
	case BehaviourIdentity:
		return int64(len(r.data[m.identity[j]]))
	case BehaviourAddSub:
		return int64(len(r.data[0]))
	}
	return int64(len(r.data[0])) // a sequence model's output: one value per item
}

// passesThrough reports whether output j of r is an input's data (or
// computed from inputs of its own size), as output decides; such an output
// is no larger than the inputs already checked.
func (m *model) passesThrough(r *request, j int) bool {
	t := &m.outputs[j]
	switch m.spec.Behaviour {
	case BehaviourIdentity:
		k := m.identity[j]
		return k >= 0 && m.inputs[k].dtype == t.dtype
	case BehaviourAddSub:
		// add/sub computes from two equal-sized inputs; a mismatch falls
		// back to the computed output, checked here.
		return m.inputs[0].dtype == t.dtype && m.inputs[1].dtype == t.dtype &&
			elementCount(r.shapes[0]) == elementCount(r.shapes[1]) &&
			(t.dtype == pb.DataType_TYPE_STRING || len(r.data[0]) == len(r.data[1]))
	case BehaviourSequence, BehaviourAccumulate, BehaviourAccumulateSum:
		return j == 0
	}
	return false
}
