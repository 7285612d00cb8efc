package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// Failure reasons of nv_inference_request_failure, in the order Triton
// lists them.
const (
	reasonRejected = iota
	reasonCanceled
	reasonBackend
	reasonOther
)

var reasonNames = [...]string{"REJECTED", "CANCELED", "BACKEND", "OTHER"}

// MetricsState is everything the /metrics endpoint prints, read at one
// moment and consistent with ModelStatistics.
type MetricsState struct {
	Models []ModelMetricsState // one per loaded, ready model version
	GPUs   []GPUState
}

// ModelMetricsState is one model version's per-model metric families.
type ModelMetricsState struct {
	Model, Version string
	// GPUUUIDs are the GPUs its KIND_GPU instances run on.
	GPUUUIDs []string
	// SuccessByGPU splits Success by the gpu_uuid of the instance that
	// executed the request ("" for CPU instances), as Triton labels it.
	SuccessByGPU map[string]uint64
	Success      uint64
	// FailureByReason always holds REJECTED, CANCELED, BACKEND and OTHER.
	FailureByReason                map[string]uint64
	InferenceCount, ExecutionCount uint64
	// Pending counts requests enqueued and not yet executing.
	Pending uint64
	// Durations are cumulative µs, each request's ns/1000 truncated, summed
	// over successful requests.
	RequestUS, QueueUS, ComputeInputUS, ComputeInferUS, ComputeOutputUS uint64
	// LoadSeconds is how long loading the version took.
	LoadSeconds float64
	// InputByteSize is the identity backend's input_byte_size_counter:
	// the bytes of the inputs it copied to outputs. HasInputByteSize tells
	// the models that have it.
	InputByteSize    uint64
	HasInputByteSize bool
	// Series split the counters by the reporter Triton counts them under:
	// the model's own ("" gpu_uuid: CPU instances, requests that fail
	// before they execute, the pending gauge) first, then one per GPU of
	// its KIND_GPU instances, by UUID. Every family is printed once per
	// series; they sum to the totals above.
	Series []ModelSeriesState
}

// ModelSeriesState is one label set's share of a model version's
// counters: the series without gpu_uuid when GPUUUID is "", else the
// series of the instances on that GPU.
type ModelSeriesState struct {
	GPUUUID                                                             string
	Success, InferenceCount, ExecutionCount                             uint64
	FailureByReason                                                     map[string]uint64
	RequestUS, QueueUS, ComputeInputUS, ComputeInferUS, ComputeOutputUS uint64
}

// GPUState is one simulated GPU's gauges as last refreshed.
type GPUState struct {
	UUID        string
	Name        string
	Utilization float64 // 0..1, busy fraction over the last metrics interval
	MemoryUsed  uint64
	MemoryTotal uint64
	PowerW      float64
	PowerLimitW float64
	EnergyJ     float64 // since the engine started
}

// duration is a StatisticDuration.
type duration struct{ count, ns uint64 }

func (d duration) pb() *pb.StatisticDuration {
	return &pb.StatisticDuration{Count: d.count, Ns: d.ns}
}

// batchStat is one batch_stats entry; the count is the same for all three
// durations.
type batchStat struct {
	count                   uint64
	inputNS, inferNS, outNS uint64
}

// seriesCounters are the metric counters of one reporter: the model's own
// (gpu_uuid "") or the instances' on one GPU.
type seriesCounters struct {
	success, inferenceCount, executionCount     uint64
	failures                                    [len(reasonNames)]uint64
	requestUS, queueUS, cInUS, cInferUS, cOutUS uint64
}

// statistics are one model version's cumulative statistics, kept with
// Triton's invariants: queue and compute counts equal the success count,
// batch_stats counts sum to execution_count, and Σ batch_size × count equals
// inference_count.
type statistics struct {
	mu                                          sync.Mutex
	success, fail, queue, cIn, cInfer, cOut     duration
	inferenceCount, executionCount, lastInferMS uint64
	batches                                     map[uint64]*batchStat
	// responses are a decoupled model's response_stats, by response
	// index; empty for other models, as on Triton.
	responses map[uint64]*responseStat

	// series are keyed by gpu_uuid; "" (the model's own) always exists.
	series    map[string]*seriesCounters
	loadNanos int64
	// inputBytes is the identity backend's input_byte_size_counter.
	inputBytes atomic.Uint64
}

// init starts empty statistics for a version whose KIND_GPU instances run
// on the GPUs gpuUUIDs.
func (st *statistics) init(gpuUUIDs []string) {
	st.batches = map[uint64]*batchStat{}
	st.responses = map[uint64]*responseStat{}
	st.series = map[string]*seriesCounters{"": {}}
	for _, u := range gpuUUIDs {
		st.series[u] = &seriesCounters{}
	}
}

// addSeries adds empty counters for GPUs the statistics have none for.
func (st *statistics) addSeries(gpuUUIDs []string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, u := range gpuUUIDs {
		st.seriesOf(u)
	}
}

// recordFailure counts a failed request that took ns from its start.
func (st *statistics) recordFailure(ns int64, reason int) {
	st.mu.Lock()
	st.fail.count++
	st.fail.ns += uint64(max(0, ns))
	st.series[""].failures[reason]++
	st.mu.Unlock()
}

// recordExecution completes the requests of one execution that were not
// cancelled meanwhile (marking them done) and records their statistics: a
// request with err set is a BACKEND failure; the others succeeded, and the
// execution's batch size is the sum of their batch elements. An execution
// whose requests all failed counts only when countFailed (a backend that
// reports its batch whatever became of its requests, as Triton's do).
func (st *statistics) recordExecution(batch []*request, ts execTimes, gpuUUID string, end int64, wallMS int64, countFailed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	sc := st.seriesOf(gpuUUID)
	var elems uint64
	executed := false
	for _, r := range batch {
		if !r.state.CompareAndSwap(stateExecuting, stateDone) {
			continue
		}
		executed = true
		if r.err != nil && r.unreported {
			continue
		}
		if r.err != nil {
			st.fail.count++
			st.fail.ns += uint64(max(0, end-r.start))
			sc.failures[reasonBackend]++
			continue
		}
		st.recordSuccessLocked(sc, r, ts, end)
		elems += uint64(r.batch)
	}
	if elems > 0 || executed && countFailed {
		st.recordBatchLocked(sc, elems, ts, wallMS)
	}
}

// recordReleased records an execution of a decoupled backend that reports
// every request of it a success when it releases them, whatever became of
// their responses (Triton's repeat backend); it leaves their state alone.
func (st *statistics) recordReleased(batch []*request, ts execTimes, gpuUUID string, wallMS int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	sc := st.seriesOf(gpuUUID)
	for _, r := range batch {
		st.recordSuccessLocked(sc, r, ts, ts.end)
	}
	st.recordBatchLocked(sc, uint64(len(batch)), ts, wallMS)
}

// addSuccessLocked adds one successful request's request, queue and
// compute times to the model's cumulative durations.
func (st *statistics) addSuccessLocked(total, q, cin, cinf, cout uint64) {
	st.success.count++
	st.success.ns += total
	st.queue.count++
	st.queue.ns += q
	st.cIn.count++
	st.cIn.ns += cin
	st.cInfer.count++
	st.cInfer.ns += cinf
	st.cOut.count++
	st.cOut.ns += cout
}

// recordSuccessLocked counts a request that succeeded in an execution.
func (st *statistics) recordSuccessLocked(sc *seriesCounters, r *request, ts execTimes, end int64) {
	cin := uint64(max(0, ts.inputEnd-ts.start))
	cinf := uint64(max(0, ts.outputStart-ts.inputEnd))
	cout := uint64(max(0, ts.end-ts.outputStart))
	total := uint64(max(0, end-r.start))
	q := uint64(max(0, ts.start-r.queueStart))
	st.addSuccessLocked(total, q, cin, cinf, cout)
	sc.success++
	sc.requestUS += total / 1000
	sc.queueUS += q / 1000
	sc.cInUS += cin / 1000
	sc.cInferUS += cinf / 1000
	sc.cOutUS += cout / 1000
	r.cin, r.cinf, r.cout = cin, cinf, cout
}

// recordBatchLocked counts an execution of elems batch elements.
func (st *statistics) recordBatchLocked(sc *seriesCounters, elems uint64, ts execTimes, wallMS int64) {
	cin := uint64(max(0, ts.inputEnd-ts.start))
	cinf := uint64(max(0, ts.outputStart-ts.inputEnd))
	cout := uint64(max(0, ts.end-ts.outputStart))
	st.inferenceCount += elems
	st.executionCount++
	sc.inferenceCount += elems
	sc.executionCount++
	st.lastInferMS = uint64(wallMS)
	b := st.batches[elems]
	if b == nil {
		b = &batchStat{}
		st.batches[elems] = b
	}
	b.count++
	b.inputNS += cin
	b.inferNS += cinf
	b.outNS += cout
}

// proto returns the statistics as Triton's ModelStatistics.
func (st *statistics) proto(name, version string) *pb.ModelStatistics {
	st.mu.Lock()
	defer st.mu.Unlock()
	ms := &pb.ModelStatistics{
		Name:           name,
		Version:        version,
		LastInference:  st.lastInferMS,
		InferenceCount: st.inferenceCount,
		ExecutionCount: st.executionCount,
		InferenceStats: &pb.InferStatistics{
			Success:       st.success.pb(),
			Fail:          st.fail.pb(),
			Queue:         st.queue.pb(),
			ComputeInput:  st.cIn.pb(),
			ComputeInfer:  st.cInfer.pb(),
			ComputeOutput: st.cOut.pb(),
			CacheHit:      &pb.StatisticDuration{},
			CacheMiss:     &pb.StatisticDuration{},
		},
		ResponseStats: make(map[string]*pb.InferResponseStatistics, len(st.responses)),
	}
	for i, r := range st.responses {
		ms.ResponseStats[strconv.FormatUint(i, 10)] = r.proto()
	}
	for _, size := range slices.Sorted(maps.Keys(st.batches)) {
		b := st.batches[size]
		ms.BatchStats = append(ms.BatchStats, &pb.InferBatchStatistics{
			BatchSize:     size,
			ComputeInput:  &pb.StatisticDuration{Count: b.count, Ns: b.inputNS},
			ComputeInfer:  &pb.StatisticDuration{Count: b.count, Ns: b.inferNS},
			ComputeOutput: &pb.StatisticDuration{Count: b.count, Ns: b.outNS},
		})
	}
	return ms
}

// metrics returns the statistics as metric families.
func (st *statistics) metrics(mv *modelVersion) ModelMetricsState {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := ModelMetricsState{
		Model:            mv.model.name,
		Version:          mv.label,
		SuccessByGPU:     make(map[string]uint64, len(st.series)),
		Success:          st.success.count,
		FailureByReason:  make(map[string]uint64, len(reasonNames)),
		InferenceCount:   st.inferenceCount,
		ExecutionCount:   st.executionCount,
		Pending:          uint64(max(0, mv.sched.pending.Load())),
		LoadSeconds:      float64(st.loadNanos) / 1e9,
		InputByteSize:    st.inputBytes.Load(),
		HasInputByteSize: mv.model.emu != nil && mv.model.emu.backend == backendIdentity,
	}
	for _, n := range reasonNames {
		s.FailureByReason[n] = 0
	}
	uuids := slices.Sorted(maps.Keys(st.series))
	for _, u := range uuids {
		sc := st.series[u]
		ss := ModelSeriesState{
			GPUUUID:         u,
			Success:         sc.success,
			InferenceCount:  sc.inferenceCount,
			ExecutionCount:  sc.executionCount,
			FailureByReason: make(map[string]uint64, len(reasonNames)),
			RequestUS:       sc.requestUS,
			QueueUS:         sc.queueUS,
			ComputeInputUS:  sc.cInUS,
			ComputeInferUS:  sc.cInferUS,
			ComputeOutputUS: sc.cOutUS,
		}
		for i, n := range reasonNames {
			ss.FailureByReason[n] = sc.failures[i]
			s.FailureByReason[n] += sc.failures[i]
		}
		if u != "" {
			s.GPUUUIDs = append(s.GPUUUIDs, u)
		}
		s.SuccessByGPU[u] = sc.success
		s.RequestUS += sc.requestUS
		s.QueueUS += sc.queueUS
		s.ComputeInputUS += sc.cInUS
		s.ComputeInferUS += sc.cInferUS
		s.ComputeOutputUS += sc.cOutUS
		s.Series = append(s.Series, ss)
	}
	return s
}

// readyVersions lists the ready model versions, by name then version.
func (e *Engine) readyVersions() []*modelVersion {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed || e.starting() {
		return nil
	}
	var out []*modelVersion
	for _, name := range e.names {
		out = append(out, e.models[name].versions...)
	}
	return out
}

// ModelStatistics returns the statistics of the ready versions of a model,
// or of every model when name is empty. A model with no ready version is
// INVALID_ARGUMENT "requested model 'x' is not available".
func (e *Engine) ModelStatistics(name, version string) (*pb.ModelStatisticsResponse, error) {
	resp := &pb.ModelStatisticsResponse{}
	v, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	found, foundVersion := false, false
	for _, mv := range e.readyVersions() {
		if name != "" && mv.model.name != name {
			continue
		}
		found = true
		if v >= 0 && mv.version != v {
			continue
		}
		foundVersion = true
		resp.ModelStats = append(resp.ModelStats, mv.stats.proto(mv.model.name, mv.label))
	}
	if name != "" && !found {
		return nil, &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("requested model '%s' is not available", textsafe.Bound(name))}
	}
	if name != "" && !foundVersion {
		return nil, &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("requested model version is not available for model '%s'", textsafe.Bound(name))}
	}
	return resp, nil
}

// Metrics returns the per-model and GPU metric families.
func (e *Engine) Metrics() MetricsState {
	var s MetricsState
	for _, mv := range e.readyVersions() {
		s.Models = appendMetrics(s.Models, mv)
	}
	for _, g := range e.gpus {
		s.GPUs = append(s.GPUs, g.state())
	}
	return s
}
