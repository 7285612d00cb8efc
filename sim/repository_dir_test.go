package sim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// tritonModels is a copy of the model repository the real Triton of the
// project's tests serves (../shared/triton/models: Triton 2.73.0dev, CPU
// build), so that these tests need no ../shared. triton_configs holds the
// ModelConfig that server answered over gRPC for each of its models.
const (
	tritonModels  = "testdata/triton_models"
	tritonConfigs = "testdata/triton_configs"
)

// tritonConfig reads the configuration the real server answered for a
// model (a ModelConfigResponse in protobuf text).
func tritonConfig(t *testing.T, file string) *pb.ModelConfig {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tritonConfigs, file))
	if err != nil {
		t.Fatal(err)
	}
	resp := &pb.ModelConfigResponse{}
	if err := prototext.Unmarshal(data, resp); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return resp.Config
}

// startTritonModels serves the copy of the real server's repository.
func startTritonModels(t *testing.T, opts EngineOptions) *Server {
	t.Helper()
	repo, err := LoadRepositoryDir(tritonModels)
	if err != nil {
		t.Fatal(err)
	}
	return startSim(t, repo, opts)
}

// TestRepositoryDirConfigsAsTriton: every model of the real server's
// repository reports over gRPC the configuration the real server reports
// for it (auto-completed: instance group names and kinds, preferred batch
// sizes, pinned memory, the sequence idle default), and its models run on
// CPU instances. The ensemble is mapped, and served.
func TestRepositoryDirConfigsAsTriton(t *testing.T) {
	t.Parallel()
	s := startTritonModels(t, EngineOptions{})
	c, _ := rawGRPC(t, s)
	for _, m := range []string{"classifier", "identity", "identity_int32", "pipeline", "preprocess", "repeat_int32",
		"simple_dyna_sequence", "simple_sequence", "square_int32"} {
		got, err := c.ModelConfig(ctxT(t), &pb.ModelConfigRequest{Name: m})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if want := tritonConfig(t, m+".pbtxt"); !proto.Equal(got.Config, want) {
			t.Errorf("%s: config\n%v\nwant (Triton 2.73)\n%v", m, prototext.Format(got.Config), prototext.Format(want))
		}
	}
	e := s.Engine()
	e.mu.RLock()
	pipe := e.models["pipeline"].spec
	e.mu.RUnlock()
	steps := pipe.EnsembleScheduling.Steps
	if len(steps) != 2 || steps[0].ModelName != "preprocess" || steps[1].OutputMap["OUTPUT0"] != "OUT" || steps[0].ModelVersion != -1 {
		t.Errorf("pipeline's ensemble_scheduling mapped to %+v", steps)
	}
	if idx := indexState(t, c, "pipeline"); len(idx) != 1 || idx[0] != "1/READY/" {
		t.Errorf("pipeline in the index: %v; want 1/READY/", idx)
	}
}

// writeModel writes a model directory: its config.pbtxt (none when cfg is
// "") and version directories.
func writeModel(t *testing.T, repo, name, cfg string, versions ...string) {
	t.Helper()
	dir := filepath.Join(repo, name)
	for _, v := range append([]string{""}, versions...) {
		if err := os.MkdirAll(filepath.Join(dir, v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if cfg != "" {
		if err := os.WriteFile(filepath.Join(dir, modelConfigFile), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const identityIO = `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]`

// TestRepositoryDirRefusesBadModels: a repository with a model Triton
// cannot load is refused, as Triton (with its default --exit-on-error)
// refuses to start, with one line naming the model's file and what is
// wrong in the words of the real server's start log (Triton 2.73).
func TestRepositoryDirRefusesBadModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cfg string
		versions  []string
		want      []string
	}{
		{"unknownfield", `name: "unknownfield" backend: "identity" bogus: 1`, []string{"1"},
			[]string{"unknownfield/config.pbtxt", "failed to read text proto from", "bogus"}},
		{"badconfig", `name: "badconfig" backend: "identity" max_batch_size: x`, []string{"1"},
			[]string{"badconfig/config.pbtxt", "failed to read text proto from"}},
		{"wrongname", `name: "identity" backend: "identity" ` + identityIO, []string{"1"},
			[]string{"wrongname/config.pbtxt", "unexpected directory name 'wrongname' for model 'identity', directory name must equal model name"}},
		{"noversion", `name: "noversion" backend: "identity" ` + identityIO, nil,
			[]string{"noversion/config.pbtxt", "at least one version must be available under the version policy of model 'noversion'"}},
		{"noconfig", "", []string{"1"},
			[]string{"noconfig", "no config.pbtxt", "Invalid model name: Could not determine backend for model 'noconfig' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'."}},
		{"badensemble", `name: "badensemble" platform: "ensemble" ` + identityIO + ` instance_group [ { kind: KIND_CPU } ]
			ensemble_scheduling { step [ { model_name: "identity" model_version: -1 input_map { key: "INPUT0" value: "INPUT0" } output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }`, []string{"1"},
			[]string{"badensemble/config.pbtxt", "instance group should not be specified for ensemble 'badensemble'"}},
		{"badbackend", `name: "badbackend" backend: "identity" max_batch_size: 8 input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ] output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]`, []string{"1"},
			[]string{"badbackend/config.pbtxt", "expected input name to follow INPUT<index> pattern, got 'X'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			writeModel(t, repo, "identity", `name: "identity" backend: "identity" `+identityIO, "1")
			writeModel(t, repo, tc.name, tc.cfg, tc.versions...)
			_, err := LoadRepositoryDir(repo)
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line", msg)
			}
		})
	}
	if _, err := LoadRepositoryDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no model directories") {
		t.Errorf("empty repository: %v", err)
	}
}

// TestRepositoryDirGPUGroupRefused: on a server without GPUs a KIND_GPU
// instance group is refused with the real server's message; with
// simulated GPUs it runs on them.
func TestRepositoryDirGPUGroupRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeModel(t, dir, "g", `name: "g" backend: "identity" instance_group [ { kind: KIND_GPU } ] `+identityIO, "1")
	repo, err := LoadRepositoryDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewEngine(repo, EngineOptions{})
	want := "instance group g_0 of model g has kind KIND_GPU but server does not support GPUs"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(dir, "g", modelConfigFile)) {
		t.Fatalf("NewEngine: %v; want %q naming the file", err, want)
	}
	repo.GPUs = make([]GPUSpec, 2)
	e := engNew(t, repo, EngineOptions{})
	if g := engConfig(t, e, "g").InstanceGroup[0]; g.Kind != pb.ModelInstanceGroup_KIND_GPU || !slices.Equal(g.Gpus, []int32{0, 1}) {
		t.Errorf("with two GPUs: %v", g)
	}
}

// TestRepositoryDirVersions: the version directories a policy serves, as
// Triton reads them (leading zeros and non-numbers are not versions).
func TestRepositoryDirVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		want   []int64
	}{
		{"", []int64{3}},
		{"version_policy { latest { num_versions: 2 } }", []int64{2, 3}},
		{"version_policy { all { } }", []int64{0, 1, 2, 3}},
		{"version_policy { specific { versions: [ 1, 3, 7 ] } }", []int64{1, 3}},
	} {
		dir := t.TempDir()
		writeModel(t, dir, "m", `name: "m" backend: "identity" `+identityIO+" "+tc.policy, "0", "1", "2", "3", "abc", "05", "warmup")
		repo, err := LoadRepositoryDir(dir)
		if err != nil {
			t.Fatalf("%q: %v", tc.policy, err)
		}
		if got := repo.Models[0].Versions; !slices.Equal(got, tc.want) {
			t.Errorf("%q: versions %v; want %v", tc.policy, got, tc.want)
		}
	}
}

// TestAutoCompleteBackend: a configuration that names no backend gets it
// from its platform or its model file, as Triton's auto-completion does.
func TestAutoCompleteBackend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg                        *pb.ModelConfig
		files                      versionFiles
		backend, platform, defFile string
	}{
		{&pb.ModelConfig{Platform: platformONNX}, versionFiles{}, backendONNX, platformONNX, fileONNX},
		{&pb.ModelConfig{}, versionFiles{hasVersion: true, names: []string{"model.plan"}}, backendTensorRT, platformTensorRT, fileTensorRT},
		{&pb.ModelConfig{}, versionFiles{hasVersion: true, names: []string{"model.savedmodel/"}}, backendTensorFlow, platformTFSavedModel, fileTFSavedModel},
		{&pb.ModelConfig{}, versionFiles{hasVersion: true, names: []string{"model.pt"}}, backendPyTorch, platformLibTorch, ""},
		{&pb.ModelConfig{Backend: backendPyTorch}, versionFiles{}, backendPyTorch, platformLibTorch, fileLibTorch},
		{&pb.ModelConfig{}, versionFiles{hasVersion: true, names: []string{"model.py"}}, backendPython, "", filePython},
		{&pb.ModelConfig{Backend: backendIdentity}, versionFiles{}, backendIdentity, "", ""},
	} {
		c := proto.Clone(tc.cfg).(*pb.ModelConfig)
		if err := autoComplete(c, "m", tc.files); err != nil {
			t.Fatalf("%v: %v", tc.cfg, err)
		}
		if c.Name != "m" || c.Backend != tc.backend || c.Platform != tc.platform || c.DefaultModelFilename != tc.defFile {
			t.Errorf("%v %v: got %q %q %q; want %q %q %q", tc.cfg, tc.files, c.Backend, c.Platform, c.DefaultModelFilename, tc.backend, tc.platform, tc.defFile)
		}
	}
	c := &pb.ModelConfig{}
	if err := autoComplete(c, "m.square", versionFiles{}); err != nil || c.Backend != "square" || c.DefaultModelFilename != "model.square" {
		t.Errorf("model.<backend> name: %v %q %q", err, c.Backend, c.DefaultModelFilename)
	}
}

// TestOpenRepository: a built-in set by name, a directory, a JSON file, or
// a one-line error naming what was given.
func TestOpenRepository(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg   string
		model string
	}{{"", "resnet50"}, {BuiltinExamples, "densenet_onnx"}, {tritonModels, "repeat_int32"}, {"testdata/repository.json", ""}} {
		repo, err := OpenRepository(tc.arg)
		if err != nil {
			t.Fatalf("%q: %v", tc.arg, err)
		}
		if tc.model != "" && !slices.ContainsFunc(repo.Models, func(m ModelSpec) bool { return m.Name == tc.model }) {
			t.Errorf("%q: no model %s", tc.arg, tc.model)
		}
	}
	_, err := OpenRepository("testdata/nosuch")
	if err == nil || !strings.Contains(err.Error(), "testdata/nosuch") || !strings.Contains(err.Error(), `"examples"`) {
		t.Errorf("missing repository: %v", err)
	}
}
