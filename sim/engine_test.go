package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

func TestSimpleAddSub(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	a := make([]int32, 16)
	b := make([]int32, 16)
	for i := range a {
		a[i] = int32(i)
		b[i] = int32(3 * i)
	}
	resp, err := engInfer(t, e, engAddSubRequest(a, b))
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	if resp.ModelName != "simple" || resp.ModelVersion != "1" || resp.Id != "req-1" {
		t.Errorf("response header = %q %q %q", resp.ModelName, resp.ModelVersion, resp.Id)
	}
	if len(resp.Outputs) != 2 || len(resp.RawOutputContents) != 2 {
		t.Fatalf("got %d outputs and %d raw contents, want 2 and 2", len(resp.Outputs), len(resp.RawOutputContents))
	}
	sum := triton.Int32s(resp.RawOutputContents[0])
	diff := triton.Int32s(resp.RawOutputContents[1])
	for i := range a {
		if sum[i] != a[i]+b[i] || diff[i] != a[i]-b[i] {
			t.Fatalf("element %d: sum %d diff %d, want %d %d", i, sum[i], diff[i], a[i]+b[i], a[i]-b[i])
		}
	}
	for i, o := range resp.Outputs {
		if o.Datatype != "INT32" || !slices.Equal(o.Shape, []int64{1, 16}) || o.Contents != nil {
			t.Errorf("output %d = %s %v (contents %v)", i, o.Datatype, o.Shape, o.Contents)
		}
	}
	if resp.Outputs[0].Name != "OUTPUT0" || resp.Outputs[1].Name != "OUTPUT1" {
		t.Errorf("output names %q %q", resp.Outputs[0].Name, resp.Outputs[1].Name)
	}
}

func TestTypedContentsAndRequestedOutputs(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	a := make([]int32, 32)
	b := make([]int32, 32)
	for i := range a {
		a[i] = int32(100 - i)
		b[i] = int32(i * i)
	}
	req := &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2, 16}, Contents: &pb.InferTensorContents{IntContents: a}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{2, 16}, Contents: &pb.InferTensorContents{IntContents: b}},
		},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT1"}},
	}
	resp, err := engInfer(t, e, req)
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUTPUT1" || len(resp.RawOutputContents) != 1 {
		t.Fatalf("outputs = %v, want only OUTPUT1", resp.Outputs)
	}
	if !slices.Equal(resp.Outputs[0].Shape, []int64{2, 16}) {
		t.Errorf("shape = %v, want [2 16]", resp.Outputs[0].Shape)
	}
	diff := triton.Int32s(resp.RawOutputContents[0])
	for i := range a {
		if diff[i] != a[i]-b[i] {
			t.Fatalf("element %d: %d, want %d", i, diff[i], a[i]-b[i])
		}
	}
	s := engStats(t, e, "simple")
	if s.InferenceCount != 2 || s.InferenceStats.Success.Count != 1 {
		t.Errorf("inference_count %d success %d, want 2 and 1", s.InferenceCount, s.InferenceStats.Success.Count)
	}
}

func TestIdentityEchoesInput(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	req := engFP32Request("identity", 3, 5)
	resp, err := engInfer(t, e, req)
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	if !slices.Equal(resp.RawOutputContents[0], req.RawInputContents[0]) {
		t.Errorf("identity output differs from input")
	}
	if o := resp.Outputs[0]; o.Name != "OUTPUT0" || o.Datatype != "FP32" || !slices.Equal(o.Shape, []int64{3, 5}) {
		t.Errorf("output = %s %s %v", o.Name, o.Datatype, o.Shape)
	}
}

func TestDemoModelsAnswer(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	resnet := &pb.ModelInferRequest{
		ModelName:        "resnet50",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "FP32", Shape: []int64{2, 3, 224, 224}}},
		RawInputContents: [][]byte{make([]byte, 2*3*224*224*4)},
	}
	resp, err := engInfer(t, e, resnet)
	if err != nil {
		t.Fatalf("resnet50: %v", err)
	}
	if !slices.Equal(resp.Outputs[0].Shape, []int64{2, 1000}) || len(resp.RawOutputContents[0]) != 2*1000*4 {
		t.Errorf("resnet50 output %v with %d bytes", resp.Outputs[0].Shape, len(resp.RawOutputContents[0]))
	}
	ids := make([]int64, 64)
	bert := &pb.ModelInferRequest{
		ModelName: "bert",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "input_ids", Datatype: "INT64", Shape: []int64{1, 64}},
			{Name: "attention_mask", Datatype: "INT64", Shape: []int64{1, 64}},
		},
		RawInputContents: [][]byte{triton.PutInt64s(ids), triton.PutInt64s(ids)},
	}
	resp, err = engInfer(t, e, bert)
	if err != nil {
		t.Fatalf("bert: %v", err)
	}
	if !slices.Equal(resp.Outputs[0].Shape, []int64{1, 2}) || len(resp.RawOutputContents[0]) != 8 {
		t.Errorf("bert output %v with %d bytes", resp.Outputs[0].Shape, len(resp.RawOutputContents[0]))
	}
	again, err := engInfer(t, e, bert)
	if err != nil {
		t.Fatalf("bert again: %v", err)
	}
	if !slices.Equal(again.RawOutputContents[0], resp.RawOutputContents[0]) {
		t.Errorf("equal inputs gave different logits")
	}
}

func TestStatisticsInvariantsUnderLoad(t *testing.T) {
	repo := Repository{Models: []ModelSpec{
		engTimedModel("batched", 2*time.Millisecond, 8, 2, &DynamicBatchingSpec{PreferredBatchSize: []int{4, 8}, MaxQueueDelayMicroseconds: 500}),
	}}
	e := engNew(t, repo, EngineOptions{MetricsInterval: 50 * time.Millisecond})
	const workers, perWorker = 32, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	var elems int
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range perWorker {
				b := 1 + rng.IntN(3)
				if _, err := engInfer(t, e, engFP32Request("batched", b, 4)); err != nil {
					t.Errorf("Infer: %v", err)
					return
				}
				mu.Lock()
				elems += b
				mu.Unlock()
			}
		})
	}
	// Read statistics while the load runs: the invariants hold at any time
	// a snapshot is taken, not just at rest.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
			s := engStats(t, e, "batched").InferenceStats
			if s.Queue.Count != s.Success.Count || s.ComputeInfer.Count != s.Success.Count {
				t.Errorf("mid-run: queue %d compute %d success %d", s.Queue.Count, s.ComputeInfer.Count, s.Success.Count)
			}
		}
	}
	engCheckInvariants(t, e, "batched")
	s := engStats(t, e, "batched")
	if got := s.InferenceStats.Success.Count; got != workers*perWorker {
		t.Errorf("success.count = %d, want %d", got, workers*perWorker)
	}
	if s.InferenceCount != uint64(elems) {
		t.Errorf("inference_count = %d, want %d", s.InferenceCount, elems)
	}
	if s.ExecutionCount >= s.InferenceStats.Success.Count {
		t.Errorf("execution_count %d not below request count %d: no batching happened", s.ExecutionCount, s.InferenceStats.Success.Count)
	}
	for _, b := range s.BatchStats {
		if b.BatchSize > 8 {
			t.Errorf("batch of %d exceeds max_batch_size 8", b.BatchSize)
		}
	}
	if s.LastInference == 0 || time.Since(time.UnixMilli(int64(s.LastInference))) > time.Minute {
		t.Errorf("last_inference = %d", s.LastInference)
	}
	if m := engMetrics(t, e, "batched"); m.Pending != 0 {
		t.Errorf("pending = %d after the load, want 0", m.Pending)
	}
}

func TestErrorRateCountsFailures(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{Faults: Faults{ErrorRate: 1}})
	_, err := engInfer(t, e, engFP32Request("identity", 1, 4))
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.Internal || te.Message != "simulated failure" {
		t.Fatalf("err = %v, want INTERNAL simulated failure", err)
	}
	e.SetFaults(Faults{ErrorRate: 0.5})
	const n = 200
	failed := 1
	for range n {
		if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
			failed++
		}
	}
	s := engStats(t, e, "identity").InferenceStats
	if s.Fail.Count != uint64(failed) || s.Success.Count != uint64(n+1-failed) {
		t.Errorf("fail %d success %d, want %d and %d", s.Fail.Count, s.Success.Count, failed, n+1-failed)
	}
	if failed < n/4 || failed > 3*n/4 {
		t.Errorf("%d of %d failed at error rate 0.5", failed, n)
	}
	if got := engMetrics(t, e, "identity").FailureByReason["BACKEND"]; got != uint64(failed) {
		t.Errorf("BACKEND failures = %d, want %d", got, failed)
	}
	engCheckInvariants(t, e, "identity")
}

func TestStallDelaysQueue(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{})
	const stall = 200 * time.Millisecond
	e.SetFaults(Faults{StallUntil: time.Now().Add(stall)})
	start := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
				t.Errorf("Infer: %v", err)
			}
		})
	}
	// The requests wait in the queue meanwhile.
	deadline := time.Now().Add(stall / 2)
	for engMetrics(t, e, "identity").Pending < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p := engMetrics(t, e, "identity").Pending; p != 3 && time.Since(start) < stall {
		t.Errorf("pending = %d during the stall, want 3", p)
	}
	wg.Wait()
	if d := time.Since(start); d < stall {
		t.Errorf("requests finished after %v, before the %v stall ended", d, stall)
	}
	s := engStats(t, e, "identity").InferenceStats
	if avg := time.Duration(s.Queue.Ns / s.Queue.Count); avg < stall*3/4 {
		t.Errorf("average queue time %v, want about %v", avg, stall)
	}
	engCheckInvariants(t, e, "identity")
}

func TestSpikesSlowExecutions(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{Faults: Faults{SpikeRate: 1, SpikeDelay: 30 * time.Millisecond}})
	start := time.Now()
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
		t.Fatalf("Infer: %v", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("spiked request took %v, want ≥ 30ms", d)
	}
	s := engStats(t, e, "identity").InferenceStats
	if time.Duration(s.ComputeInfer.Ns) < 30*time.Millisecond {
		t.Errorf("compute_infer = %v, want ≥ 30ms", time.Duration(s.ComputeInfer.Ns))
	}
}

func TestCancelWhileQueued(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{Faults: Faults{StallUntil: time.Now().Add(time.Minute)}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.Infer(ctx, engFP32Request("identity", 1, 4), false)
	if triton.ErrorCode(err) != codes.Canceled {
		t.Fatalf("err = %v, want CANCELLED", err)
	}
	m := engMetrics(t, e, "identity")
	if m.Pending != 0 || m.FailureByReason["CANCELED"] != 1 {
		t.Errorf("pending %d CANCELED %d, want 0 and 1", m.Pending, m.FailureByReason["CANCELED"])
	}
	if s := engStats(t, e, "identity").InferenceStats; s.Fail.Count != 1 || s.Success.Count != 0 {
		t.Errorf("fail %d success %d, want 1 and 0", s.Fail.Count, s.Success.Count)
	}
	// The stall lifts; the cancelled request must not execute.
	e.SetFaults(Faults{})
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
		t.Fatalf("Infer after stall: %v", err)
	}
	if s := engStats(t, e, "identity"); s.InferenceStats.Success.Count != 1 || s.ExecutionCount != 1 {
		t.Errorf("success %d executions %d, want 1 and 1", s.InferenceStats.Success.Count, s.ExecutionCount)
	}
	engCheckInvariants(t, e, "identity")
}

func TestQueueFull(t *testing.T) {
	repo := Repository{Models: []ModelSpec{
		engTimedModel("small", time.Millisecond, 4, 1, &DynamicBatchingSpec{MaxQueueSize: 2}),
	}}
	e := engNew(t, repo, EngineOptions{Faults: Faults{StallUntil: time.Now().Add(time.Minute)}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _, _ = e.Infer(ctx, engFP32Request("small", 1, 4), false) })
	}
	for engMetrics(t, e, "small").Pending < 2 {
		time.Sleep(time.Millisecond)
	}
	_, err := engInfer(t, e, engFP32Request("small", 1, 4))
	// Triton 2.73 (perf_analyzer against a model with max_queue_size 1):
	// "[request id: <id_unknown>] Exceeds maximum queue size", and its
	// fail count and nv_inference_request_failure stay 0.
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.Unavailable || te.Message != "[request id: <id_unknown>] Exceeds maximum queue size" {
		t.Errorf("err = %v, want UNAVAILABLE [request id: <id_unknown>] Exceeds maximum queue size", err)
	}
	if got := engMetrics(t, e, "small").FailureByReason["REJECTED"]; got != 0 {
		t.Errorf("REJECTED = %d, want 0", got)
	}
	if got := engStats(t, e, "small").InferenceStats.Fail.Count; got != 0 {
		t.Errorf("fail = %d, want 0", got)
	}
	cancel()
	wg.Wait()
}

func TestCloseFailsInFlight(t *testing.T) {
	e, err := NewEngine(DemoRepository(), EngineOptions{Faults: Faults{StallUntil: time.Now().Add(time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := engInfer(t, e, engFP32Request("identity", 1, 4))
		errc <- err
	}()
	for engMetrics(t, e, "identity").Pending < 1 {
		time.Sleep(time.Millisecond)
	}
	e.Close()
	err = <-errc
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.Unavailable || te.Message != "Server is stopping" {
		t.Errorf("err = %v, want UNAVAILABLE Server is stopping", err)
	}
	if e.Live() || e.Ready() {
		t.Errorf("live %t ready %t after Close", e.Live(), e.Ready())
	}
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != errStopping {
		t.Errorf("Infer after Close = %v, want %v", err, errStopping)
	}
	e.Close() // idempotent
}

func TestSlowStart(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{Faults: Faults{SlowStart: 150 * time.Millisecond}})
	if !e.Live() || e.Ready() {
		t.Fatalf("live %t ready %t during slow start, want true false", e.Live(), e.Ready())
	}
	for _, mi := range e.RepositoryIndex(false) {
		if mi.State != "LOADING" {
			t.Errorf("%s state %s during slow start, want LOADING", mi.Name, mi.State)
		}
	}
	if ready, err := e.ModelReady("simple", ""); ready || err != nil {
		t.Errorf("ModelReady = %t, %v during slow start", ready, err)
	}
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); triton.ErrorCode(err) == codes.OK {
		t.Errorf("Infer succeeded during slow start")
	}
	time.Sleep(160 * time.Millisecond)
	if !e.Ready() {
		t.Fatalf("not ready after slow start")
	}
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
		t.Errorf("Infer after slow start: %v", err)
	}
	if n, want := len(e.RepositoryIndex(true)), len(DemoRepository().Models); n != want {
		t.Errorf("%d ready models, want %d", n, want)
	}
}

func TestLoadUnload(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
		t.Fatal(err)
	}
	if err := e.UnloadModel("identity"); err != nil {
		t.Fatalf("UnloadModel: %v", err)
	}
	if ready, err := e.ModelReady("identity", ""); ready || errorMessage(err) != "Request for unknown model: 'identity' has no available versions" {
		t.Errorf("ModelReady after unload = %t, %v, want Triton's NOT_FOUND", ready, err)
	}
	_, err := engInfer(t, e, engFP32Request("identity", 1, 4))
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.NotFound || te.Message != "Request for unknown model: 'identity' has no available versions" {
		t.Errorf("Infer after unload: %v", err)
	}
	if _, err := e.ModelStatistics("identity", ""); triton.ErrorCode(err) != codes.InvalidArgument {
		t.Errorf("ModelStatistics after unload: %v", err)
	}
	var state string
	for _, mi := range e.RepositoryIndex(false) {
		if mi.Name == "identity" {
			state = mi.State + "/" + mi.Reason
		}
	}
	if state != "UNAVAILABLE/unloaded" {
		t.Errorf("index state %q, want UNAVAILABLE/unloaded", state)
	}
	for _, mi := range e.RepositoryIndex(true) {
		if mi.Name == "identity" {
			t.Errorf("unloaded model listed as ready")
		}
	}
	if err := e.LoadModel("identity"); err != nil {
		t.Fatalf("LoadModel: %v", err)
	}
	if _, err := engInfer(t, e, engFP32Request("identity", 1, 4)); err != nil {
		t.Fatalf("Infer after load: %v", err)
	}
	if s := engStats(t, e, "identity"); s.InferenceStats.Success.Count != 1 {
		t.Errorf("success.count = %d after reload, want 1 (statistics restart)", s.InferenceStats.Success.Count)
	}
	if err := e.LoadModel("nope"); triton.ErrorCode(err) != codes.Internal || err.(*triton.Error).Message != "failed to load 'nope', failed to poll from model repository" {
		t.Errorf("LoadModel(nope) = %v", err)
	}
	if err := e.UnloadModel("nope"); err != nil {
		t.Errorf("UnloadModel(nope) = %v; Triton does nothing", err)
	}
}

func TestServerMetadata(t *testing.T) {
	e := engNew(t, DemoRepository(), EngineOptions{Version: "2.99.0"})
	md := e.ServerMetadata()
	if md.Name != "triton" || md.Version != "2.99.0" {
		t.Errorf("metadata %q %q", md.Name, md.Version)
	}
	if len(md.Extensions) == 0 || md.Extensions[0] != "classification" || md.Extensions[len(md.Extensions)-1] != SimulatorExtension {
		t.Errorf("extensions %v", md.Extensions)
	}
	// A standard Triton build reports statistics, trace and logging after
	// the fixed list; the simulator serves all three endpoints.
	want := []string{"classification", "sequence", "model_repository", "model_repository(unload_dependents)",
		"schedule_policy", "model_configuration", "system_shared_memory", "cuda_shared_memory",
		"binary_tensor_data", "parameters", "statistics", "trace", "logging", SimulatorExtension}
	if !slices.Equal(md.Extensions, want) {
		t.Errorf("extensions %v, want %v", md.Extensions, want)
	}
}

func TestRequestTimeoutExpiresInQueue(t *testing.T) {
	withTimeout := func(us int64) *pb.ModelInferRequest {
		req := engFP32Request("timed", 1, 4)
		req.Parameters = map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: us}}}
		return req
	}
	// Triton's queue policy: a default timeout, which a request's
	// "timeout" parameter may shorten when overrides are allowed.
	policy := &DynamicBatchingSpec{DefaultTimeoutMicroseconds: 10_000_000, AllowTimeoutOverride: true}
	repo := Repository{Models: []ModelSpec{engTimedModel("timed", time.Millisecond, 4, 1, policy)}}
	e := engNew(t, repo, EngineOptions{Faults: Faults{StallUntil: time.Now().Add(100 * time.Millisecond)}})
	_, err := engInfer(t, e, withTimeout(20000))
	if te, ok := err.(*triton.Error); !ok || te.Code != codes.Unavailable || te.Message != "Request timeout expired" {
		t.Fatalf("err = %v, want UNAVAILABLE Request timeout expired", err)
	}
	m := engMetrics(t, e, "timed")
	if m.FailureByReason["REJECTED"] != 1 || m.Pending != 0 {
		t.Errorf("REJECTED %d pending %d, want 1 and 0", m.FailureByReason["REJECTED"], m.Pending)
	}
	if _, err := engInfer(t, e, withTimeout(50_000_000)); err != nil {
		t.Errorf("request with a timeout longer than the default: %v", err)
	}
	engCheckInvariants(t, e, "timed")
	if qp := engConfig(t, e, "timed").GetDynamicBatching().GetDefaultQueuePolicy(); qp.GetDefaultTimeoutMicroseconds() != 10_000_000 || !qp.GetAllowTimeoutOverride() {
		t.Errorf("config default_queue_policy = %v", qp)
	}

	// Without a queue policy (or without the override) Triton ignores the
	// parameter: the request waits out the stall.
	for _, db := range []*DynamicBatchingSpec{{}, {DefaultTimeoutMicroseconds: 10_000_000}} {
		repo := Repository{Models: []ModelSpec{engTimedModel("timed", time.Millisecond, 4, 1, db)}}
		e := engNew(t, repo, EngineOptions{Faults: Faults{StallUntil: time.Now().Add(50 * time.Millisecond)}})
		if _, err := engInfer(t, e, withTimeout(1000)); err != nil {
			t.Errorf("policy %+v: request with a 1 ms timeout failed: %v", db, err)
		}
	}
}

// engConfig returns a model's configuration.
func engConfig(t testing.TB, e *Engine, model string) *pb.ModelConfig {
	t.Helper()
	c, err := e.ModelConfig(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}
