package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// The expected statistics in these tests are those of the real Triton
// 2.73 (2.73.0dev, core 73aad7c) serving its `pipeline` (platform
// "ensemble": preprocess → classifier, identity backends, FP32 [16], max
// batch 8, dynamic batching), read from v2/models/*/stats and /metrics
// after perf_analyzer -m pipeline --shape IN:16 (-i grpc, concurrency 4;
// -i http -b 2, concurrency 2). See ensemble_stats.go.

// ensStep is a pipeline step of one input and one output.
func ensStep(model, in, inTensor, out, outTensor string) EnsembleStepSpec {
	return EnsembleStepSpec{ModelName: model, ModelVersion: -1,
		InputMap: map[string]string{in: inTensor}, OutputMap: map[string]string{out: outTensor}}
}

// ensIdentity is an identity model like the real server's preprocess and
// classifier: FP32 [16], max batch 8, dynamic batching, one CPU instance,
// fixed µs per execution.
func ensIdentity(name string, fixedUS float64) ModelSpec {
	return ModelSpec{
		Name: name, Backend: "identity", MaxBatchSize: 8,
		Inputs:          []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs:         []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{16}}},
		DynamicBatching: &DynamicBatchingSpec{},
		InstanceGroups:  []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
		Latency:         LatencySpec{FixedUS: fixedUS},
		Behaviour:       BehaviourIdentity,
	}
}

// ensPipeline is the real server's pipeline ensemble.
func ensPipeline() ModelSpec {
	return ModelSpec{
		Name: "pipeline", Platform: EnsemblePlatform, MaxBatchSize: 8,
		Inputs:  []TensorSpec{{Name: "IN", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs: []TensorSpec{{Name: "OUT", DataType: "TYPE_FP32", Dims: []int64{16}}},
		EnsembleScheduling: &EnsembleSpec{Steps: []EnsembleStepSpec{
			ensStep("preprocess", "INPUT0", "IN", "OUTPUT0", "features"),
			ensStep("classifier", "INPUT0", "features", "OUTPUT0", "OUT"),
		}},
	}
}

// ensRepository is the real server's three models, with the composing
// models' execution times.
func ensRepository(preprocessUS, classifierUS float64) Repository {
	return Repository{Models: []ModelSpec{ensIdentity("preprocess", preprocessUS), ensIdentity("classifier", classifierUS), ensPipeline()}}
}

// ensRequest is a request to the pipeline of the given batch size.
func ensRequest(batch int) *pb.ModelInferRequest {
	req := engFP32Request("pipeline", batch, 16)
	req.Inputs[0].Name = "IN"
	return req
}

// ensLoad sends n requests from conc clients, each of the given batch size,
// and fails the test on any error.
func ensLoad(t *testing.T, e *Engine, conc, n, batch int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for c := range conc {
		wg.Go(func() {
			for i := c; i < n; i += conc {
				if _, err := engInfer(t, e, ensRequest(batch)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("infer: %v", err)
	}
}

func TestEnsembleStatisticsAsTritonCountsThem(t *testing.T) {
	t.Parallel()
	e := engNew(t, ensRepository(50, 50), EngineOptions{})
	ensLoad(t, e, 4, 120, 1)
	ensLoad(t, e, 2, 40, 2)
	p, pre, cls := engStats(t, e, "pipeline"), engStats(t, e, "preprocess"), engStats(t, e, "classifier")
	const requests, inferences = 160, 200
	// Triton: pipeline success = execution_count = 21729 requests; its
	// inference_count 30872 for 15436 requests of batch 2.
	if got := p.InferenceStats.Success.Count; got != requests {
		t.Fatalf("pipeline success %d, want %d", got, requests)
	}
	if p.ExecutionCount != requests || p.InferenceCount != inferences {
		t.Errorf("pipeline execution_count %d inference_count %d, want %d and %d", p.ExecutionCount, p.InferenceCount, requests, inferences)
	}
	// Triton: batch_stats has one entry per request batch size, counting
	// the requests of that size.
	if len(p.BatchStats) != 2 || p.BatchStats[0].BatchSize != 1 || p.BatchStats[0].ComputeInfer.Count != 120 ||
		p.BatchStats[1].BatchSize != 2 || p.BatchStats[1].ComputeInfer.Count != 40 {
		t.Errorf("pipeline batch_stats %v, want 120 of size 1 and 40 of size 2", p.BatchStats)
	}
	// Triton: each composing model counts the ensemble's requests as its
	// own (success 21729, inference_count 21729 in both) and batches them
	// (execution_count 14104 and 14264 < 21729).
	for _, c := range []*pb.ModelStatistics{pre, cls} {
		if c.InferenceStats.Success.Count != requests || c.InferenceCount != inferences || c.ExecutionCount > requests {
			t.Errorf("%s success %d inference_count %d execution_count %d, want %d, %d and at most %d",
				c.Name, c.InferenceStats.Success.Count, c.InferenceCount, c.ExecutionCount, requests, inferences, requests)
		}
	}
	// Triton: the ensemble's compute ns are its composing models' added
	// (46349625 = 27209549 + 19140076, 324884646 = 186471007 +
	// 138413639, 1170712 = 553203 + 617509).
	for _, f := range []struct {
		name    string
		get     func(*pb.ModelStatistics) *pb.StatisticDuration
		nonzero bool
	}{
		{"compute_input", func(s *pb.ModelStatistics) *pb.StatisticDuration { return s.InferenceStats.ComputeInput }, false},
		{"compute_infer", func(s *pb.ModelStatistics) *pb.StatisticDuration { return s.InferenceStats.ComputeInfer }, true},
		{"compute_output", func(s *pb.ModelStatistics) *pb.StatisticDuration { return s.InferenceStats.ComputeOutput }, false},
	} {
		if got, want := f.get(p).Ns, f.get(pre).Ns+f.get(cls).Ns; got != want || (f.nonzero && got == 0) {
			t.Errorf("pipeline %s ns %d, want preprocess's + classifier's = %d", f.name, got, want)
		}
		if f.get(p).Count != requests {
			t.Errorf("pipeline %s count %d, want %d", f.name, f.get(p).Count, requests)
		}
	}
	// Triton: the ensemble's queue is its own, from its enqueue to its
	// steps' start (26 ms over 21729 requests, against 2.8 s and 2.5 s in
	// its composing models' queues); its request time holds its steps'.
	if q := p.InferenceStats.Queue; q.Count != requests || q.Ns > pre.InferenceStats.Queue.Ns+cls.InferenceStats.Queue.Ns {
		t.Errorf("pipeline queue %v, want %d requests and no more than its steps' queues (%d + %d ns)",
			q, requests, pre.InferenceStats.Queue.Ns, cls.InferenceStats.Queue.Ns)
	}
	if got, steps := p.InferenceStats.Success.Ns, pre.InferenceStats.Success.Ns+cls.InferenceStats.Success.Ns; got < steps {
		t.Errorf("pipeline success ns %d < its steps' %d", got, steps)
	}
	for _, m := range []string{"pipeline", "preprocess", "classifier"} {
		engCheckInvariants(t, e, m)
	}
	// Triton: the ensemble's metrics count its requests once; its pending
	// count and load duration stay 0.
	pm := engMetrics(t, e, "pipeline")
	if pm.Version != "1" || pm.Pending != 0 || pm.LoadSeconds != 0 || pm.Success != requests || pm.ExecutionCount != requests {
		t.Errorf("pipeline metrics version %q pending %d load %g success %d exec %d, want 1, 0, 0, %d, %d",
			pm.Version, pm.Pending, pm.LoadSeconds, pm.Success, pm.ExecutionCount, requests, requests)
	}
}

func TestEnsembleAnswersWhatItsStepsCompute(t *testing.T) {
	t.Parallel()
	e := engNew(t, ensRepository(0, 0), EngineOptions{})
	req := ensRequest(3)
	req.Id = "ens-7"
	resp, err := engInfer(t, e, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ModelName != "pipeline" || resp.ModelVersion != "1" || resp.Id != "ens-7" {
		t.Errorf("response for %s version %s id %s, want pipeline 1 ens-7", resp.ModelName, resp.ModelVersion, resp.Id)
	}
	if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUT" || resp.Outputs[0].Datatype != "FP32" ||
		!slicesEqual(resp.Outputs[0].Shape, []int64{3, 16}) {
		t.Fatalf("outputs %v, want OUT FP32 [3,16]", resp.Outputs)
	}
	if !bytes.Equal(resp.RawOutputContents[0], req.RawInputContents[0]) {
		t.Error("OUT is not IN, which two identity steps pass through")
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEnsembleStepFailureCountsAsTritonDoes(t *testing.T) {
	t.Parallel()
	e := engNew(t, ensRepository(0, 0), EngineOptions{Faults: Faults{ErrorRate: 1}})
	const n = 5
	for range n {
		_, err := engInfer(t, e, ensRequest(1))
		// Triton: "in ensemble 'pipeline', " before the step's error
		// (perf_analyzer printed "in ensemble 'pipeline', Request
		// timeout expired" for a step whose queue timed out).
		if kserve.ErrorCode(err) != codes.Internal || errorMessage(err) != "in ensemble 'pipeline', "+simulatedFailure {
			t.Fatalf("err = %v, want INTERNAL in ensemble 'pipeline', %s", err, simulatedFailure)
		}
	}
	// Triton: 7 requests failed in classifier's queue (its fail 7, REJECTED
	// 7) and the pipeline counted fail 14, OTHER 14, success 540 = 547 of
	// preprocess less the 7.
	p, pre, cls := engStats(t, e, "pipeline"), engStats(t, e, "preprocess"), engStats(t, e, "classifier")
	if p.InferenceStats.Fail.Count != 2*n || p.InferenceStats.Success.Count != 0 || p.ExecutionCount != 0 {
		t.Errorf("pipeline fail %d success %d executions %d, want %d, 0, 0", p.InferenceStats.Fail.Count,
			p.InferenceStats.Success.Count, p.ExecutionCount, 2*n)
	}
	if pre.InferenceStats.Fail.Count != n || cls.InferenceStats.Fail.Count+cls.InferenceStats.Success.Count != 0 {
		t.Errorf("preprocess fail %d, classifier requests %d, want %d and 0", pre.InferenceStats.Fail.Count,
			cls.InferenceStats.Fail.Count+cls.InferenceStats.Success.Count, n)
	}
	if got := engMetrics(t, e, "pipeline").FailureByReason["OTHER"]; got != 2*n {
		t.Errorf("pipeline OTHER failures %d, want %d", got, 2*n)
	}
	if got := engMetrics(t, e, "preprocess").FailureByReason["BACKEND"]; got != n {
		t.Errorf("preprocess BACKEND failures %d, want %d", got, n)
	}
	for _, m := range []string{"pipeline", "preprocess", "classifier"} {
		engCheckInvariants(t, e, m)
	}
}

func TestEnsembleOverGRPCAndHTTP(t *testing.T) {
	t.Parallel()
	s := startSim(t, ensRepository(20, 20), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	in := triton.PutFloat32s([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	req := &pb.ModelInferRequest{ModelName: "pipeline", Id: "g",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "FP32", Shape: []int64{1, 16}}},
		RawInputContents: [][]byte{in}}

	resp, err := raw.ModelInfer(ctx, req)
	if err != nil || len(resp.RawOutputContents) != 1 || !bytes.Equal(resp.RawOutputContents[0], in) {
		t.Fatalf("gRPC ModelInfer = %v, %v; want OUT = IN", resp, err)
	}

	stream, err := raw.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s2"} {
		req.Id = id
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		r, err := stream.Recv()
		if err != nil || r.GetErrorMessage() != "" || !bytes.Equal(r.GetInferResponse().GetRawOutputContents()[0], in) {
			t.Fatalf("stream response %v, %v; want OUT = IN", r, err)
		}
	}
	_ = stream.CloseSend()

	url := "http://" + s.HTTPAddr() + "/v2/models/pipeline/infer"
	code, hdr, body := httpDo(t, "POST", url, []byte(`{"id":"h","inputs":[{"name":"IN","datatype":"FP32","shape":[1,16],`+
		`"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`), nil)
	var got kserve.InferResponse
	if err := json.Unmarshal(body, &got); code != 200 || err != nil {
		t.Fatalf("HTTP JSON infer = %d %s (%v)", code, body, err)
	}
	// Triton answered {"id":"h","model_name":"pipeline","model_version":"1",
	// "parameters":{"sequence_id":0,"sequence_start":false,"sequence_end":false},
	// "outputs":[{"name":"OUT","datatype":"FP32","shape":[1,16],"data":[1.0,...,16.0]}]}.
	if got.ID != "h" || got.ModelName != "pipeline" || got.ModelVersion != "1" || len(got.Outputs) != 1 ||
		got.Outputs[0].Name != "OUT" || !slicesEqual(got.Outputs[0].Shape, []int64{1, 16}) ||
		!ensSameNumbers(got.Outputs[0].Data, 16) {
		t.Errorf("HTTP JSON infer = %s", body)
	}
	if !bytes.Contains(body, []byte(`"parameters":{"sequence_end":false,"sequence_id":0,"sequence_start":false}`)) {
		t.Errorf("HTTP JSON infer = %s, want the sequence parameters Triton's ensembles answer", body)
	}

	header := `{"inputs":[{"name":"IN","datatype":"FP32","shape":[1,16],"parameters":{"binary_data_size":64}}],` +
		`"outputs":[{"name":"OUT","parameters":{"binary_data":true}}]}`
	code, hdr, body = httpDo(t, "POST", url, append([]byte(header), in...),
		map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(header))})
	n, _ := strconv.Atoi(hdr.Get("Inference-Header-Content-Length"))
	if code != 200 || n == 0 || n > len(body) || !bytes.Equal(body[n:], in) {
		t.Errorf("HTTP binary infer = %d %q, want OUT's 64 bytes after the JSON header", code, body)
	}

	if got := engStats(t, s.Engine(), "pipeline").InferenceStats.Success.Count; got != 5 {
		t.Errorf("pipeline success %d, want the 5 requests sent", got)
	}
	for _, m := range []string{"preprocess", "classifier"} {
		if got := engStats(t, s.Engine(), m).InferenceStats.Success.Count; got != 5 {
			t.Errorf("%s success %d, want the pipeline's 5", m, got)
		}
	}
}

// ensSameNumbers tells a JSON array holding 1, 2, ... n, however the
// numbers are written (Triton writes 1.0, the simulator 1).
func ensSameNumbers(data json.RawMessage, n int) bool {
	var v []float64
	if json.Unmarshal(data, &v) != nil || len(v) != n {
		return false
	}
	for i, x := range v {
		if x != float64(i+1) {
			return false
		}
	}
	return true
}
