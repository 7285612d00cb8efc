package sim

import "github.com/tritontop/tritontop/triton/pb"

// responseStat is one response index's response_stats entry, kept with
// Triton's rules (core InferenceStatsAggregator::UpdateResponse*): a
// successful response adds to compute_infer (start to output start),
// compute_output (output start to end) and success; an empty one to
// compute_infer and empty_response; a failed one to compute_infer and
// fail; a cancelled one to cancel only.
type responseStat struct {
	computeInfer, computeOutput, success, fail, empty, cancel duration
}

func (r *responseStat) proto() *pb.InferResponseStatistics {
	return &pb.InferResponseStatistics{
		ComputeInfer:  r.computeInfer.pb(),
		ComputeOutput: r.computeOutput.pb(),
		Success:       r.success.pb(),
		Fail:          r.fail.pb(),
		EmptyResponse: r.empty.pb(),
		Cancel:        r.cancel.pb(),
	}
}

// Kinds of response for recordResponse.
const (
	responseSuccess = iota
	responseEmpty
	responseFail
	responseCancel
	// responseFailOutput is a failed response whose outputs were made:
	// its time splits into compute_infer and compute_output as a
	// successful one's does.
	responseFailOutput
)

// add counts n ns into d.
func (d *duration) add(ns int64) {
	d.count++
	d.ns += uint64(max(ns, 0))
}

// recordResponse records response number index of a request: it began at
// start (the previous response's end, or the request's admission), its
// output was ready at outStart and it was handed over at end.
func (st *statistics) recordResponse(index int, kind int, start, outStart, end int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r := st.responses[uint64(index)]
	if r == nil {
		r = &responseStat{}
		st.responses[uint64(index)] = r
	}
	switch kind {
	case responseSuccess:
		r.computeInfer.add(outStart - start)
		r.computeOutput.add(end - outStart)
		r.success.add(end - start)
	case responseEmpty:
		r.computeInfer.add(end - start)
		r.empty.add(end - start)
	case responseFail:
		r.computeInfer.add(end - start)
		r.fail.add(end - start)
	case responseFailOutput:
		r.computeInfer.add(outStart - start)
		r.computeOutput.add(end - outStart)
		r.fail.add(end - start)
	case responseCancel:
		r.cancel.add(end - start)
	}
}

// recordAdmission records one execution of a decoupled model's instance:
// the n requests it took in at once, with the time their prefill took.
// Their success, and with it inference_count, is recorded when each
// request ends (recordLLMSuccess), as Triton counts inferences.
func (st *statistics) recordAdmission(n int, ts execTimes, gpuUUID string, wallMS int64) {
	cin := uint64(max(0, ts.inputEnd-ts.start))
	cinf := uint64(max(0, ts.outputStart-ts.inputEnd))
	cout := uint64(max(0, ts.end-ts.outputStart))
	st.mu.Lock()
	defer st.mu.Unlock()
	sc := st.seriesOf(gpuUUID)
	st.executionCount++
	sc.executionCount++
	st.lastInferMS = uint64(wallMS)
	b := st.batches[uint64(n)]
	if b == nil {
		b = &batchStat{}
		st.batches[uint64(n)] = b
	}
	b.count++
	b.inputNS += cin
	b.inferNS += cinf
	b.outNS += cout
}

// recordLLMSuccess records a decoupled model's request that ended well:
// queued from queueStart to admitted, computing until its last output was
// ready (lastOut), handed over at end.
func (st *statistics) recordLLMSuccess(r *request, admitted, lastOut, end int64, gpuUUID string) {
	total := uint64(max(0, end-r.start))
	q := uint64(max(0, admitted-r.queueStart))
	cinf := uint64(max(0, lastOut-admitted))
	cout := uint64(max(0, end-lastOut))
	st.mu.Lock()
	defer st.mu.Unlock()
	sc := st.seriesOf(gpuUUID)
	st.success.count++
	st.success.ns += total
	st.queue.count++
	st.queue.ns += q
	st.cIn.count++
	st.cInfer.count++
	st.cInfer.ns += cinf
	st.cOut.count++
	st.cOut.ns += cout
	st.inferenceCount++
	sc.success++
	sc.inferenceCount++
	sc.requestUS += total / 1000
	sc.queueUS += q / 1000
	sc.cInferUS += cinf / 1000
	sc.cOutUS += cout / 1000
}

// seriesOf returns the counters of a GPU's series; st.mu is held.
func (st *statistics) seriesOf(gpuUUID string) *seriesCounters {
	sc := st.series[gpuUUID]
	if sc == nil {
		sc = &seriesCounters{}
		st.series[gpuUUID] = sc
	}
	return sc
}
