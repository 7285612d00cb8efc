package sim

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

func TestLoadRepositoryExample(t *testing.T) {
	repo, err := LoadRepository("testdata/repository.json")
	if err != nil {
		t.Fatalf("LoadRepository: %v", err)
	}
	e := engNew(t, repo, EngineOptions{})
	g := e.Metrics().GPUs
	if len(g) != 1 || g[0].Name != "NVIDIA A100-SXM4-40GB" || g[0].MemoryUsed != 512<<20+2*2*(2<<30) {
		t.Errorf("GPUs %+v", g)
	}
	if idx := e.RepositoryIndex(true); len(idx) != 3 {
		t.Errorf("index has %d ready versions, want 3 (add_sub 1, detector 1 and 2)", len(idx))
	}
	md, err := e.ModelMetadata("detector", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Versions) != 2 || md.Inputs[0].Datatype != "FP16" {
		t.Errorf("detector metadata %v", md)
	}
	req := &pb.ModelInferRequest{
		ModelName: "add_sub",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 4}},
			{Name: "INPUT1", Datatype: "FP32", Shape: []int64{1, 4}},
		},
		RawInputContents: [][]byte{triton.PutFloat32s([]float32{1, 2, 3, 4}), triton.PutFloat32s([]float32{0.5, 0.5, 0.5, 0.5})},
	}
	resp, err := engInfer(t, e, req)
	if err != nil {
		t.Fatal(err)
	}
	sum := triton.Float32s(resp.RawOutputContents[0])
	if math.Abs(float64(sum[3]-4.5)) > 1e-6 {
		t.Errorf("FP32 add_sub sum = %v", sum)
	}
	det := &pb.ModelInferRequest{
		ModelName:        "detector",
		ModelVersion:     "2",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "images", Datatype: "FP16", Shape: []int64{1, 3, 640, 640}}},
		RawInputContents: [][]byte{make([]byte, 3*640*640*2)},
	}
	resp, err = engInfer(t, e, det)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ModelVersion != "2" || len(resp.Outputs[0].Shape) != 3 || len(resp.RawOutputContents[0]) != 6*4 {
		t.Errorf("detector response %v, %d bytes", resp.Outputs[0], len(resp.RawOutputContents[0]))
	}
	if _, err := e.ModelStatistics("detector", "2"); err != nil {
		t.Errorf("stats of version 2: %v", err)
	}
}

func TestLoadRepositoryErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body, want string
	}{
		{"syntax", `{"models": [`, "unexpected EOF"},
		{"unknown field", `{"models": [{"name": "m", "max_batch": 4}]}`, `unknown field "max_batch"`},
		{"no models", `{"models": []}`, "models: no models"},
		{"no name", `{"models": [{"inputs": []}]}`, "models[0].name: empty"},
		{"bad datatype", `{"models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FLOAT", "dims": [1]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}]}]}`,
			`models[0] ("m").inputs[0].data_type: unknown datatype "FLOAT"`},
		{"bad dims", `{"models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FP32", "dims": [0]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}]}]}`,
			`inputs[0].dims: 0 is not a size`},
		{"batching without batch", `{"models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FP32", "dims": [1]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}], "dynamic_batching": {}}]}`,
			"dynamic_batching: needs max_batch_size > 0"},
		{"missing gpu", `{"models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FP32", "dims": [1]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}], "instance_group": [{"kind": "KIND_GPU", "gpus": [5]}]}]}`,
			"instance_group[0].gpus: GPU 5 does not exist (there are 2)"},
		{"bad behaviour", `{"models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FP32", "dims": [1]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}], "behaviour": "magic"}]}`,
			`behaviour: "magic" is not add_sub`},
		{"bad overlap", `{"gpus": [{}, {"overlap": 1.5}], "models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FP32", "dims": [1]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}]}]}`,
			"gpus[1].overlap: 1.5 is not in 0..1"},
		{"duplicate", `{"models": [{"name": "m", "inputs": [{"name": "x", "data_type": "FP32", "dims": [1]}], "outputs": [{"name": "y", "data_type": "FP32", "dims": [1]}]}, {"name": "m"}]}`,
			"duplicate model name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadRepository(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to name %s and say %q", err, path, tt.want)
			}
		})
	}
	if _, err := LoadRepository(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

func TestDemoRepositoryIsValid(t *testing.T) {
	if err := DemoRepository().check(); err != nil {
		t.Fatalf("demo repository: %v", err)
	}
	if _, err := NewEngine(Repository{}, EngineOptions{}); err == nil {
		t.Errorf("NewEngine accepted an empty repository")
	}
}
