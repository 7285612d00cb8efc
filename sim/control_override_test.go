package sim

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// The expected answers in these tests are the real server's (Triton
// 2.73.0dev, CPU build, serving ../shared/triton/models started with
// --model-control-mode=explicit --load-model='*'), written down.

// identityOverride is a configuration override of identity_int32 as JSON,
// changed by mod.
func identityOverride(mod func(map[string]any)) string {
	c := map[string]any{"name": "identity_int32", "backend": "identity", "max_batch_size": 8,
		"input":  []any{map[string]any{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": []int{-1}}},
		"output": []any{map[string]any{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": []int{-1}}}}
	if mod != nil {
		mod(c)
	}
	b, _ := json.Marshal(c)
	return string(b)
}

const pollFailed = "failed to load 'identity_int32', failed to poll from model repository"

// loadFailed is the real server's answer to a load its backend or core
// refused when the model loads, for a version at state.
func loadFailed(state, msg string) string {
	return "load failed for model 'identity_int32': version 1 is at " + state + " state: Invalid argument: " + msg + ";\n"
}

// TestOverrideAnswersAsTriton: each kind of bad override gets the real
// server's answer over HTTP and gRPC: "failed to poll" for what it finds
// while reading the configuration, the load failure with its reason for
// what it finds when the model loads (READY: an instance group change of
// a loaded model, which it applies in place), and the loaded model serves
// on with its configuration.
func TestOverrideAnswersAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	c, _ := rawGRPC(t, s)
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	// asLoaded makes an override the repository's configuration but for
	// what mod changes.
	asLoaded := func(mod func(map[string]any)) func(map[string]any) {
		return func(m map[string]any) {
			m["max_batch_size"] = 64
			m["dynamic_batching"] = map[string]any{"max_queue_delay_microseconds": 100}
			mod(m)
		}
	}
	io := func(in, out any) func(map[string]any) {
		return func(m map[string]any) { m["input"], m["output"] = []any{in}, []any{out} }
	}
	for _, tc := range []struct {
		name, config string
		code         codes.Code
		msg          string
	}{
		{"bad JSON", "{not json", codes.Internal, pollFailed},
		{"empty", "", codes.Internal, pollFailed},
		{"not an object", "[1,2]", codes.Internal, pollFailed},
		{"unknown field", identityOverride(set("bogus", 1)), codes.Internal, pollFailed},
		{"negative max_batch_size", identityOverride(set("max_batch_size", -1)), codes.Internal, pollFailed},
		{"preferred batch size over max", identityOverride(set("dynamic_batching", map[string]any{"preferred_batch_size": []int{16}})), codes.Internal, pollFailed},
		{"preferred batch size 0", identityOverride(set("dynamic_batching", map[string]any{"preferred_batch_size": []int{0}})), codes.Internal, pollFailed},
		{"name mismatch", identityOverride(set("name", "other")), codes.Internal, pollFailed},
		{"no backend", identityOverride(func(m map[string]any) { delete(m, "backend") }), codes.Internal, pollFailed},
		{"ensemble platform with a backend", identityOverride(set("platform", "ensemble")), codes.Internal, pollFailed},
		{"control without values", identityOverride(set("sequence_batching", map[string]any{"control_input": []any{
			map[string]any{"name": "S", "control": []any{map[string]any{"kind": "CONTROL_SEQUENCE_START"}}}}})), codes.Internal, pollFailed},
		{"input name", identityOverride(io(map[string]any{"name": "X", "data_type": "TYPE_INT32", "dims": []int{-1}},
			map[string]any{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": []int{-1}})),
			codes.InvalidArgument, loadFailed("UNAVAILABLE", "expected input name to follow INPUT<index> pattern, got 'X'")},
		{"datatypes", identityOverride(io(map[string]any{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": []int{-1}},
			map[string]any{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": []int{-1}})),
			codes.InvalidArgument, loadFailed("UNAVAILABLE", "expected input and output datatype to match, got TYPE_INT32 and TYPE_FP32")},
		{"no dims", identityOverride(io(map[string]any{"name": "INPUT0", "data_type": "TYPE_INT32"},
			map[string]any{"name": "OUTPUT0", "data_type": "TYPE_INT32"})),
			codes.InvalidArgument, loadFailed("UNAVAILABLE", "model input 'INPUT0' must specify 'dims' for identity_int32")},
		{"zero dim", identityOverride(io(map[string]any{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": []int{0}},
			map[string]any{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": []int{0}})),
			codes.InvalidArgument, loadFailed("UNAVAILABLE", "model input 'INPUT0' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for identity_int32")},
		{"KIND_GPU", identityOverride(set("instance_group", []any{map[string]any{"kind": "KIND_GPU", "count": 1}})),
			codes.InvalidArgument, loadFailed("UNAVAILABLE", "instance group identity_int32_0 of model identity_int32 has kind KIND_GPU but server does not support GPUs")},
		{"KIND_GPU, the rest as loaded", identityOverride(asLoaded(set("instance_group", []any{map[string]any{"kind": "KIND_GPU", "count": 1}}))),
			codes.InvalidArgument, loadFailed("READY", "instance group identity_int32_0 of model identity_int32 has kind KIND_GPU but server does not support GPUs")},
		{"KIND_CPU with GPUs, the rest as loaded", identityOverride(asLoaded(set("instance_group", []any{map[string]any{"kind": "KIND_CPU", "gpus": []int{0}}}))),
			codes.InvalidArgument, loadFailed("READY", "instance group identity_int32_0 of model identity_int32 has kind KIND_CPU but specifies one or more GPUs")},
	} {
		httpStatus := map[codes.Code]int{codes.Internal: 500, codes.InvalidArgument: 400}[tc.code]
		body, _ := json.Marshal(map[string]any{"parameters": map[string]any{"config": tc.config}})
		code, _, got := httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/repository/models/identity_int32/load", body, nil)
		wantBody := errorBody(tc.msg)
		if code != httpStatus || string(got) != wantBody {
			t.Errorf("%s: HTTP %d %s\nwant %d %s", tc.name, code, got, httpStatus, wantBody)
		}
		_, err := c.RepositoryModelLoad(ctxT(t), &pb.RepositoryModelLoadRequest{ModelName: "identity_int32",
			Parameters: map[string]*pb.ModelRepositoryParameter{"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: tc.config}}}})
		if st := status.Convert(err); st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("%s: gRPC %v %q\nwant %v %q", tc.name, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
	// The repository's configuration serves on.
	if got := engConfig(t, s.Engine(), "identity_int32"); !proto.Equal(got, tritonConfig(t, "identity_int32.pbtxt")) {
		t.Errorf("after refused overrides the config is\n%v", prototext.Format(got))
	}
}

// TestOverrideParametersAsTriton: what the frontends refuse before the
// model is read, over HTTP and gRPC, with the real server's answers.
func TestOverrideParametersAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	base := "http://" + s.HTTPAddr() + "/v2/repository/"
	for _, tc := range []struct {
		path, body string
		code       int
		msg        string
	}{
		{"models/identity/load", `{"parameters":{"config":5}}`, 500, "attempt to access JSON non-string as string"},
		{"models/identity/load", `{"parameters":{"config":{"a":1}}}`, 500, "attempt to access JSON non-string as string"},
		{"models/identity/load", `{"parameters":{"foo":"bar"}}`, 500, "unexpected error on creating Triton parameter"},
		{"models/identity/load", `{"parameters":[1]}`, 500, "attempt to get members for non-object"},
		{"foo/models/identity/load", ``, 501, "'repository_name' specification is not supported"},
		{"foo/models/identity/unload", ``, 501, "'repository_name' specification is not supported"},
		{"models/nosuch/load", `{"parameters":{"config":"{\"name\":\"nosuch\",\"backend\":\"identity\"}"}}`, 500,
			"failed to load 'nosuch', failed to poll from model repository"},
	} {
		code, _, got := httpDo(t, "POST", base+tc.path, []byte(tc.body), nil)
		want := errorBody(tc.msg)
		if code != tc.code || string(got) != want {
			t.Errorf("%s %s: %d %s\nwant %d %s", tc.path, tc.body, code, got, tc.code, want)
		}
	}
	c, _ := rawGRPC(t, s)
	str := func(s string) *pb.ModelRepositoryParameter {
		return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: s}}
	}
	for _, tc := range []struct {
		req  *pb.RepositoryModelLoadRequest
		code codes.Code
		msg  string
	}{
		{&pb.RepositoryModelLoadRequest{ModelName: "identity", Parameters: map[string]*pb.ModelRepositoryParameter{
			"config": {ParameterChoice: &pb.ModelRepositoryParameter_Int64Param{Int64Param: 5}}}},
			codes.InvalidArgument, "invalid value type for load parameter 'config', expected string_param."},
		{&pb.RepositoryModelLoadRequest{ModelName: "identity", Parameters: map[string]*pb.ModelRepositoryParameter{"foo": str("x")}},
			codes.InvalidArgument, "unrecognized load parameter 'foo'."},
		{&pb.RepositoryModelLoadRequest{ModelName: "identity", Parameters: map[string]*pb.ModelRepositoryParameter{"file:1/x": str("x")}},
			codes.InvalidArgument, "invalid value type for load parameter 'file:1/x', expected bytes_param."},
		{&pb.RepositoryModelLoadRequest{ModelName: "identity", RepositoryName: "r"},
			codes.Unimplemented, "'repository_name' specification is not supported"},
		{&pb.RepositoryModelLoadRequest{ModelName: ""},
			codes.InvalidArgument, "Model name cannot be empty. Please enter a valid name to deploy."},
	} {
		_, err := c.RepositoryModelLoad(ctxT(t), tc.req)
		if st := status.Convert(err); st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("%v: %v %q\nwant %v %q", tc.req, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
	none := startTritonModels(t, EngineOptions{})
	if err := none.Engine().LoadModelConfig("identity", identityOverride(nil)); err != errControlDisabled {
		t.Errorf("override in mode none: %v; want %v", err, errControlDisabled)
	}
}

// TestOverrideConfigAsTriton: an override replaces the whole configuration,
// auto-completed and normalized as the real server does (its answers in
// testdata/triton_configs/override_*); a later load without an override
// keeps it while the model stays loaded, and after an unload the
// repository's configuration comes back (as Triton 2.73 does).
func TestOverrideConfigAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	e := s.Engine()
	overrides := map[string]string{
		"identity_int32": `{"backend":"identity","max_batch_size":16,"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
			"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}],"instance_group":[{"count":2,"kind":"KIND_CPU"}],"dynamic_batching":{}}`,
		"square_int32": `{"name":"square_int32","backend":"square","model_transaction_policy":{"decoupled":true},
			"input":[{"name":"IN","data_type":"TYPE_INT32","dims":[1]}],"output":[{"name":"OUT","data_type":"TYPE_INT32","dims":[1]}],
			"parameters":{"CUSTOM_FAIL_COUNT":{"string_value":"1"},"CUSTOM_EMPTY_COUNT":{"string_value":"1"}}}`,
		"simple_sequence": `{"name":"simple_sequence","backend":"sequence","max_batch_size":4,
			"sequence_batching":{"oldest":{"max_candidate_sequences":4},"control_input":[
			  {"name":"START","control":[{"kind":"CONTROL_SEQUENCE_START","int32_false_true":[0,1]}]},
			  {"name":"READY","control":[{"kind":"control_sequence_ready","int32_false_true":[0,1]}]}]},
			"input":[{"name":"INPUT","data_type":"TYPE_INT32","dims":[1]}],"output":[{"name":"OUTPUT","data_type":"TYPE_INT32","dims":[1]}],
			"instance_group":[{"kind":"KIND_AUTO","count":3}],"parameters":{"execute_delay_ms":{"string_value":"2"}}}`,
	}
	for m, cfg := range overrides {
		if err := e.LoadModelConfig(m, cfg); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		want := tritonConfig(t, "override_"+m+".pbtxt")
		if got := engConfig(t, e, m); !proto.Equal(got, want) {
			t.Errorf("%s: config\n%v\nwant (Triton 2.73)\n%v", m, prototext.Format(got), prototext.Format(want))
		}
		if err := e.LoadModel(m); err != nil {
			t.Fatal(err)
		}
		if got := engConfig(t, e, m); !proto.Equal(got, want) {
			t.Errorf("%s: a load without override changed the config to\n%v", m, prototext.Format(got))
		}
		if err := e.UnloadModel(m); err != nil {
			t.Fatal(err)
		}
		waitFor(t, m+" unloaded", func() bool { _, err := e.ModelConfig(m, ""); return err != nil })
		if err := e.LoadModel(m); err != nil {
			t.Fatal(err)
		}
		if got := engConfig(t, e, m); !proto.Equal(got, tritonConfig(t, m+".pbtxt")) {
			t.Errorf("%s: after unload and load the config is\n%v", m, prototext.Format(got))
		}
	}
}

// TestOverrideStatistics: statistics as the real server keeps them across
// a reload: a load whose override changes only the instance groups keeps
// them (Triton updates the model in place); any other change starts them
// from zero; a load without change keeps them.
func TestOverrideStatistics(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	e := s.Engine()
	infer := func() {
		t.Helper()
		req := engFP32Request("identity_int32", 1, 2)
		req.Inputs[0].Datatype = "INT32"
		if _, err := engInfer(t, e, req); err != nil {
			t.Fatal(err)
		}
	}
	count := func() uint64 { return engStats(t, e, "identity_int32").InferenceCount }
	db := func(m map[string]any) { m["dynamic_batching"] = map[string]any{"max_queue_delay_microseconds": 100} }
	infer()
	infer()
	for _, step := range []struct {
		what, config string
		want         uint64
	}{
		{"the repository's config", identityOverride(func(m map[string]any) { m["max_batch_size"] = 64; db(m) }), 2},
		{"four instances", identityOverride(func(m map[string]any) {
			m["max_batch_size"] = 64
			db(m)
			m["instance_group"] = []any{map[string]any{"kind": "KIND_CPU", "count": 4}}
		}), 2},
		{"another queue delay", identityOverride(func(m map[string]any) {
			m["max_batch_size"] = 64
			m["dynamic_batching"] = map[string]any{"max_queue_delay_microseconds": 200}
		}), 0},
	} {
		if err := e.LoadModelConfig("identity_int32", step.config); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if got := count(); got != step.want {
			t.Errorf("after an override with %s: inference_count %d; want %d", step.what, got, step.want)
		}
	}
	infer()
	if err := e.LoadModel("identity_int32"); err != nil || count() != 1 {
		t.Errorf("a load without change: %v, inference_count %d; want 1", err, count())
	}
}

// TestOverrideInFlightFinishesOnOldConfig: a request executing when the
// override loads finishes on the configuration it started on; the next is
// served by the new one.
func TestOverrideInFlightFinishesOnOldConfig(t *testing.T) {
	t.Parallel()
	spec := engTimedModel("slow", 200*time.Millisecond, 8, 1, nil)
	spec.Backend = "python"
	e := engNew(t, Repository{Models: []ModelSpec{spec}}, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	done := make(chan error, 1)
	var shape []int64
	go func() {
		resp, err := e.Infer(t.Context(), engFP32Request("slow", 1, 4), false)
		if err == nil {
			shape = resp.Outputs[0].Shape
		}
		done <- err
	}()
	waitFor(t, "the request to execute", func() bool {
		e.mu.RLock()
		defer e.mu.RUnlock()
		mv := e.models["slow"].versions[0]
		return mv.held.Load() == 1 && mv.sched.pending.Load() == 0
	})
	err := e.LoadModelConfig("slow", `{"backend":"python","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[4]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[4]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || len(shape) != 2 {
		t.Fatalf("the request in flight: %v, shape %v; want it served as the batching model it started on", err, shape)
	}
	if _, err := engInfer(t, e, engFP32Request("slow", 1, 4)); err == nil || !strings.Contains(err.Error(), "unexpected shape") {
		t.Errorf("a batched request to the new, non-batching configuration: %v", err)
	}
	if _, err := engInfer(t, e, engFP32Request("slow", 0, 4)); err != nil {
		t.Errorf("a request to the new configuration: %v", err)
	}
}

// closedLoops keeps clients requests in flight on each model at once and
// returns the inferences the simulator counted for each in one window of
// d, once all run; a host's stalls fall on all of them alike. The
// requests still in flight at the end are cancelled.
func closedLoops(t *testing.T, e *Engine, clients int, d time.Duration, models ...string) []uint64 {
	t.Helper()
	return closedLoopsOf(t, e, clients, d, func(m string) *pb.ModelInferRequest { return engFP32Request(m, 1, 4) }, models...)
}

// closedLoopsOf is closedLoops with the requests request makes for each
// model.
func closedLoopsOf(t *testing.T, e *Engine, clients int, d time.Duration, request func(model string) *pb.ModelInferRequest,
	models ...string) []uint64 {
	t.Helper()
	count := func() []uint64 {
		out := make([]uint64, len(models))
		for i, m := range models {
			out[i] = engStats(t, e, m).InferenceCount
		}
		return out
	}
	start := count()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, m := range models {
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if _, err := e.Infer(ctx, request(m), false); err != nil && ctx.Err() == nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	waitFor(t, "the first inferences", func() bool {
		now := count()
		for i := range now {
			if now[i] == start[i] {
				return false
			}
		}
		return true
	})
	before := count()
	time.Sleep(d) // the measurement window; the counts are the simulator's
	after := count()
	for i := range after {
		after[i] -= before[i]
	}
	return after
}

// boundConfig is an override of a "bound" model: instances on the CPU,
// max_batch_size, and a dynamic batcher if given.
func boundConfig(name string, instances, maxBatch int, batching string) string {
	return `{"name":"` + name + `","backend":"python","max_batch_size":` + itoa(maxBatch) + `,
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[4]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[4]}],
		"instance_group":[{"kind":"KIND_CPU","count":` + itoa(instances) + `}]` + batching + `}`
}

// overrideThroughput serves two 20 ms models described in JSON, "base"
// and "tuned", loads each with its override and returns the inferences
// the simulator counted for each in one window with 8 requests in flight
// on each, and tuned's statistics.
func overrideThroughput(t *testing.T, base, tuned string) ([]uint64, *pb.ModelStatistics) {
	t.Helper()
	e := engNew(t, Repository{Models: []ModelSpec{
		engTimedModel("base", 20*time.Millisecond, 1, 1, nil),
		engTimedModel("tuned", 20*time.Millisecond, 1, 1, nil),
	}}, EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	for name, cfg := range map[string]string{"base": base, "tuned": tuned} {
		if err := e.LoadModelConfig(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	counts := closedLoops(t, e, 8, 200*time.Millisecond, "base", "tuned")
	st := engStats(t, e, "tuned")
	if lat := st.InferenceStats.ComputeInfer; lat.Ns/lat.Count < uint64(19*time.Millisecond) {
		t.Errorf("compute_infer %d ns on average; the model's 20 ms latency model was not kept", lat.Ns/lat.Count)
	}
	return counts, st
}

// TestOverrideInstancesThroughput: an override's instance count takes
// effect in the timing model of a model described in JSON, whose latency
// model it keeps: of two batch-time-bound models in one window, the one
// loaded with four instances serves about four times the inferences of
// the one loaded with one.
func TestOverrideInstancesThroughput(t *testing.T) {
	t.Parallel()
	counts, _ := overrideThroughput(t, boundConfig("base", 1, 1, ""), boundConfig("tuned", 4, 1, ""))
	r := float64(counts[1]) / float64(max(counts[0], 1))
	t.Logf("inferences in 200 ms: 1 instance %d, 4 instances %d (%.2fx)", counts[0], counts[1], r)
	if r < 3 || r > 5 {
		t.Errorf("4 instances served %.2f times 1 instance's inferences; want about 4", r)
	}
}

// TestOverrideBatchingThroughput: an override's max_batch_size and dynamic
// batcher take effect: batches of up to 8 serve several times the
// inferences single requests serve in the same window (8 times on a host
// that keeps up).
func TestOverrideBatchingThroughput(t *testing.T) {
	t.Parallel()
	counts, st := overrideThroughput(t, boundConfig("base", 1, 1, ""),
		boundConfig("tuned", 1, 8, `,"dynamic_batching":{"max_queue_delay_microseconds":20000}`))
	r := float64(counts[1]) / float64(max(counts[0], 1))
	t.Logf("inferences in 200 ms: batch 1 %d, batches of 8 %d (%.2fx)", counts[0], counts[1], r)
	// A starved host's clients may send too late for a full batch: the
	// batch then waits or goes smaller, never back to single requests.
	if r < 3 || float64(st.InferenceCount)/float64(st.ExecutionCount) < 3 {
		t.Errorf("batching served %.2f times, %d inferences in %d executions; want batches of several", r, st.InferenceCount, st.ExecutionCount)
	}
}

// errorBody is Triton's HTTP error body for msg, which it writes without
// escaping '<' and '>'.
func errorBody(msg string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"error": msg})
	return strings.TrimSuffix(b.String(), "\n")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return strings.TrimSpace(string(b))
}
