package sim

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// ensembleRun is one request to an ensemble on its way through the steps,
// as Triton's ensemble scheduler (ensemble_scheduler.cc EnsembleContext)
// runs it: each step is a request to its composing model, queued, batched
// and executed by that model's own scheduler; a step starts as soon as
// every tensor it reads exists; the ensemble's outputs are its tensors
// once the steps have written them. The ensemble has no queue and no
// instances of its own.
type ensembleRun struct {
	e    *Engine
	m    *model // the ensemble
	info *ensembleInfo
	r    *request // the request to the ensemble
	// computeStart is when the steps began: the ensemble's queue time
	// ends there (Triton's EnsembleContext takes it as it is built).
	computeStart int64
	need         []bool // the steps to run; nil: all of them
	stepDone     func(*request)

	mu     sync.Mutex
	values []ensembleValue // by tensor
	steps  []stepState     // by step
	// running counts the step requests submitted and not yet done.
	running   int
	err       error
	cancelled bool
	// The compute times of the steps' requests, summed as Triton's
	// ensemble statistics sum them.
	cin, cinf, cout uint64
}

// ensembleValue is an ensemble tensor's value once written.
type ensembleValue struct {
	set      bool
	datatype string
	shape    []int64
	data     []byte
	// batch is the batch size of the request that wrote it, 0 when that
	// model does not batch (Triton's TensorData::batch_size_).
	batch int64
}

// stepState is one step of a run: whether it started, and its request
// while it runs.
type stepState struct {
	started bool
	req     *pb.ModelInferRequest
}

// startEnsemble runs a validated request to an ensemble; the ensemble's
// scheduler has just accepted it. It completes the request when the steps
// are done or one failed.
func (e *Engine) startEnsemble(r *request) {
	m := r.version.model
	info := m.ens.Load()
	run := &ensembleRun{e: e, m: m, info: info, r: r,
		values: make([]ensembleValue, len(info.tensors)),
		steps:  make([]stepState, len(info.steps)),
		need:   info.needed(r.outputs),
	}
	run.stepDone = run.done
	var batch int64
	if m.spec.MaxBatchSize > 0 {
		batch = int64(r.batch)
	}
	for j := range m.inputs {
		run.values[j] = ensembleValue{set: true, datatype: m.inputs[j].datatype, shape: r.shapes[j], data: r.data[j], batch: batch}
	}
	r.run = run
	run.computeStart = e.now()
	run.mu.Lock()
	ready := run.ready()
	finished := len(ready) == 0
	run.mu.Unlock()
	if finished {
		run.finish()
		return
	}
	run.submit(ready)
}

// ready marks the steps that can start now as started and returns them
// with their requests built; the caller holds run.mu. After an error or a
// cancellation no step starts.
func (run *ensembleRun) ready() []int {
	if run.err != nil || run.cancelled {
		return nil
	}
	var out []int
	for i := range run.info.steps {
		s := &run.info.steps[i]
		if run.steps[i].started || (run.need != nil && !run.need[i]) {
			continue
		}
		inputsSet := true
		for _, in := range s.inputs {
			inputsSet = inputsSet && run.values[in.tensor].set
		}
		if !inputsSet {
			continue
		}
		run.steps[i] = stepState{started: true, req: run.stepRequest(s)}
		out = append(out, i)
	}
	run.running += len(out)
	return out
}

// stepRequest is the request of step s, from the tensors it reads: the
// ensemble request's id and parameters, the inputs of the input map, the
// outputs of the output map, as Triton's EnsembleContext::InitStep builds
// it. The caller holds run.mu.
func (run *ensembleRun) stepRequest(s *ensembleStep) *pb.ModelInferRequest {
	er := run.r.req
	req := &pb.ModelInferRequest{
		ModelName:        s.name,
		ModelVersion:     s.version,
		Id:               er.GetId(),
		Parameters:       er.GetParameters(),
		Outputs:          s.wanted,
		Inputs:           make([]*pb.ModelInferRequest_InferInputTensor, len(s.inputs)),
		RawInputContents: make([][]byte, len(s.inputs)),
	}
	batching := s.model.spec.MaxBatchSize > 0
	for k, in := range s.inputs {
		v := &run.values[in.tensor]
		req.Inputs[k] = &pb.ModelInferRequest_InferInputTensor{Name: in.name, Datatype: v.datatype,
			Shape: reshapeTensorDims(in.dims, batching, v.batch, v.shape)}
		req.RawInputContents[k] = v.data
	}
	return req
}

// reshapeTensorDims is Triton's EnsembleContext::ReshapeTensorDims: a
// tensor passed between a batching and a non-batching model gains a batch
// dimension of 1, or loses one of size 1, when that makes it match the
// config dims; otherwise it passes as it is.
func reshapeTensorDims(configDims []int64, batching bool, batch int64, shape []int64) []int64 {
	if batching == (batch != 0) {
		return shape
	}
	if batching {
		if dimsMatch(configDims, shape) {
			return append([]int64{1}, shape...)
		}
		return shape
	}
	if !dimsMatch(configDims, shape) && batch == 1 && len(shape) > 0 {
		return shape[1:]
	}
	return shape
}

// submit sends the started steps' requests to their models. A request its
// model refuses fails the run, as a step Triton's ensemble fails to
// schedule does. Each step's outputs are reserved in the memory budget
// with the ensemble request's (its hold), and are the ensemble request's
// to give back once it is answered (done).
func (run *ensembleRun) submit(steps []int) {
	for _, i := range steps {
		run.mu.Lock()
		req := run.steps[i].req
		run.mu.Unlock()
		if _, err := run.e.submit(req, false, run.stepDone, nil, budgetShare{hold: run.r.budget.hold}); err != nil {
			run.stepFailed(err)
		}
	}
}

// stepFailed ends a step that never ran.
func (run *ensembleRun) stepFailed(err error) {
	run.mu.Lock()
	run.running--
	if run.err == nil {
		run.err = err
	}
	last := run.running == 0
	run.mu.Unlock()
	if last {
		run.finish()
	}
}

// done is each step request's completion (its onDone): the step's outputs
// become ensemble tensors, and the steps that can now start start; the last
// step to end ends the run. It runs on the composing model's instance
// goroutine and does not block.
func (run *ensembleRun) done(sr *request) {
	run.mu.Lock()
	run.running--
	// The step's outputs stay held until the ensemble is answered: they
	// may be the ensemble's tensors.
	run.r.budget.n += sr.budget.n
	sr.budget.n = 0
	i := run.stepOf(sr.req)
	switch {
	case sr.err != nil:
		if run.err == nil {
			run.err = sr.err
		}
	case sr.resp == nil:
		// A step completes with a response or an error; should one
		// bring neither, the run fails rather than read nothing.
		if run.err == nil {
			run.err = errStopping
		}
	case run.err == nil:
		run.cin += sr.cin
		run.cinf += sr.cinf
		run.cout += sr.cout
		run.consume(i, sr)
	}
	if i >= 0 {
		run.steps[i].req = nil
	}
	ready := run.ready()
	last := run.running == 0
	run.mu.Unlock()
	switch {
	case len(ready) > 0:
		run.submit(ready)
	case last:
		run.finish()
	}
}

// stepOf finds the step whose request req is; -1 for none.
func (run *ensembleRun) stepOf(req *pb.ModelInferRequest) int {
	for i := range run.steps {
		if run.steps[i].req == req {
			return i
		}
	}
	return -1
}

// consume writes step i's outputs to the tensors of its output map; the
// caller holds run.mu.
func (run *ensembleRun) consume(i int, sr *request) {
	if i < 0 {
		return
	}
	s := &run.info.steps[i]
	var batch int64
	if s.model.spec.MaxBatchSize > 0 {
		batch = int64(sr.batch)
	}
	resp := sr.resp
	for _, o := range s.outputs {
		for k, t := range resp.Outputs {
			if t.GetName() == o.name && k < len(resp.RawOutputContents) {
				run.values[o.tensor] = ensembleValue{set: true, datatype: t.GetDatatype(), shape: t.GetShape(),
					data: resp.RawOutputContents[k], batch: batch}
				break
			}
		}
	}
}

// cancel gives up a run whose client went away: steps under way finish,
// no further step starts, and the last step to end fails the run. It
// reports false when the request has completed.
func (run *ensembleRun) cancel() bool {
	if !run.r.state.CompareAndSwap(stateExecuting, stateCancelled) {
		return false
	}
	run.mu.Lock()
	run.cancelled = true
	run.mu.Unlock()
	return true
}

// finish completes the ensemble request once no step runs: with the
// ensemble's outputs, or with the first error (Triton's message: "in
// ensemble 'NAME', " before the step's), and records the ensemble's
// statistics.
func (run *ensembleRun) finish() {
	r := run.r
	run.mu.Lock()
	err := run.err
	if err == nil && run.cancelled {
		err = &kserve.Error{Code: codes.Canceled, Message: "Request was cancelled"}
	}
	var resp *pb.ModelInferResponse
	if err == nil {
		resp, err = run.respond()
	}
	cin, cinf, cout := run.cin, run.cinf, run.cout
	run.values = nil
	run.mu.Unlock()
	st := r.version.stats
	end := run.e.now()
	if err != nil {
		st.recordEnsembleFailure(end - r.start)
		r.err = &kserve.Error{Code: kserve.ErrorCode(err), Message: "in ensemble '" + run.m.name + "', " + errorMessage(err)}
	} else {
		r.resp = resp
		st.recordEnsemble(r, run.computeStart, end, [3]uint64{cin, cinf, cout}, time.Now().UnixMilli())
	}
	if !r.state.CompareAndSwap(stateExecuting, stateDone) && r.state.Load() != stateCancelled {
		return
	}
	r.complete()
}

// errorMessage is an error's message without the code a kserve.Error
// prints.
func errorMessage(err error) string {
	if te, ok := err.(*kserve.Error); ok {
		return te.Message
	}
	return err.Error()
}

// respond builds the ensemble's response from its output tensors, in
// config order, shaped as Triton's CheckAndSetEnsembleOutput shapes them;
// the caller holds run.mu.
func (run *ensembleRun) respond() (*pb.ModelInferResponse, error) {
	r, m := run.r, run.m
	resp := &pb.ModelInferResponse{
		ModelName:         m.name,
		ModelVersion:      r.version.label,
		Id:                r.req.GetId(),
		Outputs:           make([]*pb.ModelInferResponse_InferOutputTensor, 0, len(r.outputs)),
		RawOutputContents: make([][]byte, 0, len(r.outputs)),
		Parameters:        sequenceParameters(r.req.GetParameters()),
	}
	batching := m.spec.MaxBatchSize > 0
	for _, j := range r.outputs {
		v := &run.values[run.info.outputs[j]]
		if !v.set {
			return nil, &kserve.Error{Code: codes.InvalidArgument, Message: requestPrefix(r.req) +
				"unexpected deadlock, at least one output is not set while no more ensemble steps can be made"}
		}
		shape := reshapeTensorDims(m.outputs[j].dims, batching, v.batch, v.shape)
		data, datatype := v.data, v.datatype
		if r.classify != nil && r.classify[j] > 0 {
			shape, data = m.classify(j, shape, data, r.classify[j])
			datatype = "BYTES"
		}
		resp.Outputs = append(resp.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: m.outputs[j].name, Datatype: datatype, Shape: shape})
		resp.RawOutputContents = append(resp.RawOutputContents, data)
	}
	return resp, nil
}

// requestPrefix is the "[request id: ...] " Triton's core puts before the
// errors it finds in a request.
func requestPrefix(req *pb.ModelInferRequest) string {
	id := req.GetId()
	if id == "" {
		id = "<id_unknown>"
	}
	return "[request id: " + id + "] "
}

// sequenceParameters are the parameters of an ensemble's response: Triton's
// ensemble scheduler answers the sequence id and flags its steps ran with
// (CheckAndSetEnsembleOutput), which are the request's: sequence_id as the
// request gave it (an integer 0 when it gave none), sequence_start and
// sequence_end.
func sequenceParameters(req map[string]*pb.InferParameter) map[string]*pb.InferParameter {
	id := &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{}}
	if p := req["sequence_id"]; p != nil {
		if _, ok := p.GetParameterChoice().(*pb.InferParameter_StringParam); ok {
			id = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: p.GetStringParam()}}
		} else {
			id = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: p.GetInt64Param()}}
		}
	}
	flag := func(name string) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: req[name].GetBoolParam()}}
	}
	return map[string]*pb.InferParameter{
		"sequence_id":    id,
		"sequence_start": flag("sequence_start"),
		"sequence_end":   flag("sequence_end"),
	}
}
