package sim

import (
	"strings"
	"time"

	"github.com/tritontop/tritontop/triton/pb"
)

// backendEmu is what the simulator emulates of one of Triton's
// framework-free backends beyond the outputs its behaviour computes: the
// delays its configuration's parameters ask for, its response parameters
// and the request errors it finds.
type backendEmu struct {
	backend string
	// delay is execute_delay_ms (identity, sequence, dyna_sequence). The
	// identity backend sleeps within its compute (compute_infer); the
	// sequence backends sleep before theirs starts, which Triton counts
	// as queue time (beforeCompute).
	delay         time.Duration
	beforeCompute bool
	// multiplier is the identity backend's instance_wise_delay_multiplier:
	// instance k sleeps delay × max(multiplier × k, 1).
	multiplier int64
	// The square backend's CUSTOM_INFER_DELAY_NS, CUSTOM_OUTPUT_DELAY_NS
	// and CUSTOM_CANCEL_DELAY_NS, and its CUSTOM_FAIL_COUNT and
	// CUSTOM_EMPTY_COUNT: of n responses the last empty ones are not
	// sent and the fail ones before them carry an error.
	squareInfer, squareOutput, squareCancel time.Duration
	squareFail, squareEmpty                 int
}

// newBackendEmu reads a model's backend parameters as its backend does;
// nil for a backend the simulator does not emulate, and for a spec
// described in JSON. A value the backend
// could not parse counts as absent.
func newBackendEmu(spec ModelSpec) *backendEmu {
	if !spec.emulate || !isEmulatedBackend(spec.Backend) {
		return nil
	}
	e := &backendEmu{backend: spec.Backend}
	p := spec.Parameters
	switch spec.Backend {
	case backendIdentity:
		if v, ok := p["execute_delay_ms"]; ok {
			e.delay = time.Duration(stoi(v)) * time.Millisecond
			if m, ok := p["instance_wise_delay_multiplier"]; ok {
				e.multiplier = stoi(m)
			}
		}
	case backendSequence, backendDynaSequence:
		if v, ok := p["execute_delay_ms"]; ok {
			e.delay = time.Duration(stoi(v)) * time.Millisecond
			e.beforeCompute = true
		}
	case backendSquare:
		e.squareInfer = time.Duration(digits(p["CUSTOM_INFER_DELAY_NS"]))
		e.squareOutput = time.Duration(digits(p["CUSTOM_OUTPUT_DELAY_NS"]))
		e.squareCancel = time.Duration(digits(p["CUSTOM_CANCEL_DELAY_NS"]))
		e.squareFail = int(digits(p["CUSTOM_FAIL_COUNT"]))
		e.squareEmpty = int(digits(p["CUSTOM_EMPTY_COUNT"]))
	}
	if e.delay < 0 {
		e.delay = 0
	}
	return e
}

// stoi parses s as C++'s std::stoi does (leading digits); 0 where it
// would throw.
func stoi(s string) int64 {
	v, ok := parseCInt(s, 32)
	if !ok {
		return 0
	}
	return v
}

// digits parses the square backend's parameters: only digits count (an
// empty or other value is ignored, as the backend ignores it), at most an
// int32's worth.
func digits(s string) int64 {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0
	}
	v, ok := parseCInt(s, 32)
	if !ok {
		return 0
	}
	return v
}

// execDelay is the delay instance index adds to an execution, and whether
// it comes before the compute.
func (e *backendEmu) execDelay(index int) (time.Duration, bool) {
	if e == nil || e.delay <= 0 {
		return 0, false
	}
	d := e.delay
	if e.multiplier > 0 {
		d *= time.Duration(max(e.multiplier*int64(index), 1))
	}
	return d, e.beforeCompute
}

// identityParameters are the response parameters the identity backend sets
// on every response. Never mutated.
var identityParameters = [...]struct {
	key string
	val *pb.InferParameter
}{
	{"param0", &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: "an example string parameter"}}},
	{"param1", &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 42}}},
	{"param2", &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: false}}},
	{"param3", &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: 123.123}}},
}

// decorate adds what the backend adds to a response: the identity
// backend's parameters (in a map of the response's own, which frontends
// add to).
func (e *backendEmu) decorate(resp *pb.ModelInferResponse) {
	if e == nil || e.backend != backendIdentity {
		return
	}
	resp.Parameters = make(map[string]*pb.InferParameter, len(identityParameters)+1)
	for _, p := range identityParameters {
		resp.Parameters[p.key] = p.val
	}
}

// requestError is the error the backend finds in a request when it
// executes it, or nil: the identity and sequence backends read the
// correlation ID as a number, which a string ID is not; the dyna_sequence
// backend with a string CORRID control needs it to start with digits.
func (e *backendEmu) requestError(m *model, r *request) error {
	if e == nil {
		return nil
	}
	_, str := r.req.GetParameters()["sequence_id"].GetParameterChoice().(*pb.InferParameter_StringParam)
	switch e.backend {
	case backendIdentity, backendSequence:
		if str {
			return requestError(r.req, "correlation ID in request is not an unsigned int")
		}
	case backendDynaSequence:
		if str && m.controls.corrIDType == pb.DataType_TYPE_STRING {
			if _, ok := parseCInt(r.seq.corrID.str, 32); !ok {
				return invalidArg("dyna sequence backend expects correlation ID to be decodable into an integer")
			}
		}
	}
	return nil
}

// identityPairs maps each output of a BehaviourIdentity model to the input
// it copies: the input of the same index, or, for the identity backend's
// INPUT<i> and OUTPUT<i> names, the input of the same suffix; -1 for none.
func (m *model) identityPairs() {
	if m.spec.Behaviour != BehaviourIdentity {
		return
	}
	m.identity = make([]int, len(m.outputs))
	for j, out := range m.outputs {
		m.identity[j] = -1
		if j < len(m.inputs) {
			m.identity[j] = j
		}
		if suffix, ok := strings.CutPrefix(out.name, "OUTPUT"); ok && m.spec.Backend == backendIdentity {
			if k, ok := m.inputIdx["INPUT"+suffix]; ok {
				m.identity[j] = k
			}
		}
	}
}
