package sim

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// engNew starts an engine and closes it when the test ends.
func engNew(t testing.TB, repo Repository, opts EngineOptions) *Engine {
	t.Helper()
	e, err := NewEngine(repo, opts)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// engInt32Bytes encodes values as raw INT32.
func engInt32Bytes(v []int32) []byte {
	return triton.PutInt32s(v)
}

// engAddSubRequest is a valid batch-1 request for the demo "simple" model.
func engAddSubRequest(a, b []int32) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{
		ModelName: "simple",
		Id:        "req-1",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{engInt32Bytes(a), engInt32Bytes(b)},
	}
}

// engFP32Request is a request with one FP32 input "INPUT0" of shape
// [batch, n] (or [n] when batch is 0) for the named model.
func engFP32Request(model string, batch, n int) *pb.ModelInferRequest {
	shape := []int64{int64(n)}
	items := 1
	if batch > 0 {
		shape = []int64{int64(batch), int64(n)}
		items = batch
	}
	data := make([]byte, 4*n*items)
	for i := 0; i < n*items; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)))
	}
	return &pb.ModelInferRequest{
		ModelName:        model,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: shape}},
		RawInputContents: [][]byte{data},
	}
}

// engTimedModel is a batching FP32 model with a fixed execution time, for the
// scheduler tests. Its instances share GPU 0, so capacity is instances ×
// maxBatch / fixed for one instance, less for more: executions running at
// once each take longer (gpu_sharing.go).
func engTimedModel(name string, fixed time.Duration, maxBatch, instances int, db *DynamicBatchingSpec) ModelSpec {
	return ModelSpec{
		Name:            name,
		Backend:         "python",
		MaxBatchSize:    maxBatch,
		Inputs:          []TensorSpec{{Name: "INPUT0", DataType: "FP32", Dims: []int64{4}}},
		Outputs:         []TensorSpec{{Name: "OUTPUT0", DataType: "FP32", Dims: []int64{4}}},
		DynamicBatching: db,
		InstanceGroups:  []InstanceGroupSpec{{Count: instances, Kind: "KIND_GPU", GPUs: []int{0}}},
		Latency:         LatencySpec{FixedUS: float64(fixed / time.Microsecond)},
		MemoryBytes:     256 << 20,
		Behaviour:       BehaviourIdentity,
	}
}

// infer sends a request with a deadline so that a hung engine fails the
// test instead of hanging it.
func engInfer(t testing.TB, e *Engine, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return e.Infer(ctx, req, false)
}

// engStats returns the single ModelStatistics of a model.
func engStats(t testing.TB, e *Engine, model string) *pb.ModelStatistics {
	t.Helper()
	resp, err := e.ModelStatistics(model, "")
	if err != nil {
		t.Fatalf("ModelStatistics(%s): %v", model, err)
	}
	if len(resp.ModelStats) != 1 {
		t.Fatalf("ModelStatistics(%s): %d entries, want 1", model, len(resp.ModelStats))
	}
	return resp.ModelStats[0]
}

// engMetrics returns the metrics of a model's only version.
func engMetrics(t testing.TB, e *Engine, model string) ModelMetricsState {
	t.Helper()
	for _, m := range e.Metrics().Models {
		if m.Model == model {
			return m
		}
	}
	t.Fatalf("Metrics: no model %q", model)
	return ModelMetricsState{}
}

// engCheckInvariants checks Triton's statistics invariants and that the
// metrics agree with the statistics.
func engCheckInvariants(t testing.TB, e *Engine, model string) {
	t.Helper()
	s := engStats(t, e, model)
	is := s.InferenceStats
	if is.Queue.Count != is.Success.Count {
		t.Errorf("queue.count %d != success.count %d", is.Queue.Count, is.Success.Count)
	}
	for name, d := range map[string]*pb.StatisticDuration{"compute_input": is.ComputeInput, "compute_infer": is.ComputeInfer, "compute_output": is.ComputeOutput} {
		if d.Count != is.Success.Count {
			t.Errorf("%s.count %d != success.count %d", name, d.Count, is.Success.Count)
		}
	}
	var execs, infers uint64
	for _, b := range s.BatchStats {
		if b.ComputeInput.Count != b.ComputeInfer.Count || b.ComputeInfer.Count != b.ComputeOutput.Count {
			t.Errorf("batch_stats[%d] counts differ: %d %d %d", b.BatchSize, b.ComputeInput.Count, b.ComputeInfer.Count, b.ComputeOutput.Count)
		}
		execs += b.ComputeInfer.Count
		infers += b.BatchSize * b.ComputeInfer.Count
	}
	if execs != s.ExecutionCount {
		t.Errorf("Σ batch_stats counts %d != execution_count %d", execs, s.ExecutionCount)
	}
	if infers != s.InferenceCount {
		t.Errorf("Σ batch_size×count %d != inference_count %d", infers, s.InferenceCount)
	}
	if is.Success.Count > 0 && is.Success.Ns < is.Queue.Ns {
		t.Errorf("success.ns %d < queue.ns %d", is.Success.Ns, is.Queue.Ns)
	}
	m := engMetrics(t, e, model)
	if m.Success != is.Success.Count || m.InferenceCount != s.InferenceCount || m.ExecutionCount != s.ExecutionCount {
		t.Errorf("metrics success/inference/exec %d/%d/%d != stats %d/%d/%d",
			m.Success, m.InferenceCount, m.ExecutionCount, is.Success.Count, s.InferenceCount, s.ExecutionCount)
	}
	var byGPU, failures uint64
	for _, n := range m.SuccessByGPU {
		byGPU += n
	}
	for _, n := range m.FailureByReason {
		failures += n
	}
	if byGPU != m.Success {
		t.Errorf("Σ SuccessByGPU %d != Success %d", byGPU, m.Success)
	}
	if failures != is.Fail.Count {
		t.Errorf("Σ FailureByReason %d != fail.count %d", failures, is.Fail.Count)
	}
	// µs counters truncate per request: ns/1000 − count < µs ≤ ns/1000.
	n := is.Success.Count
	for name, p := range map[string][2]uint64{
		"request":        {m.RequestUS, is.Success.Ns},
		"queue":          {m.QueueUS, is.Queue.Ns},
		"compute_input":  {m.ComputeInputUS, is.ComputeInput.Ns},
		"compute_infer":  {m.ComputeInferUS, is.ComputeInfer.Ns},
		"compute_output": {m.ComputeOutputUS, is.ComputeOutput.Ns},
	} {
		us, ns := p[0], p[1]
		if us > ns/1000 || us+n < ns/1000 {
			t.Errorf("%s: metrics %d µs inconsistent with %d ns over %d requests", name, us, ns, n)
		}
	}
}
