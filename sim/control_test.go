package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// indexState is a model's entries in the repository index, as
// "version/state/reason" strings ("" for a name-only entry).
func indexState(t *testing.T, raw pb.GRPCInferenceServiceClient, model string) []string {
	t.Helper()
	idx, err := raw.RepositoryIndex(ctxT(t), &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range idx.GetModels() {
		if m.GetName() == model {
			s := ""
			if m.GetVersion() != "" || m.GetState() != "" {
				s = m.GetVersion() + "/" + m.GetState() + "/" + m.GetReason()
			}
			out = append(out, s)
		}
	}
	return out
}

func int8Request() *pb.ModelInferRequest {
	return &pb.ModelInferRequest{
		ModelName: "simple_int8",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT8", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT8", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{make([]byte, 16), make([]byte, 16)},
	}
}

// TestExplicitModelControl loads and unloads over gRPC and HTTP, as
// Triton's simple_grpc_model_control and simple_http_model_control do.
func TestExplicitModelControl(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"simple"}})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	base := "http://" + s.HTTPAddr()

	// Only the startup model is loaded; the others are listed by name.
	idx, err := raw.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil || len(idx.GetModels()) != 8 {
		t.Fatalf("index %v, %v; want 8 entries", idx, err)
	}
	if got := indexState(t, raw, "simple"); len(got) != 1 || got[0] != "1/READY/" {
		t.Errorf("simple in the index: %q", got)
	}
	if got := indexState(t, raw, "simple_int8"); len(got) != 1 || got[0] != "" {
		t.Errorf("simple_int8 before any load: %q, want its name alone", got)
	}
	ready, err := raw.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{Ready: true})
	if err != nil || len(ready.GetModels()) != 1 {
		t.Errorf("ready index %v, %v; want simple alone", ready, err)
	}
	_, err = raw.ModelInfer(ctx, int8Request())
	if st, _ := status.FromError(err); st.Code() != codes.NotFound || st.Message() != "Request for unknown model: 'simple_int8' is not found" {
		t.Errorf("infer before load: %v", err)
	}

	// Load over gRPC.
	if _, err := raw.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "simple_int8"}); err != nil {
		t.Fatal(err)
	}
	if r, err := raw.ModelReady(ctx, &pb.ModelReadyRequest{Name: "simple_int8"}); err != nil || !r.Ready {
		t.Errorf("ready after load: %v, %v", r, err)
	}
	if got := indexState(t, raw, "simple_int8"); len(got) != 1 || got[0] != "1/READY/" {
		t.Errorf("simple_int8 after load: %q", got)
	}
	if _, err := raw.ModelInfer(ctx, int8Request()); err != nil {
		t.Fatalf("infer after load: %v", err)
	}

	// Unload over HTTP.
	if code, _, body := httpDo(t, "POST", base+"/v2/repository/models/simple_int8/unload", nil, nil); code != 200 || len(body) != 0 {
		t.Fatalf("HTTP unload: %d %s", code, body)
	}
	if got := indexState(t, raw, "simple_int8"); len(got) != 1 || got[0] != "1/UNAVAILABLE/unloaded" {
		t.Errorf("simple_int8 after unload: %q", got)
	}
	if code, _, body := httpDo(t, "GET", base+"/v2/models/simple_int8/ready", nil, nil); code != 404 ||
		string(body) != `{"error":"Request for unknown model: 'simple_int8' has no available versions"}` {
		t.Errorf("HTTP ready after unload: %d %s", code, body)
	}
	_, err = raw.ModelInfer(ctx, int8Request())
	if st, _ := status.FromError(err); st.Code() != codes.NotFound || st.Message() != "Request for unknown model: 'simple_int8' has no available versions" {
		t.Errorf("infer after unload: %v", err)
	}
	versioned := int8Request()
	versioned.ModelVersion = "1"
	_, err = raw.ModelInfer(ctx, versioned)
	if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != "Request for unknown model: 'simple_int8' version 1 is not at ready state" {
		t.Errorf("versioned infer after unload: %v", err)
	}
	code, _, body := httpDo(t, "POST", base+"/v2/models/simple_int8/infer",
		[]byte(`{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT8","data":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},{"name":"INPUT1","shape":[1,16],"datatype":"INT8","data":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]}`), nil)
	if code != 404 || string(body) != `{"error":"Request for unknown model: 'simple_int8' has no available versions"}` {
		t.Errorf("HTTP infer after unload: %d %s", code, body)
	}

	// Load over HTTP, then unknown names.
	if code, _, body := httpDo(t, "POST", base+"/v2/repository/models/simple_int8/load", nil, nil); code != 200 {
		t.Fatalf("HTTP load: %d %s", code, body)
	}
	if _, err := raw.ModelInfer(ctx, int8Request()); err != nil {
		t.Errorf("infer after reload: %v", err)
	}
	_, err = raw.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "unknown_model"})
	if st, _ := status.FromError(err); st.Code() != codes.Internal || st.Message() != "failed to load 'unknown_model', failed to poll from model repository" {
		t.Errorf("gRPC load of an unknown model: %v", err)
	}
	code, _, body = httpDo(t, "POST", base+"/v2/repository/models/unknown_model/load", nil, nil)
	if code != 500 || string(body) != `{"error":"failed to load 'unknown_model', failed to poll from model repository"}` {
		t.Errorf("HTTP load of an unknown model: %d %s", code, body)
	}
	// Triton: "Unload non-existing model, nothing should happen".
	if _, err := raw.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "unknown_model"}); err != nil {
		t.Errorf("unload of an unknown model: %v", err)
	}
	var entries []map[string]string
	if code, msg := httpJSON(t, base+"/v2/repository/index", nil, &entries); code != 200 || len(entries) != 8 {
		t.Errorf("HTTP index: %d %s %v", code, msg, entries)
	}
	for _, e := range entries {
		if e["name"] == "densenet_onnx" && (len(e) != 1) {
			t.Errorf("never-loaded model's HTTP index entry %v, want its name alone", e)
		}
	}
}

// TestModelControlRefusedUnlessExplicit: in the modes none (the default)
// and poll, load and unload fail with Triton's message, and every model is
// loaded.
func TestModelControlRefusedUnlessExplicit(t *testing.T) {
	const msg = "explicit model load / unload is not allowed if polling is enabled"
	for _, mode := range []ModelControlMode{"", ModelControlNone, ModelControlPoll} {
		s := startSim(t, ExampleRepository(), EngineOptions{ModelControl: mode, StartupModels: []string{"simple"}})
		raw, _ := rawGRPC(t, s)
		ctx := ctxT(t)
		idx, err := raw.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{Ready: true})
		if err != nil || len(idx.GetModels()) != 8 {
			t.Errorf("mode %q: %d ready models, %v; want 8", mode, len(idx.GetModels()), err)
		}
		_, err = raw.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "simple"})
		if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != msg {
			t.Errorf("mode %q: gRPC load: %v", mode, err)
		}
		_, err = raw.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "simple"})
		if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != msg {
			t.Errorf("mode %q: gRPC unload: %v", mode, err)
		}
		code, _, body := httpDo(t, "POST", "http://"+s.HTTPAddr()+"/v2/repository/models/simple/unload", nil, nil)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if code != 503 || e.Error != msg {
			t.Errorf("mode %q: HTTP unload: %d %s", mode, code, body)
		}
	}
}

func TestModelControlOptions(t *testing.T) {
	if _, err := NewEngine(ExampleRepository(), EngineOptions{ModelControl: "sometimes"}); err == nil || !strings.Contains(err.Error(), "use none, poll or explicit") {
		t.Errorf("bad mode: %v", err)
	}
	_, err := NewEngine(ExampleRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"simple", "resnet"}})
	if err == nil || !strings.Contains(err.Error(), `startup model "resnet" is not in the model repository`) {
		t.Errorf("unknown startup model: %v", err)
	}
	e := engNew(t, ExampleRepository(), EngineOptions{ModelControl: ModelControlExplicit})
	if n := len(e.RepositoryIndex(true)); n != 0 {
		t.Errorf("explicit mode without startup models: %d ready, want 0", n)
	}
	if !e.Ready() {
		t.Errorf("a server with no model loaded is still ready, as Triton is")
	}
	all := engNew(t, ExampleRepository(), EngineOptions{ModelControl: ModelControlExplicit, StartupModels: []string{"*"}})
	if n := len(all.RepositoryIndex(true)); n != 8 {
		t.Errorf(`StartupModels ["*"]: %d ready, want 8`, n)
	}
	if err := all.LoadModel(" "); triton.ErrorCode(err) != codes.InvalidArgument {
		t.Errorf("LoadModel of a blank name: %v", err)
	}
	for _, s := range []string{"none", "POLL", "explicit", ""} {
		if _, err := ParseModelControlMode(s); err != nil {
			t.Errorf("ParseModelControlMode(%q): %v", s, err)
		}
	}
}
