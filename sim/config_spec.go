package sim

import (
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// SpecFromConfig maps a model configuration (Triton's ModelConfig, as a
// config.pbtxt or a load's config override gives it) to the spec the
// simulator serves, after Triton's auto-completion and normalization
// (version policy, preferred batch sizes, sequence idle time, pinned
// memory) and its checks, in its words (a *ConfigError). The spec keeps
// the normalized configuration (ModelSpec.Config), which the simulator
// reports; its versions are left to the caller. A model named in a
// directory is named by it: an empty name is an error here.
//
// The backend decides how the model computes and how long it takes:
// identity, repeat, square, sequence and dyna_sequence are emulated (see
// the Behaviour constants; their delay parameters count); any other
// backend gets BehaviourClassifier and a small CPU cost. An ensemble
// (platform "ensemble") maps its ensemble_scheduling, checked as Triton
// checks it while it reads the configuration (its steps against its
// composing models are checked when it loads). A step without
// model_version asks for version 0, as on Triton (the proto's default):
// the ensemble loads only if its composing model has a version 0.
func SpecFromConfig(cfg *pb.ModelConfig) (ModelSpec, error) {
	c := proto.Clone(cfg).(*pb.ModelConfig)
	if err := autoComplete(c, c.Name, versionFiles{}); err != nil {
		return ModelSpec{}, err
	}
	return specFromCompleted(c, "")
}

// specFromCompleted normalizes, checks and maps an auto-completed
// configuration; c becomes the spec's. A model read from the directory
// dirName must have its name.
func specFromCompleted(c *pb.ModelConfig, dirName string) (ModelSpec, error) {
	normalizeConfig(c)
	if err := validateConfig(c); err != nil {
		return ModelSpec{}, err
	}
	if dirName != "" && c.Name != dirName {
		return ModelSpec{}, pollError(dirName, "unexpected directory name '%s' for model '%s', directory name must equal model name", dirName, c.Name)
	}
	if c.GetEnsembleScheduling() == nil {
		// Triton creates the model (the backend checks its configuration
		// as it initializes) before ValidateModelIOConfig.
		if err := validateBackendConfig(c); err != nil {
			return ModelSpec{}, err
		}
		if err := validateIO(c); err != nil {
			return ModelSpec{}, err
		}
	}
	spec := ModelSpec{
		Name:             c.Name,
		Platform:         c.Platform,
		Backend:          c.Backend,
		MaxBatchSize:     int(c.MaxBatchSize),
		Inputs:           inputSpecs(c.Input),
		Outputs:          outputSpecs(c.Output),
		DynamicBatching:  dynamicBatchingSpec(c.GetDynamicBatching()),
		SequenceBatching: sequenceBatchingSpec(c.GetSequenceBatching()),
		InstanceGroups:   instanceGroupSpecs(c),
		Decoupled:        c.GetModelTransactionPolicy().GetDecoupled(),
		Config:           c,
		emulate:          isEmulatedBackend(c.Backend),
	}
	for k, v := range c.Parameters {
		if spec.Parameters == nil {
			spec.Parameters = map[string]string{}
		}
		spec.Parameters[k] = v.GetStringValue()
	}
	if e := c.GetEnsembleScheduling(); e != nil {
		// Triton checks an ensemble's scheduling as it reads the
		// configuration: what it refuses never loads.
		spec.EnsembleScheduling = ensembleSpec(e)
		spec.InstanceGroups = nil
		if len(c.InstanceGroup) > 0 {
			spec.InstanceGroups = instanceGroupSpecs(c)
		}
		if msg := ensembleConfigError(spec); msg != "" {
			return ModelSpec{}, pollError(c.Name, "%s", composed(msg))
		}
		// Triton's ValidateEnsembleConfig sets whether the ensemble is
		// decoupled (it is not: the simulator's composing models are
		// not), so its configuration always has the section.
		if c.ModelTransactionPolicy == nil {
			c.ModelTransactionPolicy = &pb.ModelTransactionPolicy{}
		}
		return spec, nil
	}
	spec.Behaviour, spec.Latency = backendModel(c.Backend)
	if err := spec.check(MaxGPUs); err != nil {
		// What Triton accepts and the simulator cannot serve.
		return ModelSpec{}, &ConfigError{Model: c.Name, Load: true, Code: codes.Unimplemented,
			Msg: "the simulator cannot serve this configuration: " + err.Error()}
	}
	return spec, nil
}

// backendModel is how the simulator computes a backend's outputs and how
// long an execution takes on a CPU instance before the delays its
// parameters and inputs ask for. The costs are about those the real
// server reported (Triton 2.73, CPU build): the identity backend's
// compute_input about 3 µs and compute_infer about 30 µs for small FP32
// requests, the sequence backends' compute_infer about 20 µs, the repeat
// backend's about 80 µs over its WAIT (perf_analyzer, WAIT 0, 2 streams).
func backendModel(backend string) (string, LatencySpec) {
	switch backend {
	case backendIdentity:
		return BehaviourIdentity, LatencySpec{FixedUS: 30, PerItemUS: 1, ComputeInputUS: 3, Jitter: 0.05}
	case backendRepeat:
		return BehaviourRepeat, LatencySpec{FixedUS: 80, Jitter: 0.05}
	case backendSquare:
		return BehaviourSquare, LatencySpec{}
	case backendSequence, backendDynaSequence:
		return BehaviourAccumulateSum, LatencySpec{FixedUS: 20, Jitter: 0.05}
	}
	return BehaviourClassifier, LatencySpec{FixedUS: 100, PerItemUS: 10, Jitter: 0.05}
}

func inputSpecs(ins []*pb.ModelInput) []TensorSpec {
	out := make([]TensorSpec, len(ins))
	for i, in := range ins {
		t := TensorSpec{Name: in.Name, DataType: in.DataType.String(), Dims: slices.Clone(in.Dims), Reshape: reshapeOf(in.Reshape)}
		if in.Format != pb.ModelInput_FORMAT_NONE {
			t.Format = in.Format.String()
		}
		out[i] = t
	}
	return out
}

func outputSpecs(outs []*pb.ModelOutput) []TensorSpec {
	specs := make([]TensorSpec, len(outs))
	for i, o := range outs {
		specs[i] = TensorSpec{Name: o.Name, DataType: o.DataType.String(), Dims: slices.Clone(o.Dims),
			Reshape: reshapeOf(o.Reshape), LabelFilename: o.LabelFilename}
	}
	return specs
}

func reshapeOf(r *pb.ModelTensorReshape) []int64 {
	if r == nil {
		return nil
	}
	return append([]int64{}, r.Shape...)
}

func dynamicBatchingSpec(db *pb.ModelDynamicBatching) *DynamicBatchingSpec {
	if db == nil {
		return nil
	}
	spec := &DynamicBatchingSpec{MaxQueueDelayMicroseconds: db.MaxQueueDelayMicroseconds}
	for _, p := range db.PreferredBatchSize {
		spec.PreferredBatchSize = append(spec.PreferredBatchSize, int(p))
	}
	if q := db.DefaultQueuePolicy; q != nil {
		spec.MaxQueueSize = q.MaxQueueSize
		spec.DefaultTimeoutMicroseconds = q.DefaultTimeoutMicroseconds
		spec.AllowTimeoutOverride = q.AllowTimeoutOverride
	}
	return spec
}

func sequenceBatchingSpec(sb *pb.ModelSequenceBatching) *SequenceBatchingSpec {
	if sb == nil {
		return nil
	}
	spec := &SequenceBatchingSpec{MaxSequenceIdleMicroseconds: sb.MaxSequenceIdleMicroseconds}
	switch st := sb.StrategyChoice.(type) {
	case *pb.ModelSequenceBatching_Direct:
		spec.Direct = &SequenceDirectSpec{}
	case *pb.ModelSequenceBatching_Oldest:
		o := &SequenceOldestSpec{MaxCandidateSequences: int(st.Oldest.MaxCandidateSequences),
			MaxQueueDelayMicroseconds: st.Oldest.MaxQueueDelayMicroseconds}
		for _, p := range st.Oldest.PreferredBatchSize {
			o.PreferredBatchSize = append(o.PreferredBatchSize, int(p))
		}
		spec.Oldest = o
	}
	for _, ci := range sb.ControlInput {
		in := ControlInputSpec{Name: ci.Name}
		for _, c := range ci.Control {
			cs := ControlSpec{Kind: c.Kind.String(), Int32FalseTrue: slices.Clone(c.Int32FalseTrue),
				FP32FalseTrue: slices.Clone(c.Fp32FalseTrue), BoolFalseTrue: slices.Clone(c.BoolFalseTrue)}
			if c.Kind == pb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID {
				cs.DataType = c.DataType.String()
			}
			in.Control = append(in.Control, cs)
		}
		spec.ControlInputs = append(spec.ControlInputs, in)
	}
	return spec
}

// instanceGroupSpecs are the configuration's instance groups; a
// configuration without any gets Triton's one group, named after the
// model, of one instance where the server has GPUs or on the CPU.
func instanceGroupSpecs(c *pb.ModelConfig) []InstanceGroupSpec {
	if len(c.InstanceGroup) == 0 {
		return []InstanceGroupSpec{{Name: c.Name, Kind: "KIND_AUTO"}}
	}
	out := make([]InstanceGroupSpec, len(c.InstanceGroup))
	for i, g := range c.InstanceGroup {
		gs := InstanceGroupSpec{Name: g.Name, Count: int(g.Count), Kind: g.Kind.String()}
		for _, id := range g.Gpus {
			gs.GPUs = append(gs.GPUs, int(id))
		}
		out[i] = gs
	}
	return out
}

func ensembleSpec(e *pb.ModelEnsembling) *EnsembleSpec {
	spec := &EnsembleSpec{}
	for _, st := range e.Step {
		spec.Steps = append(spec.Steps, EnsembleStepSpec{ModelName: st.ModelName, ModelVersion: st.ModelVersion,
			InputMap: cloneMap(st.InputMap), OutputMap: cloneMap(st.OutputMap)})
	}
	return spec
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// isEmulatedBackend reports whether the simulator emulates the backend.
func isEmulatedBackend(backend string) bool {
	switch backend {
	case backendIdentity, backendRepeat, backendSquare, backendSequence, backendDynaSequence:
		return true
	}
	return false
}
