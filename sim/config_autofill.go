package sim

import (
	"slices"
	"strings"

	"github.com/tritontop/tritontop/triton/pb"
)

// Platforms, backends and model file names Triton's auto-completion knows
// (core's constants.h).
const (
	platformEnsemble     = "ensemble"
	platformTFGraphDef   = "tensorflow_graphdef"
	platformTFSavedModel = "tensorflow_savedmodel"
	platformTensorRT     = "tensorrt_plan"
	platformONNX         = "onnxruntime_onnx"
	platformLibTorch     = "pytorch_libtorch"
	platformLibTorchAlt  = "libtorch"
	platformTorchAOTI    = "torch_aoti"
	backendTensorFlow    = "tensorflow"
	backendTensorRT      = "tensorrt"
	backendONNX          = "onnxruntime"
	backendOpenVINO      = "openvino"
	backendPyTorch       = "pytorch"
	backendPython        = "python"
	fileTFGraphDef       = "model.graphdef"
	fileTFSavedModel     = "model.savedmodel"
	fileTensorRT         = "model.plan"
	fileONNX             = "model.onnx"
	fileOpenVINO         = "model.xml"
	fileLibTorch         = "model.pt"
	fileTorchAOTI        = "model.pt2"
	filePython           = "model.py"
)

// versionFiles is what auto-completion looks at in a model's directory:
// whether it has a version directory, and the names in the first one
// (the lowest, as Triton's sorted listing gives it), with directories
// marked by a trailing "/".
type versionFiles struct {
	hasVersion bool
	names      []string
}

func (f versionFiles) has(name string) bool { return slices.Contains(f.names, name) }
func (f versionFiles) hasDir(name string) bool {
	return slices.Contains(f.names, name+"/")
}

// autoComplete fills in what Triton's AutoCompleteBackendFields fills in
// before it normalizes a configuration: the name from the model's
// directory, and the platform, backend and default model file from each
// other or from the files of the first version directory. A model whose
// backend cannot be told gets Triton's error.
func autoComplete(cfg *pb.ModelConfig, dirName string, files versionFiles) error {
	if cfg.Name == "" {
		cfg.Name = dirName
	}
	if cfg.Platform == "" && (cfg.Backend == "" || cfg.Backend == backendTensorFlow) {
		switch {
		case cfg.DefaultModelFilename == fileTFSavedModel:
			cfg.Platform = platformTFSavedModel
		case cfg.DefaultModelFilename == fileTFGraphDef:
			cfg.Platform = platformTFGraphDef
		case cfg.DefaultModelFilename == "" && files.hasVersion:
			if files.hasDir(fileTFSavedModel) {
				cfg.Platform = platformTFSavedModel
			}
			if files.has(fileTFGraphDef) {
				cfg.Platform = platformTFGraphDef
			}
		}
	}
	if cfg.Platform == platformTFSavedModel || cfg.Platform == platformTFGraphDef {
		fill(&cfg.Backend, backendTensorFlow)
		if cfg.Platform == platformTFSavedModel {
			fill(&cfg.DefaultModelFilename, fileTFSavedModel)
		} else {
			fill(&cfg.DefaultModelFilename, fileTFGraphDef)
		}
		return nil
	}
	if done := autoCompleteFile(cfg, files); done {
		return nil
	}
	if cfg.Backend == "" && cfg.Platform == "" && cfg.DefaultModelFilename == "" {
		// A custom backend: the model must be named model.<backend>.
		_, backend, ok := strings.Cut(dirName, ".")
		if !ok {
			return &ConfigError{Model: dirName, Msg: "Invalid model name: Could not determine backend for model '" + dirName +
				"' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'."}
		}
		cfg.Backend = backend
		cfg.DefaultModelFilename = "model." + backend
	}
	return nil
}

// autoCompleteFile fills in, in Triton's order, the backends known by a
// platform or a model file (TensorRT, ONNX Runtime, OpenVINO, PyTorch,
// Python), and reports whether the backend was one of them.
func autoCompleteFile(cfg *pb.ModelConfig, files versionFiles) bool {
	unnamed := func() bool { return cfg.Platform == "" && cfg.DefaultModelFilename == "" && files.hasVersion }
	// TensorRT
	if cfg.Backend == "" && (cfg.Platform == platformTensorRT || cfg.DefaultModelFilename == fileTensorRT ||
		unnamed() && files.has(fileTensorRT)) {
		cfg.Backend = backendTensorRT
	}
	if cfg.Backend == backendTensorRT {
		fill(&cfg.Platform, platformTensorRT)
		fill(&cfg.DefaultModelFilename, fileTensorRT)
		return true
	}
	// ONNX Runtime: a model.onnx file or directory.
	if cfg.Backend == "" && (cfg.Platform == platformONNX || cfg.DefaultModelFilename == fileONNX ||
		unnamed() && (files.has(fileONNX) || files.hasDir(fileONNX))) {
		cfg.Backend = backendONNX
	}
	if cfg.Backend == backendONNX {
		fill(&cfg.Platform, platformONNX)
		fill(&cfg.DefaultModelFilename, fileONNX)
		return true
	}
	// OpenVINO
	if cfg.Backend == "" && (cfg.DefaultModelFilename == fileOpenVINO || unnamed() && files.has(fileOpenVINO)) {
		cfg.Backend = backendOpenVINO
	}
	if cfg.Backend == backendOpenVINO {
		fill(&cfg.DefaultModelFilename, fileOpenVINO)
		return true
	}
	// PyTorch: LibTorch unless AOTI is named.
	if cfg.Backend == "" {
		switch {
		case cfg.Platform == platformLibTorch || cfg.Platform == platformLibTorchAlt || cfg.DefaultModelFilename == fileLibTorch,
			cfg.Platform == platformTorchAOTI || cfg.DefaultModelFilename == fileTorchAOTI:
			cfg.Backend = backendPyTorch
		case unnamed() && files.has(fileLibTorch):
			cfg.Backend, cfg.Platform = backendPyTorch, platformLibTorch
		case unnamed() && files.has(fileTorchAOTI):
			cfg.Backend, cfg.Platform = backendPyTorch, platformTorchAOTI
		}
	}
	if cfg.Backend == backendPyTorch {
		switch cfg.Platform {
		case "":
			cfg.Platform = platformLibTorch
			fill(&cfg.DefaultModelFilename, fileLibTorch)
		case platformTorchAOTI:
			fill(&cfg.DefaultModelFilename, fileTorchAOTI)
		}
		return true
	}
	// Python
	if cfg.Backend == "" && (cfg.DefaultModelFilename == filePython || unnamed() && files.has(filePython)) {
		cfg.Backend = backendPython
	}
	if cfg.Backend == backendPython {
		fill(&cfg.DefaultModelFilename, filePython)
		return true
	}
	return false
}

func fill(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

// normalizeConfig fills in what Triton's NormalizeModelConfig fills in:
// the version policy (latest 1), the dynamic batcher's and the oldest
// sequence strategy's preferred batch size (max_batch_size), the
// sequence idle time (1 s), and pinned memory for a model that is not an
// ensemble.
func normalizeConfig(cfg *pb.ModelConfig) {
	if cfg.VersionPolicy == nil {
		cfg.VersionPolicy = &pb.ModelVersionPolicy{PolicyChoice: &pb.ModelVersionPolicy_Latest_{
			Latest: &pb.ModelVersionPolicy_Latest{NumVersions: 1}}}
	}
	if db := cfg.GetDynamicBatching(); db != nil && len(db.PreferredBatchSize) == 0 && cfg.MaxBatchSize > 0 {
		db.PreferredBatchSize = []int32{cfg.MaxBatchSize}
	}
	if sb := cfg.GetSequenceBatching(); sb != nil {
		if sb.MaxSequenceIdleMicroseconds == 0 {
			sb.MaxSequenceIdleMicroseconds = sequenceIdleDefaultUS
		}
		if o := sb.GetOldest(); o != nil && len(o.PreferredBatchSize) == 0 && cfg.MaxBatchSize > 0 {
			o.PreferredBatchSize = []int32{cfg.MaxBatchSize}
		}
	}
	if cfg.GetEnsembleScheduling() == nil {
		if cfg.Optimization == nil {
			cfg.Optimization = &pb.ModelOptimizationPolicy{}
		}
		if cfg.Optimization.InputPinnedMemory == nil {
			cfg.Optimization.InputPinnedMemory = &pb.ModelOptimizationPolicy_PinnedMemoryBuffer{Enable: true}
		}
		if cfg.Optimization.OutputPinnedMemory == nil {
			cfg.Optimization.OutputPinnedMemory = &pb.ModelOptimizationPolicy_PinnedMemoryBuffer{Enable: true}
		}
	}
}
