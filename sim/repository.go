package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// Repository is the parsed model-repository description: the simulated GPUs
// and the models the simulator serves. It is read from a JSON file by
// LoadRepository or built by DemoRepository.
//
// The file format, with every field optional unless marked:
//
//	{
//	  "gpus": [                              // default: two simulated H100s
//	    {"uuid": "GPU-...", "name": "NVIDIA H100 80GB HBM3",
//	     "memory_bytes": 85899345920, "base_memory_bytes": 536870912,
//	     "power_idle_w": 70, "power_max_w": 700, "power_limit_w": 700,
//	     "overlap": 0.2}                     // see GPUSpec.Overlap
//	  ],
//	  "cpu_only": false,                     // no GPUs at all (see CPUOnly)
//	  "models": [
//	    {"name": "simple",                   // required
//	     "versions": [1],                    // default [1]
//	     "platform": "", "backend": "python",// one of them should be set
//	     "max_batch_size": 8,                // 0 = no Triton batching
//	     "inputs":  [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
//	     "outputs": [{"name": "OUTPUT0", "data_type": "INT32", "dims": [16]}],
//	     "dynamic_batching": {"preferred_batch_size": [4, 8],
//	                          "max_queue_delay_microseconds": 100,
//	                          "max_queue_size": 0,
//	                          "default_timeout_microseconds": 0,
//	                          "allow_timeout_override": false},   // absent = no dynamic batcher
//	     "instance_group": [{"count": 1, "kind": "KIND_GPU", "gpus": [0]}],
//	     "latency": {"fixed_us": 100, "per_item_us": 10, "exponent": 1,
//	                 "jitter": 0.05, "compute_input_us": 2, "compute_output_us": 1,
//	                 "reference_elements": 0},
//	     "memory_bytes": 268435456,          // device memory per GPU instance
//	     "decoupled": false,
//	     "parameters": {"key": "value"},     // reported in the config only
//	     "sequence_batching": {...},         // see SequenceBatchingSpec
//	     "llm": {...},                       // see LLMSpec
//	     "behaviour": "add_sub"},            // add_sub | identity | classifier | zeros
//	                                         //   | sequence | accumulate
//	    {"name": "pipeline", "platform": "ensemble", "max_batch_size": 8,
//	     "inputs":  [{"name": "IN", "data_type": "TYPE_FP32", "dims": [16]}],
//	     "outputs": [{"name": "OUT", "data_type": "TYPE_FP32", "dims": [16]}],
//	     "ensemble_scheduling": {"step": [
//	       {"model_name": "preprocess", "model_version": -1,
//	        "input_map": {"INPUT0": "IN"}, "output_map": {"OUTPUT0": "features"}},
//	       {"model_name": "classifier", "model_version": -1,
//	        "input_map": {"INPUT0": "features"}, "output_map": {"OUTPUT0": "OUT"}}]}}
//	  ]
//	}
//
// An ensemble (platform "ensemble" with an ensemble_scheduling section, as
// in Triton) has no backend, instances, batcher or latency of its own: a
// request to it runs its steps, each a request to the composing model
// named, queued, batched and executed by that model's own scheduler and
// instances. The maps join the composing models' inputs and outputs
// (keys) to ensemble tensors (values); the ensemble's inputs and outputs
// are ensemble tensors too. A step starts as soon as the tensors it reads
// exist; model_version -1 is the composing model's latest version, any
// other number that version (Triton reads a step without model_version as
// version 0, which no model has). To make one step slow, give its model a
// slower latency. An ensemble is checked as Triton checks it when it loads
// (at start, or by an explicit load), with Triton's messages: every step's
// model must be in the repository, every input of a composing model
// mapped, every map name an input or output that model has, every
// ensemble output written and every tensor read, the datatypes and shapes
// agree, no chain of ensembles leads back to itself.
//
// A tensor may also say "format" (inputs: "FORMAT_NCHW", "FORMAT_NHWC"),
// "reshape" (a shape reported in the config), "label_filename" and
// "labels" (the class names of an output, for the classification
// extension).
//
// Datatypes are accepted with or without the TYPE_ prefix ("INT32",
// "TYPE_INT32", "BYTES" or "TYPE_STRING"). A dims entry of -1 is a
// variable-size dimension. Instance groups follow Triton: a KIND_GPU group
// places count instances on each listed GPU (all GPUs when gpus is empty); a
// KIND_CPU group places count instances in total.
type Repository struct {
	GPUs   []GPUSpec   `json:"gpus"`
	Models []ModelSpec `json:"models"`
	// CPUOnly makes a repository without GPUs a server without any, as a
	// Triton built without CUDA: KIND_GPU instance groups are refused
	// with Triton's message and KIND_AUTO ones run on the CPU. It has no
	// effect when GPUs are listed. LoadRepositoryDir sets it.
	CPUOnly bool `json:"cpu_only,omitempty"`
}

// GPUSpec describes one simulated GPU. Empty fields get the defaults of a
// data-centre GPU (80 GiB, 70 W idle, 700 W max and limit); an empty UUID is
// derived from the GPU's index so that it is stable across runs.
type GPUSpec struct {
	UUID            string  `json:"uuid"`
	Name            string  `json:"name"`
	MemoryBytes     uint64  `json:"memory_bytes"`
	BaseMemoryBytes uint64  `json:"base_memory_bytes"`
	PowerIdleW      float64 `json:"power_idle_w"`
	PowerMaxW       float64 `json:"power_max_w"`
	PowerLimitW     float64 `json:"power_limit_w"`
	// Overlap (0..1) says how much executions running on the GPU at once,
	// of any models and instances, slow each other: with n at once each
	// takes 1 + (n−1)·(1−overlap) times as long as alone. 0 is pure time
	// slicing, 1 no slowdown at all; nil means DefaultGPUOverlap.
	Overlap *float64 `json:"overlap,omitempty"`
}

// ModelSpec describes one simulated model: what Triton's config.pbtxt would
// say, plus how long an execution takes and how outputs are computed.
type ModelSpec struct {
	Name            string               `json:"name"`
	Versions        []int64              `json:"versions"`
	Platform        string               `json:"platform"`
	Backend         string               `json:"backend"`
	MaxBatchSize    int                  `json:"max_batch_size"`
	Inputs          []TensorSpec         `json:"inputs"`
	Outputs         []TensorSpec         `json:"outputs"`
	DynamicBatching *DynamicBatchingSpec `json:"dynamic_batching,omitempty"`
	InstanceGroups  []InstanceGroupSpec  `json:"instance_group"`
	Latency         LatencySpec          `json:"latency"`
	MemoryBytes     uint64               `json:"memory_bytes"`
	Decoupled       bool                 `json:"decoupled"`
	Behaviour       string               `json:"behaviour"`
	// Parameters are the config's string parameters; the simulator only
	// reports them.
	Parameters map[string]string `json:"parameters,omitempty"`
	// SequenceBatching makes the model stateful; nil for other models.
	SequenceBatching *SequenceBatchingSpec `json:"sequence_batching,omitempty"`
	// LLM makes a decoupled model generate tokens with in-flight
	// batching instead of executing batches; nil for other models.
	LLM *LLMSpec `json:"llm,omitempty"`
	// EnsembleScheduling makes the model an ensemble (Platform
	// "ensemble"): its steps run other models of the repository, each
	// scheduled by its own batcher and instances; nil for other models.
	EnsembleScheduling *EnsembleSpec `json:"ensemble_scheduling,omitempty"`

	// Config is the model's configuration as Triton reports it, when the
	// spec was made from one (SpecFromConfig: a config.pbtxt, a load's
	// config override); nil for a spec described in JSON, whose
	// configuration is built from the spec. Its instance groups are
	// resolved when the model loads, as Triton resolves them.
	Config *pb.ModelConfig `json:"-"`
	// Source names where the spec came from (a config.pbtxt), for errors.
	Source string `json:"-"`
	// files is what auto-completion finds in the model's directory.
	files versionFiles
	// emulate makes the model emulate its backend (SpecFromConfig, for
	// the backends the simulator emulates): its parameters, response
	// parameters, errors and metrics. A spec described in JSON computes
	// by its behaviour alone, whatever its backend.
	emulate bool
}

// EnsembleSpec is Triton's ensemble_scheduling: the steps of a pipeline,
// joined by the tensors named in their maps.
type EnsembleSpec struct {
	Steps []EnsembleStepSpec `json:"step"`
}

// EnsembleStepSpec is one step of an ensemble: a composing model, and how
// its inputs and outputs map to the ensemble's tensors.
type EnsembleStepSpec struct {
	ModelName string `json:"model_name"`
	// ModelVersion is the composing model's version; -1 is its latest.
	// As in Triton, 0 (what a step without model_version says) is a
	// version number, which no model has: the ensemble does not load.
	ModelVersion int64 `json:"model_version"`
	// InputMap maps the composing model's input names to ensemble
	// tensors; OutputMap its output names to ensemble tensors.
	InputMap  map[string]string `json:"input_map"`
	OutputMap map[string]string `json:"output_map"`
}

// TensorSpec is one model input or output.
type TensorSpec struct {
	Name     string  `json:"name"`
	DataType string  `json:"data_type"`
	Dims     []int64 `json:"dims"`
	// Format is an input's data format as the config reports it
	// ("FORMAT_NCHW" or "FORMAT_NHWC"); image clients read it.
	Format string `json:"format,omitempty"`
	// Reshape is the shape the config reports the model itself uses; the
	// simulator answers in Dims.
	Reshape []int64 `json:"reshape,omitempty"`
	// LabelFilename is the output's label file as the config names it.
	LabelFilename string `json:"label_filename,omitempty"`
	// Labels are the output's class names, by index; a classification
	// answer appends them ("value:index:label").
	Labels []string `json:"labels,omitempty"`
}

// DynamicBatchingSpec turns on the dynamic batcher; its fields mean what
// Triton's dynamic_batching fields mean.
type DynamicBatchingSpec struct {
	PreferredBatchSize        []int  `json:"preferred_batch_size"`
	MaxQueueDelayMicroseconds uint64 `json:"max_queue_delay_microseconds"`
	MaxQueueSize              uint32 `json:"max_queue_size"`
	// DefaultTimeoutMicroseconds and AllowTimeoutOverride are the default
	// queue policy's: a request still queued after the timeout is rejected,
	// and with the override a request's "timeout" parameter may shorten
	// (never lengthen or set) it, as on Triton.
	DefaultTimeoutMicroseconds uint64 `json:"default_timeout_microseconds"`
	AllowTimeoutOverride       bool   `json:"allow_timeout_override"`
}

// InstanceGroupSpec is one of Triton's instance groups.
type InstanceGroupSpec struct {
	// Name is the group's name in the configuration; empty means
	// MODEL_INDEX, as Triton names it.
	Name  string `json:"name,omitempty"`
	Count int    `json:"count"`
	Kind  string `json:"kind"`
	GPUs  []int  `json:"gpus"`
}

// LatencySpec is the cost model of one execution of a batch of b items:
//
//	infer = fixed_us + per_item_us × (b × scale)^exponent
//	input = compute_input_us × b × scale, output = compute_output_us × b × scale
//
// where scale is 1, or, when reference_elements > 0, the mean number of
// elements per item of the first input divided by reference_elements (so
// that longer sequences cost more). Each part is then multiplied by a
// random factor in [1−jitter, 1+jitter]. An exponent below 1 makes larger
// batches cheaper per item, as on a GPU; 0 means 1.
type LatencySpec struct {
	FixedUS           float64 `json:"fixed_us"`
	PerItemUS         float64 `json:"per_item_us"`
	Exponent          float64 `json:"exponent"`
	Jitter            float64 `json:"jitter"`
	ComputeInputUS    float64 `json:"compute_input_us"`
	ComputeOutputUS   float64 `json:"compute_output_us"`
	ReferenceElements float64 `json:"reference_elements"`
}

// Behaviours a model can have: how its outputs are computed from its inputs.
const (
	// BehaviourAddSub is Triton's "simple" example: OUTPUT0 = INPUT0 + INPUT1,
	// OUTPUT1 = INPUT0 − INPUT1, element-wise.
	BehaviourAddSub = "add_sub"
	// BehaviourIdentity copies each input to the output at the same index.
	BehaviourIdentity = "identity"
	// BehaviourClassifier fills outputs with deterministic pseudo-random
	// scores derived from the input bytes.
	BehaviourClassifier = "classifier"
	// BehaviourZeros returns zero-filled outputs.
	BehaviourZeros = "zeros"
	// BehaviourSequence is what Triton's example sequence models compute
	// from their control inputs: OUTPUT = READY × (INPUT + START + END ×
	// CORRID), where each control counts only if the config has it.
	BehaviourSequence = "sequence"
	// BehaviourAccumulate keeps a running sum per sequence: OUTPUT is the
	// sum of the sequence's inputs so far, element-wise, from its START.
	BehaviourAccumulate = "accumulate"
	// BehaviourAccumulateSum is Triton's sequence and dyna_sequence test
	// backends: a sequence's accumulator is set to the sum of the
	// elements of its START request's INPUT and adds the sum of each later
	// one's; a request with END adds its correlation ID (as an int32) when
	// the model has END and CORRID controls. Every element of OUTPUT is
	// the accumulator.
	BehaviourAccumulateSum = "accumulate_sum"
	// BehaviourRepeat is Triton's repeat backend (decoupled): one
	// response per element of IN, OUT = that element and IDX = its index,
	// each DELAY[i] ms after the one before; the execution holds its
	// instance for WAIT ms.
	BehaviourRepeat = "repeat"
	// BehaviourSquare is Triton's square backend (decoupled): IN = n
	// gives n responses, each OUT = n.
	BehaviourSquare = "square"
)

// LoadRepository reads a repository description from a JSON file and
// checks it. Errors name the file and the offending field.
func LoadRepository(path string) (Repository, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Repository{}, fmt.Errorf("read model repository: %w", err)
	}
	var repo Repository
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&repo); err != nil {
		return Repository{}, fmt.Errorf("model repository %s: %w", path, err)
	}
	if err := repo.check(); err != nil {
		return Repository{}, fmt.Errorf("model repository %s: %w", path, err)
	}
	return repo, nil
}

// check validates the description without changing it; NewEngine fills in
// defaults afterwards.
func (r Repository) check() error {
	ngpu := len(r.GPUs)
	if ngpu == 0 && !r.CPUOnly {
		ngpu = defaultGPUCount
	}
	if len(r.Models) == 0 {
		return fmt.Errorf("models: no models; add at least one")
	}
	if err := r.checkGPULimits(); err != nil {
		return err
	}
	for i, g := range r.GPUs {
		if o := g.Overlap; o != nil && !(*o >= 0 && *o <= 1) {
			return fmt.Errorf("gpus[%d].overlap: %g is not in 0..1 (0: executions time-slice the GPU; 1: they do not slow each other)", i, *o)
		}
	}
	seen := map[string]bool{}
	for i, m := range r.Models {
		where := fmt.Sprintf("models[%d]", i)
		if m.Name == "" {
			return fmt.Errorf("%s.name: empty; every model needs a name", where)
		}
		where = fmt.Sprintf("models[%d] (%s)", i, textsafe.Quote(m.Name))
		if err := checkName(where+".name", m.Name); err != nil {
			return err
		}
		if seen[m.Name] {
			return fmt.Errorf("%s.name: duplicate model name", where)
		}
		seen[m.Name] = true
		if err := m.check(ngpu); err != nil {
			return fmt.Errorf("%s.%w", where, err)
		}
		if err := m.checkLimits(ngpu); err != nil {
			return fmt.Errorf("%s.%w", where, err)
		}
	}
	return nil
}

func (m ModelSpec) check(ngpu int) error {
	for _, v := range m.Versions {
		if v < 0 {
			return fmt.Errorf("versions: %d is negative; a version is a number from 0", v)
		}
	}
	if m.MaxBatchSize < 0 {
		return fmt.Errorf("max_batch_size: %d is negative", m.MaxBatchSize)
	}
	if len(m.Inputs) == 0 {
		return fmt.Errorf("inputs: a model needs at least one input")
	}
	if len(m.Outputs) == 0 {
		return fmt.Errorf("outputs: a model needs at least one output")
	}
	for _, group := range []struct {
		kind string
		list []TensorSpec
	}{{"inputs", m.Inputs}, {"outputs", m.Outputs}} {
		kind, list := group.kind, group.list
		names := map[string]bool{}
		for j, t := range list {
			if t.Name == "" {
				return fmt.Errorf("%s[%d].name: empty", kind, j)
			}
			if names[t.Name] {
				return fmt.Errorf("%s[%d].name: duplicate %s", kind, j, textsafe.Quote(t.Name))
			}
			names[t.Name] = true
			if _, ok := kserve.ParseDataType(t.DataType); !ok {
				return fmt.Errorf("%s[%d].data_type: unknown datatype %s (use e.g. \"FP32\" or \"TYPE_FP32\")", kind, j, textsafe.Quote(t.DataType))
			}
			for _, d := range t.Dims {
				if d < -1 || d == 0 {
					return fmt.Errorf("%s[%d].dims: %d is not a size (use a positive size, or -1 for variable)", kind, j, d)
				}
			}
		}
	}
	if db := m.DynamicBatching; db != nil {
		if m.MaxBatchSize == 0 {
			return fmt.Errorf("dynamic_batching: needs max_batch_size > 0")
		}
		for _, p := range db.PreferredBatchSize {
			if p < 1 || p > m.MaxBatchSize {
				return fmt.Errorf("dynamic_batching.preferred_batch_size: %d must be in 1..max_batch_size (%d)", p, m.MaxBatchSize)
			}
		}
	}
	for j, g := range m.InstanceGroups {
		if g.Count < 0 {
			return fmt.Errorf("instance_group[%d].count: %d is negative", j, g.Count)
		}
		switch g.Kind {
		case "", "KIND_GPU", "KIND_CPU", "KIND_AUTO", "KIND_MODEL":
		default:
			return fmt.Errorf("instance_group[%d].kind: %s is not KIND_GPU, KIND_CPU, KIND_AUTO or KIND_MODEL", j, textsafe.Quote(g.Kind))
		}
		for _, id := range g.GPUs {
			if id < 0 || id >= ngpu {
				return fmt.Errorf("instance_group[%d].gpus: GPU %d does not exist (there are %d)", j, id, ngpu)
			}
		}
	}
	l := m.Latency
	if l.FixedUS < 0 || l.PerItemUS < 0 || l.ComputeInputUS < 0 || l.ComputeOutputUS < 0 || l.ReferenceElements < 0 {
		return fmt.Errorf("latency: durations must not be negative")
	}
	if l.Exponent < 0 || l.Exponent > 4 {
		return fmt.Errorf("latency.exponent: %g must be in 0..4 (0 means 1)", l.Exponent)
	}
	if l.Jitter < 0 || l.Jitter >= 1 {
		return fmt.Errorf("latency.jitter: %g must be in [0, 1)", l.Jitter)
	}
	for j, t := range m.Inputs {
		switch t.Format {
		case "", "FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW":
		default:
			return fmt.Errorf("inputs[%d].format: %s is not FORMAT_NONE, FORMAT_NHWC or FORMAT_NCHW", j, textsafe.Quote(t.Format))
		}
	}
	switch m.Behaviour {
	case "", BehaviourIdentity, BehaviourClassifier, BehaviourZeros:
	case BehaviourAddSub:
		if len(m.Inputs) != 2 || len(m.Outputs) != 2 {
			return fmt.Errorf("behaviour: add_sub needs 2 inputs and 2 outputs")
		}
	case BehaviourSequence, BehaviourAccumulate, BehaviourAccumulateSum:
		if m.SequenceBatching == nil {
			return fmt.Errorf("behaviour: %s needs a sequence_batching section", m.Behaviour)
		}
	case BehaviourRepeat, BehaviourSquare:
		if err := checkDecoupledBehaviour(m); err != nil {
			return fmt.Errorf("behaviour: %w", err)
		}
	default:
		return fmt.Errorf("behaviour: %s is not add_sub, identity, classifier, zeros, sequence, accumulate, accumulate_sum, repeat or square", textsafe.Quote(m.Behaviour))
	}
	if sb := m.SequenceBatching; sb != nil {
		if err := sb.check(m); err != nil {
			return err
		}
	}
	if m.LLM != nil {
		if err := m.LLM.check(m); err != nil {
			return err
		}
	}
	return m.checkEnsemble()
}
