package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// Ensembles read from a Triton model repository directory, run by the
// ensemble scheduler, and configuration overrides of ensembles and of their
// composing models. The expected answers are the real server's (Triton
// 2.73.0dev, CPU build, serving copies of ../shared/triton/models with
// --model-control-mode=explicit), written down.

// pipelineConfig is the real repository's pipeline as a configuration
// override, changed by mod.
func pipelineConfig(mod func(map[string]any)) string {
	step := func(model, in, inTensor, out, outTensor string) map[string]any {
		return map[string]any{"model_name": model, "model_version": -1,
			"input_map": map[string]any{in: inTensor}, "output_map": map[string]any{out: outTensor}}
	}
	c := map[string]any{"name": "pipeline", "platform": "ensemble", "max_batch_size": 8,
		"input":  []any{map[string]any{"name": "IN", "data_type": "TYPE_FP32", "dims": []int{16}}},
		"output": []any{map[string]any{"name": "OUT", "data_type": "TYPE_FP32", "dims": []int{16}}},
		"ensemble_scheduling": map[string]any{"step": []any{
			step("preprocess", "INPUT0", "IN", "OUTPUT0", "features"),
			step("classifier", "INPUT0", "features", "OUTPUT0", "OUT")}}}
	if mod != nil {
		mod(c)
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// pipelineStep changes step i of a pipelineConfig.
func pipelineStep(i int, mod func(map[string]any)) func(map[string]any) {
	return func(c map[string]any) {
		mod(c["ensemble_scheduling"].(map[string]any)["step"].([]any)[i].(map[string]any))
	}
}

// preprocessConfig is the real repository's preprocess as a configuration
// override: dims [n], count CPU instances.
func preprocessConfig(n, count int) string {
	return `{"name":"preprocess","backend":"identity","max_batch_size":8,"dynamic_batching":{},
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[` + itoa(n) + `]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[` + itoa(n) + `]}],
		"instance_group":[{"kind":"KIND_CPU","count":` + itoa(count) + `}]}`
}

// httpLoad loads a model over HTTP, with a configuration override unless
// config is "", and returns the answer as "STATUS BODY".
func httpLoad(t *testing.T, s *Server, model, config string) string {
	t.Helper()
	var body []byte
	if config != "" {
		body, _ = json.Marshal(map[string]any{"parameters": map[string]any{"config": config}})
	}
	code, _, got := httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/repository/models/"+model+"/load", body, nil)
	return strconv.Itoa(code) + " " + string(got)
}

// loadAnswer is the real server's HTTP answer to a load that failed with
// msg (400), or "200 " for "".
func loadAnswer(msg string) string {
	if msg == "" {
		return "200 "
	}
	return "400 " + errorBody(msg)
}

// dirRepository copies the real server's repository into a new directory
// and adds the models given (name: config.pbtxt), each with version 1.
func dirRepository(t *testing.T, models map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(tritonModels)); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range models {
		writeModel(t, dir, name, cfg, "1")
	}
	return dir
}

// startDir serves a repository directory.
func startDir(t *testing.T, dir string, opts EngineOptions) *Server {
	t.Helper()
	repo, err := LoadRepositoryDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return startSim(t, repo, opts)
}

// successes is a model's success count.
func successes(t *testing.T, e *Engine, model string) uint64 {
	t.Helper()
	return engStats(t, e, model).InferenceStats.Success.Count
}

// TestDirPipelineRunsThroughTheEnsemble: the real repository's pipeline,
// read from its config.pbtxt, answers as the real server does and runs its
// steps on preprocess and classifier, which count its requests as their
// own; its statistics are Triton's for an ensemble.
func TestDirPipelineRunsThroughTheEnsemble(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{})
	e := s.Engine()
	code, _, body := httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/models/pipeline/infer",
		[]byte(`{"inputs":[{"name":"IN","datatype":"FP32","shape":[1,16],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`), nil)
	want := `{"model_name":"pipeline","model_version":"1","parameters":{"sequence_id":0,"sequence_start":false,"sequence_end":false},` +
		`"outputs":[{"name":"OUT","datatype":"FP32","shape":[1,16],"data":[1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0,9.0,10.0,11.0,12.0,13.0,14.0,15.0,16.0]}]}`
	if code != 200 || string(body) != want {
		t.Errorf("HTTP infer = %d %s\nwant (Triton 2.73) 200 %s", code, body, want)
	}
	ensLoad(t, e, 4, 60, 1)
	ensLoad(t, e, 2, 20, 2)
	const requests, inferences = 81, 101
	p := engStats(t, e, "pipeline")
	if p.InferenceStats.Success.Count != requests || p.ExecutionCount != requests || p.InferenceCount != inferences {
		t.Errorf("pipeline success %d execution_count %d inference_count %d, want %d, %d, %d",
			p.InferenceStats.Success.Count, p.ExecutionCount, p.InferenceCount, requests, requests, inferences)
	}
	var cinf uint64
	for _, m := range []string{"preprocess", "classifier"} {
		c := engStats(t, e, m)
		if c.InferenceStats.Success.Count != p.InferenceStats.Success.Count || c.InferenceCount != p.InferenceCount {
			t.Errorf("%s success %d inference_count %d, want the pipeline's %d and %d",
				m, c.InferenceStats.Success.Count, c.InferenceCount, p.InferenceStats.Success.Count, p.InferenceCount)
		}
		cinf += c.InferenceStats.ComputeInfer.Ns
		engCheckInvariants(t, e, m)
	}
	if got := p.InferenceStats.ComputeInfer.Ns; got != cinf || got == 0 {
		t.Errorf("pipeline compute_infer %d ns, want its steps' %d", got, cinf)
	}
	engCheckInvariants(t, e, "pipeline")
}

// TestDirPipelineComposingOverrideChangesThroughput: a configuration
// override of a composing model's instance count takes effect for the
// ensemble's requests: of two pipelines whose second step takes 20 ms, the
// one whose step was loaded with four instances serves about four times
// the other's requests in one window (counted by the simulator).
func TestDirPipelineComposingOverrideChangesThroughput(t *testing.T) {
	t.Parallel()
	io4 := `max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`
	slow := `backend: "identity"
` + io4 + `instance_group [ { kind: KIND_CPU count: 1 } ]
parameters { key: "execute_delay_ms" value: { string_value: "20" } }`
	pipe := func(step string) string {
		return `platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [
  { model_name: "pre" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "x" } },
  { model_name: "` + step + `" model_version: -1 input_map { key: "INPUT0" value: "x" } output_map { key: "OUTPUT0" value: "OUT" } } ] }`
	}
	dir := t.TempDir()
	for name, cfg := range map[string]string{
		"pre":    `backend: "identity"` + "\n" + io4 + `instance_group [ { kind: KIND_CPU count: 8 } ]`,
		"slow_a": slow, "slow_b": slow, "pipe_a": pipe("slow_a"), "pipe_b": pipe("slow_b"),
	} {
		writeModel(t, dir, name, cfg, "1")
	}
	s := startDir(t, dir, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"pipe_a", "pipe_b"}})
	e := s.Engine()
	request := func(m string) *pb.ModelInferRequest {
		req := engFP32Request(m, 0, 4)
		req.Inputs[0].Name = "IN"
		return req
	}
	if _, err := engInfer(t, e, request("pipe_b")); err != nil {
		t.Fatal(err)
	}
	tuned := `{"backend":"identity","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[4]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[4]}],
		"instance_group":[{"kind":"KIND_CPU","count":4}],"parameters":{"execute_delay_ms":{"string_value":"20"}}}`
	if got := httpLoad(t, s, "slow_b", tuned); got != loadAnswer("") {
		t.Fatalf("override of slow_b: %s", got)
	}
	// Triton reloads the ensembles of a composing model it loads anew.
	if got := successes(t, e, "pipe_b"); got != 0 {
		t.Errorf("pipe_b success %d after its step's override, want 0 (reloaded)", got)
	}
	counts := closedLoopsOf(t, e, 8, 400*time.Millisecond, request, "pipe_a", "pipe_b")
	r := float64(counts[1]) / float64(max(counts[0], 1))
	t.Logf("pipeline inferences in 400 ms: step of 1 instance %d, of 4 instances %d (%.2fx)", counts[0], counts[1], r)
	if r < 3 || r > 5 {
		t.Errorf("the pipeline whose step has 4 instances served %.2f times the other's inferences; want about 4", r)
	}
}

// TestDirEnsembleOverridesAsTriton: configuration overrides of the
// pipeline and of its composing models, over HTTP, answered and applied as
// the real server does: an override of a composing model reloads the
// ensemble (its statistics start anew, the composing model's are kept
// when only its instances change), one of the ensemble reloads it, a
// configuration Triton refuses while reading it leaves it serving, one
// that fails its checks against the composing models unloads it.
func TestDirEnsembleOverridesAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"pipeline"}})
	e := s.Engine()
	c, _ := rawGRPC(t, s)
	infer := func(n int) {
		t.Helper()
		for range n {
			if _, err := engInfer(t, e, ensRequest(1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	state := func(model string) string {
		t.Helper()
		return strings.Join(indexState(t, c, model), ",")
	}
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	const polled = "500 " + `{"error":"failed to load 'pipeline', failed to poll from model repository"}`

	infer(3)
	if got := httpLoad(t, s, "preprocess", preprocessConfig(16, 2)); got != loadAnswer("") {
		t.Fatalf("override of preprocess: %s", got)
	}
	if p, pre := successes(t, e, "pipeline"), successes(t, e, "preprocess"); p != 0 || pre != 3 || state("pipeline") != "1/READY/" {
		t.Errorf("after preprocess's override: pipeline success %d (%s), preprocess %d; want 0 (reloaded, READY) and 3 (updated in place)",
			p, state("pipeline"), pre)
	}
	if n := engConfig(t, e, "preprocess").InstanceGroup[0].Count; n != 2 {
		t.Errorf("preprocess has %d instances, want 2", n)
	}

	infer(1)
	for _, tc := range []struct {
		name, config, want, state string
	}{
		{"the same", pipelineConfig(nil), loadAnswer(""), "1/READY/"},
		{"instance_group", pipelineConfig(set("instance_group", []any{map[string]any{"kind": "KIND_CPU", "count": 2}})), polled, "1/READY/"},
		{"dynamic_batching", pipelineConfig(set("dynamic_batching", map[string]any{})), polled, "1/READY/"},
		{"another name", pipelineConfig(set("name", "pipe2")), polled, "1/READY/"},
		{"max_batch_size 4", pipelineConfig(set("max_batch_size", 4)), loadAnswer(""), "1/READY/"},
		{"a step on identity", pipelineConfig(pipelineStep(1, set("model_name", "identity"))), loadAnswer(""), "1/READY/"},
		{"a step on nosuch", pipelineConfig(pipelineStep(1, set("model_name", "nosuch"))),
			loadAnswer("load failed for model 'pipeline': ensemble pipeline contains models that are not available or ambiguous: nosuch\n"),
			"1/UNAVAILABLE/unloaded"},
		{"steps without model_version", pipelineConfig(func(m map[string]any) {
			pipelineStep(0, func(s map[string]any) { delete(s, "model_version") })(m)
			pipelineStep(1, func(s map[string]any) { delete(s, "model_version") })(m)
		}), loadAnswer("load failed for model 'pipeline': ensemble 'pipeline' depends on 'classifier' whose required version 0 is not loaded.\n"),
			"1/UNAVAILABLE/unloaded"},
		{"the same again", pipelineConfig(nil), loadAnswer(""), "1/READY/"},
	} {
		if got := httpLoad(t, s, "pipeline", tc.config); got != tc.want || state("pipeline") != tc.state {
			t.Errorf("%s: %s, pipeline %s\nwant %s, %s", tc.name, got, state("pipeline"), tc.want, tc.state)
		}
	}
	if got := successes(t, e, "pipeline"); got != 0 {
		t.Errorf("pipeline success %d after its overrides, want 0 (reloaded)", got)
	}
	if state("identity") != "1/READY/" {
		t.Errorf("identity %s, want loaded with the ensemble a step of which ran it", state("identity"))
	}
	if mbs := engConfig(t, e, "pipeline").MaxBatchSize; mbs != 8 {
		t.Errorf("pipeline max_batch_size %d, want the last override's 8", mbs)
	}
	infer(1)

	// A composing model's override that the ensemble's checks refuse
	// loads; the ensemble is unloaded.
	if got := httpLoad(t, s, "preprocess", preprocessConfig(8, 1)); got != loadAnswer("") ||
		state("preprocess") != "1/READY/" || state("pipeline") != "1/UNAVAILABLE/unloaded" {
		t.Errorf("override of preprocess with dims [8]: %s; preprocess %s, pipeline %s; want 200, READY, UNAVAILABLE/unloaded",
			got, state("preprocess"), state("pipeline"))
	}
	if _, err := engInfer(t, e, ensRequest(1)); errorMessage(err) != "Request for unknown model: 'pipeline' has no available versions" {
		t.Errorf("infer after the unload: %v", err)
	}
}

// Ensembles of the real repository's models that the tests below add to a
// copy of it (the real server served that copy).
const (
	outerEnsemble = `name: "outer"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 16 ] } ]
ensemble_scheduling { step [
  { model_name: "pipeline" model_version: -1 input_map { key: "IN" value: "IN" } output_map { key: "OUT" value: "OUT" } } ] }`
	// trioEnsemble's steps lack model_version.
	trioEnsemble = `name: "trio"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [
  { model_name: "preprocess" input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "a" } },
  { model_name: "classifier" input_map { key: "INPUT0" value: "a" } output_map { key: "OUTPUT0" value: "b" } },
  { model_name: "identity" input_map { key: "INPUT0" value: "b" } output_map { key: "OUTPUT0" value: "OUT" } } ] }`
	halfmissEnsemble = `name: "halfmiss"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [
  { model_name: "preprocess" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "a" } },
  { model_name: "classifier" model_version: -1 input_map { key: "INPUT0" value: "a" } output_map { key: "OUTPUT0" value: "b" } },
  { model_name: "nosuch" model_version: -1 input_map { key: "INPUT0" value: "b" } output_map { key: "OUTPUT0" value: "OUT" } } ] }`
)

// TestDirEnsembleLoadsAsTriton: an ensemble that fails its checks against
// its composing models leaves them loaded; an override of a composing
// model reloads the ensembles above it, an ensemble's ensemble too, and
// unloads those that now fail.
func TestDirEnsembleLoadsAsTriton(t *testing.T) {
	t.Parallel()
	dir := dirRepository(t, map[string]string{"outer": outerEnsemble, "trio": trioEnsemble, "halfmiss": halfmissEnsemble})
	s := startDir(t, dir, EngineOptions{ModelControl: ModelControlExplicit})
	e := s.Engine()
	c, _ := rawGRPC(t, s)
	state := func(model string) string {
		t.Helper()
		return strings.Join(indexState(t, c, model), ",")
	}
	for _, tc := range []struct{ model, want, loaded string }{
		{"halfmiss", "load failed for model 'halfmiss': ensemble halfmiss contains models that are not available or ambiguous: nosuch\n", "preprocess"},
		// Triton names the model of the last step when all ask for
		// version 0.
		{"trio", "load failed for model 'trio': ensemble 'trio' depends on 'identity' whose required version 0 is not loaded.\n", "identity"},
	} {
		if got := httpLoad(t, s, tc.model, ""); got != loadAnswer(tc.want) || state(tc.model) != "" || state(tc.loaded) != "1/READY/" {
			t.Errorf("load %s: %s; %s %q, %s %s\nwant %s; not known, %s READY", tc.model, got, tc.model, state(tc.model),
				tc.loaded, state(tc.loaded), loadAnswer(tc.want), tc.loaded)
		}
	}
	if got := httpLoad(t, s, "outer", ""); got != loadAnswer("") {
		t.Fatalf("load outer: %s", got)
	}
	req := ensRequest(1)
	req.ModelName = "outer"
	if _, err := engInfer(t, e, req); err != nil {
		t.Fatal(err)
	}
	if got := httpLoad(t, s, "preprocess", preprocessConfig(16, 2)); got != loadAnswer("") {
		t.Fatalf("override of preprocess: %s", got)
	}
	if o, p, pre := successes(t, e, "outer"), successes(t, e, "pipeline"), successes(t, e, "preprocess"); o != 0 || p != 0 || pre != 1 {
		t.Errorf("after preprocess's override: outer %d, pipeline %d, preprocess %d; want 0, 0 (reloaded) and 1", o, p, pre)
	}
	if _, err := engInfer(t, e, req); err != nil {
		t.Errorf("outer after the reload: %v", err)
	}
	if got := httpLoad(t, s, "preprocess", preprocessConfig(8, 1)); got != loadAnswer("") ||
		state("outer") != "1/UNAVAILABLE/unloaded" || state("pipeline") != "1/UNAVAILABLE/unloaded" {
		t.Errorf("override of preprocess with dims [8]: %s; outer %s, pipeline %s; want both unloaded", got, state("outer"), state("pipeline"))
	}
}

// TestDirEnsembleStepWithoutModelVersion: a config.pbtxt step without
// model_version asks for version 0 (the proto's default), as on Triton,
// whose start then fails: "ensemble 'pipeline' depends on 'classifier'
// whose required version 0 is not loaded."
func TestDirEnsembleStepWithoutModelVersion(t *testing.T) {
	t.Parallel()
	dir := dirRepository(t, nil)
	path := filepath.Join(dir, "pipeline", modelConfigFile)
	cfg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(cfg), " model_version: -1", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := LoadRepositoryDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range repo.Models {
		if m.Name == "pipeline" && (m.EnsembleScheduling.Steps[0].ModelVersion != 0 || m.EnsembleScheduling.Steps[1].ModelVersion != 0) {
			t.Errorf("steps read as %+v, want model_version 0", m.EnsembleScheduling.Steps)
		}
	}
	e, err := NewEngine(repo, EngineOptions{})
	if err == nil {
		e.Close()
		t.Fatal("NewEngine succeeded")
	}
	want := "failed to load all models: failed to load 'pipeline': ensemble 'pipeline' depends on 'classifier' whose required version 0 is not loaded."
	if !strings.Contains(err.Error(), want) {
		t.Errorf("NewEngine: %v\nwant %q", err, want)
	}
}

// TestUnloadDependentsParametersAsTriton: the frontends read
// unload_dependents as Triton's do: gRPC refuses a value that is not a
// bool_param; HTTP unloads the model alone for any body that is JSON but
// not {"parameters":{"unload_dependents":true}}.
func TestUnloadDependentsParametersAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"pipeline"}})
	c, _ := rawGRPC(t, s)
	state := func(model string) string {
		t.Helper()
		return strings.Join(indexState(t, c, model), ",")
	}
	_, err := c.RepositoryModelUnload(ctxT(t), &pb.RepositoryModelUnloadRequest{ModelName: "pipeline",
		Parameters: map[string]*pb.ModelRepositoryParameter{"unload_dependents": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: "true"}}}})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument ||
		st.Message() != "invalid value type for 'unload_dependents' parameter, expected bool_param." || state("pipeline") != "1/READY/" {
		t.Errorf("gRPC unload_dependents as a string: %v, pipeline %s; want Triton's INVALID_ARGUMENT, nothing unloaded", err, state("pipeline"))
	}
	_, err = c.RepositoryModelUnload(ctxT(t), &pb.RepositoryModelUnloadRequest{ModelName: "pipeline", RepositoryName: "r"})
	if st := status.Convert(err); st.Code() != codes.Unimplemented || st.Message() != "'repository_name' specification is not supported" {
		t.Errorf("gRPC unload of a named repository: %v", err)
	}
	unload := "http://" + s.HTTPAddr() + "/v2/repository/models/pipeline/unload"
	for _, body := range []string{`{"parameters":{"unload_dependents":"yes"}}`, `{"parameters":5}`, `[1]`} {
		if got := httpLoad(t, s, "pipeline", ""); got != loadAnswer("") {
			t.Fatalf("load: %s", got)
		}
		code, _, got := httpDo(t, "POST", unload, []byte(body), nil)
		if code != 200 || state("pipeline") != "1/UNAVAILABLE/unloaded" || state("preprocess") != "1/READY/" {
			t.Errorf("HTTP unload with %s: %d %s; pipeline %s, preprocess %s; want the pipeline alone unloaded", body, code, got,
				state("pipeline"), state("preprocess"))
		}
	}
	if code, _, got := httpDo(t, "POST", unload, []byte(`{bad`), nil); code != 500 ||
		!strings.HasPrefix(string(got), `{"error":"failed to parse the request JSON buffer: `) {
		t.Errorf("HTTP unload with a body that is not JSON: %d %s", code, got)
	}
}
