package sim

// An ensemble's statistics, as Triton 2.73 keeps them (core 73aad7c,
// ensemble_scheduler.cc RequestTracker, infer_request.cc
// ReportStatisticsWithDuration), observed on the real server's `pipeline`
// (preprocess → classifier) under perf_analyzer's load:
//
//   - success, queue and the three compute counts are the ensemble's
//     successful requests; execution_count is one per successful request,
//     and batch_stats has one entry per request batch size, its count
//     that size's requests; inference_count is Σ max(1, batch size).
//   - queue ns is the ensemble's own, from its enqueue to the start of its
//     steps (microseconds in all, not its steps' queues);
//   - compute_input, compute_infer and compute_output ns are the sums of
//     those of every step request, as its composing model recorded them
//     (each request of a batch with the batch's times): the ensemble's
//     compute_infer equals its composing models' compute_infer added, when
//     only the ensemble sends them requests;
//   - a failed request counts twice in fail (and twice as OTHER in
//     nv_inference_request_failure): once as its error response is sent,
//     once as the request is released;
//   - its metrics carry version "1" whatever its version (the ensemble
//     scheduler's metric reporter is made for version 1), its pending
//     request count and load duration stay 0.
//
// The composing models count the requests the ensemble sends them as any
// others.

// recordEnsemble records a successful request to an ensemble: start to end
// is its request time, queueStart to computeStart its queue time, and
// compute the sums of its step requests' compute input, infer and output
// times.
func (st *statistics) recordEnsemble(r *request, computeStart, end int64, compute [3]uint64, wallMS int64) {
	total := uint64(max(0, end-r.start))
	q := uint64(max(0, computeStart-r.queueStart))
	cin, cinf, cout := compute[0], compute[1], compute[2]
	batch := uint64(max(1, r.batch))
	// An ensemble that is a step of another hands its sums on, as Triton's
	// request reports to its parent ensemble's aggregator.
	r.cin, r.cinf, r.cout = cin, cinf, cout
	st.mu.Lock()
	defer st.mu.Unlock()
	st.addSuccessLocked(total, q, cin, cinf, cout)
	sc := st.series[""]
	sc.success++
	sc.requestUS += total / 1000
	sc.queueUS += q / 1000
	sc.cInUS += cin / 1000
	sc.cInferUS += cinf / 1000
	sc.cOutUS += cout / 1000
	st.inferenceCount += batch
	st.executionCount++
	sc.inferenceCount += batch
	sc.executionCount++
	st.lastInferMS = max(st.lastInferMS, uint64(wallMS))
	b := st.batches[batch]
	if b == nil {
		b = &batchStat{}
		st.batches[batch] = b
	}
	b.count++
	b.inputNS += cin
	b.inferNS += cinf
	b.outNS += cout
}

// recordEnsembleFailure records a failed request to an ensemble that took
// ns: twice, as Triton 2.73 does (the ensemble's error response reports the
// failure, and so does the release of its request).
func (st *statistics) recordEnsembleFailure(ns int64) {
	st.recordFailure(ns, reasonOther)
	st.recordFailure(ns, reasonOther)
}

// ensembleMetricsVersion is the version label of every ensemble's metrics.
const ensembleMetricsVersion = "1"

// appendMetrics appends mv's metric families to out. An ensemble's carry
// version "1" and no load duration; the versions of one ensemble, which
// share that label, add up into one set of series, as they share Triton's
// counters.
func appendMetrics(out []ModelMetricsState, mv *modelVersion) []ModelMetricsState {
	s := mv.stats.metrics(mv)
	if !mv.model.ensemble {
		return append(out, s)
	}
	s.Version = ensembleMetricsVersion
	s.LoadSeconds = 0
	if n := len(out); n > 0 && out[n-1].Model == s.Model {
		addMetrics(&out[n-1], &s)
		return out
	}
	return append(out, s)
}

// addMetrics adds an ensemble version's counters to another's; both have
// the one series of the model's own reporter.
func addMetrics(dst, src *ModelMetricsState) {
	dst.Success += src.Success
	dst.InferenceCount += src.InferenceCount
	dst.ExecutionCount += src.ExecutionCount
	dst.RequestUS += src.RequestUS
	dst.QueueUS += src.QueueUS
	dst.ComputeInputUS += src.ComputeInputUS
	dst.ComputeInferUS += src.ComputeInferUS
	dst.ComputeOutputUS += src.ComputeOutputUS
	for k, v := range src.FailureByReason {
		dst.FailureByReason[k] += v
	}
	for k, v := range src.SuccessByGPU {
		dst.SuccessByGPU[k] += v
	}
	for i := range dst.Series {
		d, s := &dst.Series[i], &src.Series[i]
		d.Success += s.Success
		d.InferenceCount += s.InferenceCount
		d.ExecutionCount += s.ExecutionCount
		d.RequestUS += s.RequestUS
		d.QueueUS += s.QueueUS
		d.ComputeInputUS += s.ComputeInputUS
		d.ComputeInferUS += s.ComputeInferUS
		d.ComputeOutputUS += s.ComputeOutputUS
		for k, v := range s.FailureByReason {
			d.FailureByReason[k] += v
		}
	}
}
