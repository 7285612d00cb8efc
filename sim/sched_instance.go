package sim

import (
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
)

// instance executes one batch at a time.
type instance struct {
	s       *scheduler
	index   int  // among the model version's instances, in creation order
	gpu     *gpu // nil for CPU instances
	gpuUUID string
	wake    chan struct{} // GPU instances: another execution on the GPU ended
	shared  bool          // guarded by gpu.mu: the execution shared the GPU
	work    chan []*request
	rng     *rand.Rand
	sleeper *sleeper
}

// run is the instance goroutine: it executes the batches the batcher hands
// it and then offers itself again.
func (in *instance) run() {
	defer in.s.wg.Done()
	for batch := range in.work {
		in.execute(batch)
		in.s.free <- in
	}
}

// execute runs one batch: it takes the latency model's time, computes the
// outputs, records statistics and completes the requests.
func (in *instance) execute(batch []*request) {
	s := in.s
	m := s.mv.model
	if b := m.spec.Behaviour; b == BehaviourRepeat || b == BehaviourSquare {
		in.executeDecoupled(batch)
		return
	}
	f := s.e.currentFaults()
	elems, itemLen := 0, 0
	for _, r := range batch {
		elems += r.batch
		itemLen = max(itemLen, r.itemLen)
	}
	cin, cinf, cout := m.spec.Latency.durations(elems, itemLen, in.rng)
	if f.SpikeRate > 0 && f.SpikeDelay > 0 && in.rng.Float64() < f.SpikeRate {
		cinf += f.SpikeDelay
	}
	// A backend's own delay: within its compute, or before it starts
	// (then Triton counts it as queue time).
	var pre time.Duration
	if d, before := m.emu.execDelay(in.index); before {
		pre = d
	} else {
		cinf += d
	}
	tq := s.e.now()
	t1, _, ok := in.occupy(tq, pre+cin+cinf+cout)
	t0 := tq + int64(pre)
	if !ok {
		in.fail(batch, errStopping, reasonOther)
		return
	}
	var failed []bool
	if f.ErrorRate > 0 {
		failed = make([]bool, len(batch))
		for i := range batch {
			failed[i] = in.rng.Float64() < f.ErrorRate
		}
	}
	for i, r := range batch {
		if failed != nil && failed[i] {
			r.err = &kserve.Error{Code: codes.Internal, Message: simulatedFailure}
			continue
		}
		resp, err := m.respond(r)
		if err != nil {
			r.err = err
			continue
		}
		r.resp = resp
	}
	t2 := s.e.now()
	// The copies keep their time and the kernels take the stretch of a
	// shared GPU: compute_infer is the rest of the execution's wall time.
	ts := execTimes{start: t0, inputEnd: t0 + int64(cin), outputStart: max(t0+int64(cin), t1-int64(cout)), end: t2}
	s.mv.stats.recordExecution(batch, ts, in.gpuUUID, s.e.now(), time.Now().UnixMilli(), m.emu != nil)
	for _, r := range batch {
		r.complete()
	}
}

// fail completes every request of a batch with err.
func (in *instance) fail(batch []*request, err error, reason int) {
	now := in.s.e.now()
	for _, r := range batch {
		if r.state.CompareAndSwap(stateExecuting, stateDone) {
			in.s.mv.stats.recordFailure(now-r.start, reason)
			r.err = err
			r.complete()
		}
	}
}

// execTimes are one execution's timestamps on the engine clock.
type execTimes struct {
	start, inputEnd, outputStart, end int64
}
