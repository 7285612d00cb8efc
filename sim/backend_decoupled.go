package sim

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// MaxSquareResponses caps the responses a square model sends for one
// request. Triton's square backend sends IN of them, and for a negative IN
// (read as an unsigned size) responses until the request is cancelled; the
// simulator refuses such a request instead.
const MaxSquareResponses = 1 << 20

// checkDecoupledBehaviour checks a spec described in JSON whose behaviour
// is BehaviourRepeat or BehaviourSquare: decoupled, with the backend's
// tensors.
func checkDecoupledBehaviour(m ModelSpec) error {
	if !m.Decoupled {
		return fmt.Errorf("%s needs \"decoupled\": true (it sends its responses apart)", m.Behaviour)
	}
	ins := map[string]string{"IN": "INT32"}
	outs := map[string]string{"OUT": "INT32"}
	if m.Behaviour == BehaviourRepeat {
		if m.MaxBatchSize != 0 {
			return fmt.Errorf("repeat needs max_batch_size 0")
		}
		ins["DELAY"], ins["WAIT"], outs["IDX"] = "UINT32", "UINT32", "UINT32"
	}
	for _, group := range []struct {
		kind  string
		list  []TensorSpec
		wants map[string]string
	}{{"input", m.Inputs, ins}, {"output", m.Outputs, outs}} {
		for name, dt := range group.wants {
			i := slices.IndexFunc(group.list, func(t TensorSpec) bool { return t.Name == name })
			if i < 0 || normDatatype(group.list[i].DataType) != dt {
				return fmt.Errorf("%s needs an %s %q of datatype %s", m.Behaviour, group.kind, name, dt)
			}
		}
	}
	return nil
}

// executeDecoupled runs a batch of a repeat or square model: each request
// sends its responses on a goroutine of its own, as the backends do on a
// thread of their own, while the repeat backend holds the instance for
// the request's WAIT ms and then reports its statistics (the square
// backend reports only its responses').
func (in *instance) executeDecoupled(batch []*request) {
	s := in.s
	m := s.mv.model
	repeat := m.spec.Behaviour == BehaviourRepeat
	t0 := s.e.now()
	var hold time.Duration
	for _, r := range batch {
		if !r.state.CompareAndSwap(stateExecuting, stateResponding) {
			continue // cancelled meanwhile; the cancel counted it
		}
		s.wg.Add(1)
		if repeat {
			p := m.repeatPlan(r)
			hold = p.wait
			go in.emitRepeat(r, p, t0)
		} else {
			go in.emitSquare(r)
		}
	}
	if !repeat {
		return
	}
	// The backend's own cost (its thread's start) comes on top of WAIT.
	_, own, _ := m.spec.Latency.durations(len(batch), 0, in.rng)
	in.occupy(t0, hold+own)
	t1 := s.e.now()
	s.mv.stats.recordReleased(batch, execTimes{start: t0, inputEnd: t0, outputStart: t1, end: t1}, in.gpuUUID, time.Now().UnixMilli())
}

// repeatPlan is what the repeat backend makes of a request: its WAIT, and
// either its responses' values and times (from the execution's start) or
// the error it answers at once.
type repeatPlan struct {
	wait   time.Duration
	values []int32
	at     []time.Duration
	err    error
}

func (m *model) repeatPlan(r *request) repeatPlan {
	le := binary.LittleEndian
	in, delay, wait := m.inputIdx["IN"], m.inputIdx["DELAY"], m.inputIdx["WAIT"]
	var p repeatPlan
	if w := r.data[wait]; len(w) >= 4 {
		p.wait = time.Duration(le.Uint32(w)) * time.Millisecond
	}
	if !slices.Equal(r.shapes[in], r.shapes[delay]) {
		p.err = invalidArg("expected IN and DELAY shape to match, got %s and %s", shapeString(r.shapes[in]), shapeString(r.shapes[delay]))
		return p
	}
	var at time.Duration
	data, delays := r.data[in], r.data[delay]
	for e := 0; 4*e+4 <= len(data); e++ {
		// The backend reads DELAY as int32 milliseconds.
		at += time.Duration(max(int32(le.Uint32(delays[4*e:])), 0)) * time.Millisecond
		p.values = append(p.values, int32(le.Uint32(data[4*e:])))
		p.at = append(p.at, at)
	}
	return p
}

// emitRepeat sends a repeat request's responses at their times.
func (in *instance) emitRepeat(r *request, p repeatPlan, t0 int64) {
	s := in.s
	defer s.wg.Done()
	if p.err != nil {
		r.err = p.err
		in.finishResponding(r)
		return
	}
	m := s.mv.model
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for e, v := range p.values {
		if !in.waitUntil(timer, t0+int64(p.at[e])) || r.state.Load() == stateCancelled {
			break
		}
		resp := &pb.ModelInferResponse{ModelName: m.name, ModelVersion: s.mv.label, Id: r.req.GetId(),
			Outputs: []*pb.ModelInferResponse_InferOutputTensor{
				{Name: "OUT", Datatype: "INT32", Shape: []int64{1}},
				{Name: "IDX", Datatype: "UINT32", Shape: []int64{1}},
			},
			RawOutputContents: [][]byte{binary.LittleEndian.AppendUint32(nil, uint32(v)), binary.LittleEndian.AppendUint32(nil, uint32(e))},
		}
		if r.onResponse != nil {
			r.onResponse(r, resp, nil)
		}
	}
	in.finishResponding(r)
}

// emitSquare sends a square request's IN responses, each OUT = IN, with
// the backend's delays, failures and empty responses, and records each
// response's statistics as the backend reports them.
func (in *instance) emitSquare(r *request) {
	s := in.s
	defer s.wg.Done()
	m := s.mv.model
	e := m.emu
	if e == nil {
		e = &backendEmu{}
	}
	x := m.inputIdx["IN"]
	shape := r.shapes[x]
	if len(shape) == 2 && shape[0] != 1 {
		r.err = invalidArg("unexpected shape for IN input")
		in.finishResponding(r)
		return
	}
	n := int64(int32(binary.LittleEndian.Uint32(r.data[x])))
	if n < 0 || n > MaxSquareResponses {
		r.err = invalidArg("IN is %d: the simulator's square model sends 0 to %d responses", n, MaxSquareResponses)
		in.finishResponding(r)
		return
	}
	outShape := make([]int64, len(shape))
	for i := range outShape {
		outShape[i] = 1
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := range int(n) {
		if !in.squareResponse(r, e, timer, i, int(n), outShape) {
			break
		}
	}
	in.finishResponding(r)
}

// squareResponse makes response i of n and reports whether to go on.
func (in *instance) squareResponse(r *request, e *backendEmu, timer *time.Timer, i, n int, outShape []int64) bool {
	s := in.s
	start := s.e.now()
	if r.state.Load() == stateCancelled {
		in.waitUntil(timer, start+int64(e.squareCancel))
		s.mv.stats.recordResponse(i, responseCancel, start, start, s.e.now())
		return false
	}
	if !in.waitUntil(timer, start+int64(e.squareInfer)) {
		return false
	}
	if i+e.squareEmpty >= n {
		s.mv.stats.recordResponse(i, responseEmpty, start, start, s.e.now())
		return true
	}
	outStart := s.e.now()
	resp := &pb.ModelInferResponse{ModelName: s.mv.model.name, ModelVersion: s.mv.label, Id: r.req.GetId(),
		Outputs:           []*pb.ModelInferResponse_InferOutputTensor{{Name: "OUT", Datatype: "INT32", Shape: outShape}},
		RawOutputContents: [][]byte{binary.LittleEndian.AppendUint32(nil, uint32(n))},
	}
	if !in.waitUntil(timer, outStart+int64(e.squareOutput)) {
		return false
	}
	end := s.e.now()
	if i+e.squareEmpty+e.squareFail >= n {
		s.mv.stats.recordResponse(i, responseFailOutput, start, outStart, end)
		if r.onResponse != nil {
			r.onResponse(r, nil, &kserve.Error{Code: codes.Unknown, Message: "simulated failure"})
		}
		return true
	}
	s.mv.stats.recordResponse(i, responseSuccess, start, outStart, end)
	if r.onResponse != nil {
		r.onResponse(r, resp, nil)
	}
	return true
}

// waitUntil sleeps until the engine clock reaches t; false when the
// scheduler stops first.
func (in *instance) waitUntil(timer *time.Timer, t int64) bool {
	s := in.s
	d := time.Duration(t - s.e.now())
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-s.stop:
		return false
	}
}

// finishResponding ends a decoupled backend's request after its last
// response: its final flag, an empty response when the request asked for
// one (naming the model and the version as the request did, as Triton's
// frontend does), or its error.
func (in *instance) finishResponding(r *request) {
	if r.state.CompareAndSwap(stateResponding, stateDone) && r.err == nil && r.req.GetParameters()[emptyFinalResponse].GetBoolParam() {
		r.resp = &pb.ModelInferResponse{ModelName: in.s.mv.model.name, ModelVersion: r.req.GetModelVersion(), Id: r.req.GetId()}
	}
	r.complete()
}
