package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	if !bytes.Contains(body, []byte(`"parameters":{"sequence_id":0,"sequence_start":false,"sequence_end":false}`)) {
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

func TestEnsembleConfigAsTritonReportsIt(t *testing.T) {
	t.Parallel()
	s := startSim(t, ensRepository(0, 0), EngineOptions{})
	cfg, err := s.Engine().ModelConfig("pipeline", "")
	if err != nil {
		t.Fatal(err)
	}
	// Triton: "platform":"ensemble","backend":"", "ensemble_scheduling":
	// {"step":[{"model_name":"preprocess","model_version":-1,"input_map":
	// {"INPUT0":"IN"},"output_map":{"OUTPUT0":"features"},...},...]},
	// "instance_group":[], "model_transaction_policy":{"decoupled":false},
	// no dynamic_batching, no response_cache.
	steps := cfg.GetEnsembleScheduling().GetStep()
	if cfg.Platform != EnsemblePlatform || cfg.Backend != "" || len(steps) != 2 || len(cfg.InstanceGroup) != 0 ||
		cfg.GetDynamicBatching() != nil || cfg.ResponseCache != nil || cfg.GetModelTransactionPolicy().GetDecoupled() {
		t.Fatalf("config %v", cfg)
	}
	if st := steps[1]; st.ModelName != "classifier" || st.ModelVersion != -1 || st.InputMap["INPUT0"] != "features" || st.OutputMap["OUTPUT0"] != "OUT" {
		t.Errorf("step 1 %v", st)
	}
	_, _, body := httpDo(t, "GET", "http://"+s.HTTPAddr()+"/v2/models/pipeline/config", nil, nil)
	for _, want := range []string{`"platform":"ensemble"`, `"instance_group":[]`, `"model_transaction_policy":{"decoupled":false}`,
		`{"input_map":{"INPUT0":"features"},"model_name":"classifier","model_namespace":"","model_version":-1,"output_map":{"OUTPUT0":"OUT"}}`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("HTTP config lacks %s: %s", want, body)
		}
	}
	// Triton: {"name":"pipeline","versions":["1"],"platform":"ensemble",
	// "inputs":[{"name":"IN","datatype":"FP32","shape":[-1,16]}],
	// "outputs":[{"name":"OUT","datatype":"FP32","shape":[-1,16]}]}.
	_, _, body = httpDo(t, "GET", "http://"+s.HTTPAddr()+"/v2/models/pipeline", nil, nil)
	if want := `{"name":"pipeline","versions":["1"],"platform":"ensemble","inputs":[{"name":"IN","datatype":"FP32","shape":[-1,16]}],` +
		`"outputs":[{"name":"OUT","datatype":"FP32","shape":[-1,16]}]}`; string(body) != want {
		t.Errorf("metadata %s\nwant %s", body, want)
	}
}

func TestEnsembleLoadsAndUnloadsWithItsSteps(t *testing.T) {
	t.Parallel()
	s := startSim(t, ensRepository(0, 0), EngineOptions{ModelControl: ModelControlExplicit})
	e := s.Engine()
	ready := func() string {
		var names []string
		for _, m := range e.RepositoryIndex(true) {
			names = append(names, m.Name)
		}
		return strings.Join(names, " ")
	}
	load := "http://" + s.HTTPAddr() + "/v2/repository/models/pipeline/load"
	// Triton: loading pipeline loads preprocess and classifier.
	if code, _, body := httpDo(t, "POST", load, nil, nil); code != 200 || ready() != "classifier pipeline preprocess" {
		t.Fatalf("load = %d %s; ready: %s", code, body, ready())
	}
	// Triton: unloading preprocess unloads pipeline ("ensemble pipeline
	// contains models that are not available or ambiguous: preprocess"
	// in its log).
	if err := e.UnloadModel("preprocess"); err != nil || ready() != "classifier" {
		t.Fatalf("unload preprocess: %v; ready: %s", err, ready())
	}
	if _, err := engInfer(t, e, ensRequest(1)); errorMessage(err) != "Request for unknown model: 'pipeline' has no available versions" {
		t.Errorf("infer after unload: %v", err)
	}
	// Triton: unload_dependents unloads the composing models too.
	if code, _, _ := httpDo(t, "POST", load, nil, nil); code != 200 || ready() != "classifier pipeline preprocess" {
		t.Fatalf("reload: %d; ready: %s", code, ready())
	}
	unload := "http://" + s.HTTPAddr() + "/v2/repository/models/pipeline/unload"
	if code, _, body := httpDo(t, "POST", unload, []byte(`{"parameters":{"unload_dependents":true}}`), nil); code != 200 || ready() != "" {
		t.Fatalf("unload_dependents = %d %s; ready: %s", code, body, ready())
	}
	// Triton answers a dependency error 400, a config error 500.
	bad := Repository{Models: []ModelSpec{ensIdentity("preprocess", 0), ensIdentity("classifier", 0),
		ensBad("e_dtype", func(m *ModelSpec) { m.Inputs[0].DataType = "TYPE_FP16" }),
		ensBad("e_nosteps", func(m *ModelSpec) { m.EnsembleScheduling.Steps = nil })}}
	s2 := startSim(t, bad, EngineOptions{ModelControl: ModelControlExplicit})
	for model, want := range map[string]string{
		"e_dtype":   `{"error":"load failed for model 'e_dtype': in ensemble e_dtype, ensemble tensor IN: inconsistent data type: TYPE_FP16 is inferred from model e_dtype while TYPE_FP32 is inferred from model preprocess\n"} 400`,
		"e_nosteps": `{"error":"failed to load 'e_nosteps', failed to poll from model repository"} 500`,
	} {
		code, _, body := httpDo(t, "POST", "http://"+s2.HTTPAddr()+"/v2/repository/models/"+model+"/load", nil, nil)
		if got := string(body) + " " + strconv.Itoa(code); got != want {
			t.Errorf("load %s = %s\nwant %s", model, got, want)
		}
	}
}

func TestEnsembleSlowStepTakesTheQueueTime(t *testing.T) {
	t.Parallel()
	// Triton 2.73's pipeline with classifier slowed (identity's
	// execute_delay_ms 2; perf_analyzer -m pipeline --shape IN:16
	// --concurrency-range 8): of the pipeline's 50.4 s over 10072
	// requests, 18.4 s in classifier's queue, 1.7 s in preprocess's
	// (perf_analyzer: queue 1668 µs and 132 µs per request).
	slow := LatencySpec{FixedUS: 3000, PerItemUS: 1000}
	fast := LatencySpec{FixedUS: 50}
	for _, slowStep := range []string{"preprocess", "classifier"} {
		t.Run(slowStep, func(t *testing.T) {
			t.Parallel()
			repo := ensRepository(0, 0)
			for i := range repo.Models[:2] {
				repo.Models[i].Latency = fast
				if repo.Models[i].Name == slowStep {
					repo.Models[i].Latency = slow
				}
			}
			e := engNew(t, repo, EngineOptions{})
			ensLoad(t, e, 16, 96, 1)
			fastStep := map[string]string{"preprocess": "classifier", "classifier": "preprocess"}[slowStep]
			sq := engStats(t, e, slowStep).InferenceStats.Queue.Ns
			fq := engStats(t, e, fastStep).InferenceStats.Queue.Ns
			p := engStats(t, e, "pipeline").InferenceStats
			t.Logf("pipeline %d ns: %s queue %d ns, %s queue %d ns", p.Success.Ns, slowStep, sq, fastStep, fq)
			if sq < 3*fq || float64(sq) < 0.25*float64(p.Success.Ns) {
				t.Errorf("slow %s's queue %d ns, fast %s's %d ns, of the pipeline's %d ns: want the slow step's queue to hold the time",
					slowStep, sq, fastStep, fq, p.Success.Ns)
			}
		})
	}
}

// ensFork is an ensemble of two steps that read only its input: a → OA,
// b → OB.
func ensFork(stepUS float64) Repository {
	fork := ModelSpec{
		Name: "fork", Platform: EnsemblePlatform, MaxBatchSize: 8,
		Inputs: []TensorSpec{{Name: "IN", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs: []TensorSpec{{Name: "OA", DataType: "TYPE_FP32", Dims: []int64{16}},
			{Name: "OB", DataType: "TYPE_FP32", Dims: []int64{16}}},
		EnsembleScheduling: &EnsembleSpec{Steps: []EnsembleStepSpec{
			ensStep("a", "INPUT0", "IN", "OUTPUT0", "OA"),
			ensStep("b", "INPUT0", "IN", "OUTPUT0", "OB"),
		}},
	}
	return Repository{Models: []ModelSpec{ensIdentity("a", stepUS), ensIdentity("b", stepUS), fork}}
}

// ensHeld is how many requests model's latest version holds.
func ensHeld(e *Engine, model string) int64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	vs := e.models[model].versions
	return vs[len(vs)-1].held.Load()
}

func TestEnsembleStepsRunWhenTheirInputsExist(t *testing.T) {
	t.Parallel()
	e := engNew(t, ensFork(300_000), EngineOptions{})
	req := engFP32Request("fork", 1, 16)
	req.Inputs[0].Name = "IN"
	done := make(chan error, 1)
	go func() {
		resp, err := engInfer(t, e, req)
		if err == nil && len(resp.Outputs) != 2 {
			err = fmt.Errorf("outputs %v, want OA and OB", resp.Outputs)
		}
		done <- err
	}()
	// Both steps read only the ensemble's input: both run at once.
	deadline := time.Now().Add(10 * time.Second)
	for ensHeld(e, "a") != 1 || ensHeld(e, "b") != 1 {
		select {
		case err := <-done:
			t.Fatalf("the request ended (%v) before a and b ran together", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("a and b never ran at the same time")
		}
		time.Sleep(time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestEnsembleRunsOnlyTheStepsOfTheOutputsAskedFor(t *testing.T) {
	t.Parallel()
	e := engNew(t, ensFork(0), EngineOptions{})
	req := engFP32Request("fork", 2, 16)
	req.Inputs[0].Name = "IN"
	req.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OB"}}
	resp, err := engInfer(t, e, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OB" || !bytes.Equal(resp.RawOutputContents[0], req.RawInputContents[0]) {
		t.Fatalf("outputs %v, want OB = IN", resp.Outputs)
	}
	// Triton prunes the steps no requested output depends on.
	if a, b := engStats(t, e, "a").InferenceStats.Success.Count, engStats(t, e, "b").InferenceStats.Success.Count; a != 0 || b != 1 {
		t.Errorf("a ran %d times, b %d, want 0 and 1", a, b)
	}
}

func TestEnsembleCancelledStartsNoFurtherStep(t *testing.T) {
	t.Parallel()
	e := engNew(t, ensRepository(0, 0), EngineOptions{Faults: Faults{StallUntil: time.Now().Add(time.Minute)}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := e.Infer(ctx, ensRequest(1), false)
		errc <- err
	}()
	for engMetrics(t, e, "preprocess").Pending < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; kserve.ErrorCode(err) != codes.Canceled {
		t.Fatalf("err = %v, want CANCELLED", err)
	}
	// The step under way finishes; the next never starts, and the
	// ensemble counts the request failed, as it counts any failure.
	e.SetFaults(Faults{})
	deadline := time.Now().Add(10 * time.Second)
	for engStats(t, e, "pipeline").InferenceStats.Fail.Count < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled request never ended")
		}
		time.Sleep(time.Millisecond)
	}
	if pre, cls := engStats(t, e, "preprocess").InferenceStats.Success.Count, engStats(t, e, "classifier").InferenceStats; pre != 1 || cls.Success.Count+cls.Fail.Count != 0 {
		t.Errorf("preprocess ran %d, classifier %d requests, want 1 and 0", pre, cls.Success.Count+cls.Fail.Count)
	}
	if held := ensHeld(e, "pipeline"); held != 0 {
		t.Errorf("pipeline still holds %d requests", held)
	}
}

// demoPipelineRequest is a request of one image to the demo pipeline.
func demoPipelineRequest() *pb.ModelInferRequest {
	return &pb.ModelInferRequest{ModelName: "resnet50_pipeline",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "image", Datatype: "UINT8", Shape: []int64{1, 224, 224, 3}}},
		RawInputContents: [][]byte{make([]byte, 224*224*3)}}
}

func TestDemoPipelineServesImages(t *testing.T) {
	t.Parallel()
	e := engNew(t, DemoRepository(), EngineOptions{})
	const conc, n = 8, 32
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for c := range conc {
		wg.Go(func() {
			for i := c; i < n; i += conc {
				resp, err := engInfer(t, e, demoPipelineRequest())
				if err == nil && (len(resp.Outputs) != 1 || !slicesEqual(resp.Outputs[0].Shape, []int64{1, 1000}) || len(resp.RawOutputContents[0]) != 4000) {
					err = fmt.Errorf("outputs %v, want output FP32 [1,1000]", resp.Outputs)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, m := range []string{"resnet50_pipeline", "preprocess", "resnet50"} {
		if got := engStats(t, e, m).InferenceStats.Success.Count; got != n {
			t.Errorf("%s success %d, want %d", m, got, n)
		}
		engCheckInvariants(t, e, m)
	}
}

func TestDemoPipelineTimeGoesToPreprocessFirst(t *testing.T) {
	t.Parallel()
	specs := map[string]ModelSpec{}
	for _, m := range DemoRepository().Models {
		m.Latency.Jitter = 0
		specs[m.Name] = m
	}
	// The demo's cost model, not a timing (a busy host stretches every
	// simulated sleep): an execution of b images on one instance.
	cost := func(model string, b int) time.Duration {
		in, infer, out := specs[model].Latency.durations(b, 0, nil)
		return in + infer + out
	}
	// One image: longer in preprocess than on the GPU.
	if pre, gpu := cost("preprocess", 1), cost("resnet50", 1); pre < 3*gpu/2 {
		t.Errorf("an image takes %v in preprocess, %v on the GPU: want the time in preprocess", pre, gpu)
	}
	// Full batches: preprocess's two CPU instances serve far fewer images
	// than resnet50's two GPU instances, which it leaves mostly idle.
	preRate := 2 * 32 / cost("preprocess", 32).Seconds()
	if gpuRate := FullBatchRate(specs["resnet50"]); preRate*3 > gpuRate {
		t.Errorf("preprocess serves %.0f images/s at full batches, resnet50 %.0f: preprocess should limit the pipeline", preRate, gpuRate)
	}
}

func TestEnsembleFromJSONDescription(t *testing.T) {
	t.Parallel()
	identity := func(name string) string {
		return `{"name": "` + name + `", "backend": "identity", "max_batch_size": 8,
		 "inputs": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [16]}],
		 "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [16]}],
		 "dynamic_batching": {}, "instance_group": [{"count": 1, "kind": "KIND_CPU"}], "behaviour": "identity"}`
	}
	// The ensemble as the Repository doc comment describes it.
	doc := `{"models": [` + identity("preprocess") + `,` + identity("classifier") + `,
	    {"name": "pipeline", "platform": "ensemble", "max_batch_size": 8,
	     "inputs":  [{"name": "IN", "data_type": "TYPE_FP32", "dims": [16]}],
	     "outputs": [{"name": "OUT", "data_type": "TYPE_FP32", "dims": [16]}],
	     "ensemble_scheduling": {"step": [
	       {"model_name": "preprocess", "model_version": -1,
	        "input_map": {"INPUT0": "IN"}, "output_map": {"OUTPUT0": "features"}},
	       {"model_name": "classifier", "model_version": -1,
	        "input_map": {"INPUT0": "features"}, "output_map": {"OUTPUT0": "OUT"}}]}}]}`
	path := filepath.Join(t.TempDir(), "repo.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	repo, err := LoadRepository(path)
	if err != nil {
		t.Fatal(err)
	}
	e := engNew(t, repo, EngineOptions{})
	if _, err := engInfer(t, e, ensRequest(1)); err != nil {
		t.Fatal(err)
	}
	if got := engStats(t, e, "classifier").InferenceStats.Success.Count; got != 1 {
		t.Errorf("classifier ran %d requests, want 1", got)
	}
}

func TestEnsembleStepRefusedByAFullQueue(t *testing.T) {
	t.Parallel()
	repo := ensRepository(0, 2000)
	repo.Models[1].DynamicBatching = &DynamicBatchingSpec{MaxQueueSize: 1}
	e := engNew(t, repo, EngineOptions{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range 8 {
		wg.Go(func() {
			for range 6 {
				_, err := engInfer(t, e, ensRequest(1))
				if err == nil {
					continue
				}
				// Triton: "in ensemble 'pipeline', [request id:
				// <id_unknown>] Exceeds maximum queue size".
				if kserve.ErrorCode(err) != codes.Unavailable ||
					errorMessage(err) != "in ensemble 'pipeline', [request id: <id_unknown>] Exceeds maximum queue size" {
					t.Errorf("err = %v", err)
				}
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed == 0 {
		t.Fatal("no step found classifier's queue full")
	}
	// Triton (classifier max_queue_size 1, concurrency 8): pipeline success
	// 248 and fail 14 for 7 refused steps, preprocess success 255,
	// classifier fail 0.
	p, pre, cls := engStats(t, e, "pipeline").InferenceStats, engStats(t, e, "preprocess").InferenceStats, engStats(t, e, "classifier").InferenceStats
	if p.Fail.Count != uint64(2*failed) || pre.Success.Count != p.Success.Count+uint64(failed) || cls.Fail.Count != 0 || cls.Success.Count != p.Success.Count {
		t.Errorf("%d refused: pipeline success %d fail %d, preprocess success %d, classifier success %d fail %d",
			failed, p.Success.Count, p.Fail.Count, pre.Success.Count, cls.Success.Count, cls.Fail.Count)
	}
}

func TestEnsembleVersionsShareTheMetricsOfVersion1(t *testing.T) {
	t.Parallel()
	repo := ensRepository(0, 0)
	repo.Models[2].Versions = []int64{1, 2}
	e := engNew(t, repo, EngineOptions{})
	for _, v := range []string{"1", "2", "2"} {
		req := ensRequest(1)
		req.ModelVersion = v
		if resp, err := engInfer(t, e, req); err != nil || resp.ModelVersion != v {
			t.Fatalf("version %s: %v, %v", v, resp, err)
		}
	}
	st, err := e.ModelStatistics("pipeline", "")
	if err != nil || len(st.ModelStats) != 2 || st.ModelStats[0].InferenceStats.Success.Count != 1 || st.ModelStats[1].InferenceStats.Success.Count != 2 {
		t.Fatalf("statistics %v, %v: want version 1 with 1 request, 2 with 2", st, err)
	}
	// Triton's ensemble scheduler makes its metric reporter for version 1
	// (ensemble_scheduler.cc): every version's requests count there.
	var series []ModelMetricsState
	for _, m := range e.Metrics().Models {
		if m.Model == "pipeline" {
			series = append(series, m)
		}
	}
	if len(series) != 1 || series[0].Version != "1" || series[0].Success != 3 || series[0].Series[0].Success != 3 {
		t.Errorf("pipeline metrics %+v, want one version-1 set counting 3 requests", series)
	}
}

func TestEnsembleOfAnEnsemble(t *testing.T) {
	t.Parallel()
	repo := ensRepository(0, 0)
	outer := ensPipeline()
	outer.Name = "outer"
	outer.EnsembleScheduling = &EnsembleSpec{Steps: []EnsembleStepSpec{ensStep("pipeline", "IN", "IN", "OUT", "OUT")}}
	repo.Models = append(repo.Models, outer)
	e := engNew(t, repo, EngineOptions{})
	req := ensRequest(2)
	req.ModelName = "outer"
	resp, err := engInfer(t, e, req)
	if err != nil || resp.ModelName != "outer" || !bytes.Equal(resp.RawOutputContents[0], req.RawInputContents[0]) {
		t.Fatalf("outer = %v, %v; want OUT = IN", resp, err)
	}
	// Each ensemble counts the request once; the inner one's compute is
	// its steps', and the outer's its inner's.
	o, p := engStats(t, e, "outer"), engStats(t, e, "pipeline")
	if o.InferenceCount != 2 || p.InferenceCount != 2 || p.InferenceStats.ComputeInfer.Ns == 0 || o.InferenceStats.ComputeInfer.Ns != p.InferenceStats.ComputeInfer.Ns ||
		engStats(t, e, "classifier").InferenceStats.Success.Count != 1 {
		t.Errorf("outer %v\npipeline %v", o, p)
	}
}
