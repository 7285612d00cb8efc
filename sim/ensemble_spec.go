package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/tritontop/tritontop/triton/pb"
)

// EnsemblePlatform is the platform of an ensemble model, as in Triton.
const EnsemblePlatform = "ensemble"

// MaxEnsembleSteps bounds an ensemble's steps: each is a request to its
// composing model for every request to the ensemble.
const MaxEnsembleSteps = 256

// isEnsemble tells a model the ensemble scheduler runs: one whose platform is
// "ensemble" or which has an ensemble_scheduling section (a model with only
// one of the two does not load, with Triton's message).
func (m ModelSpec) isEnsemble() bool {
	return m.Platform == EnsemblePlatform || m.EnsembleScheduling != nil
}

// checkEnsemble checks what the description itself must get right for an
// ensemble: Triton's config has one scheduler (dynamic_batching,
// sequence_batching and ensemble_scheduling are one protobuf oneof), and the
// names in the maps are bounded. What Triton checks when it loads the
// ensemble (its graph, its composing models) is checked at load, with
// Triton's messages (ensemble_validate.go).
func (m ModelSpec) checkEnsemble() error {
	es := m.EnsembleScheduling
	if es == nil {
		return nil
	}
	switch {
	case m.DynamicBatching != nil:
		return fmt.Errorf("ensemble_scheduling: a model has one scheduler; remove dynamic_batching")
	case m.SequenceBatching != nil:
		return fmt.Errorf("ensemble_scheduling: a model has one scheduler; remove sequence_batching")
	case m.LLM != nil:
		return fmt.Errorf("ensemble_scheduling: an ensemble runs its steps, not an LLM; remove llm")
	case m.Decoupled:
		return fmt.Errorf("decoupled: the simulator's ensembles are not decoupled; remove it")
	case len(es.Steps) > MaxEnsembleSteps:
		return fmt.Errorf("ensemble_scheduling.step: %d steps, over the limit of %d", len(es.Steps), MaxEnsembleSteps)
	}
	for i, st := range es.Steps {
		where := fmt.Sprintf("ensemble_scheduling.step[%d]", i)
		if err := checkTensorName(where+".model_name", st.ModelName); err != nil {
			return err
		}
		for _, mp := range []struct {
			field string
			m     map[string]string
		}{{"input_map", st.InputMap}, {"output_map", st.OutputMap}} {
			for k, v := range mp.m {
				if err := checkTensorName(where+"."+mp.field, k); err != nil {
					return err
				}
				if err := checkTensorName(where+"."+mp.field+"["+strconv.Quote(k)+"]", v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ensembleInfo is an ensemble's steps with their tensors as indexes, for
// the requests that run them. It is built from any spec; a spec Triton
// would refuse never loads, so never runs.
type ensembleInfo struct {
	// tensors names the ensemble tensors: the ensemble's inputs first, in
	// config order, then the others as the maps name them.
	tensors []string
	// outputs is the tensor of each ensemble output, in config order.
	outputs []int
	steps   []ensembleStep
}

// ensembleStep is one step: its composing model and the tensors it reads
// and writes.
type ensembleStep struct {
	name  string // the composing model's name
	model *model // nil when the repository has none of that name
	// version is the step requests' model_version: "" (the latest) for
	// -1.
	version string
	inputs  []stepTensor // by composing input name
	outputs []stepTensor // by composing output name
	// wanted are the outputs a step's request asks for: those the output
	// map names, as Triton's ensemble scheduler asks for them.
	wanted []*pb.ModelInferRequest_InferRequestedOutputTensor
}

// stepTensor joins a composing model's input or output to an ensemble
// tensor.
type stepTensor struct {
	name   string
	tensor int
	// dims are the composing input's config dims (inputs only; nil when
	// the model has no such input).
	dims []int64
}

// newEnsembleInfo indexes spec's steps; models are the repository's.
func newEnsembleInfo(spec ModelSpec, models map[string]*model) *ensembleInfo {
	info := &ensembleInfo{}
	ids := map[string]int{}
	id := func(name string) int {
		i, ok := ids[name]
		if !ok {
			i = len(info.tensors)
			ids[name] = i
			info.tensors = append(info.tensors, name)
		}
		return i
	}
	for _, t := range spec.Inputs {
		id(t.Name)
	}
	for _, t := range spec.Outputs {
		info.outputs = append(info.outputs, id(t.Name))
	}
	if spec.EnsembleScheduling == nil {
		return info
	}
	for _, st := range spec.EnsembleScheduling.Steps {
		s := ensembleStep{name: st.ModelName, model: models[st.ModelName]}
		if st.ModelVersion != -1 {
			s.version = strconv.FormatInt(st.ModelVersion, 10)
		}
		for _, k := range slices.Sorted(maps.Keys(st.InputMap)) {
			in := stepTensor{name: k, tensor: id(st.InputMap[k])}
			if s.model != nil {
				if j, ok := s.model.inputIdx[k]; ok {
					in.dims = s.model.inputs[j].dims
				}
			}
			s.inputs = append(s.inputs, in)
		}
		for _, k := range slices.Sorted(maps.Keys(st.OutputMap)) {
			s.outputs = append(s.outputs, stepTensor{name: k, tensor: id(st.OutputMap[k])})
			s.wanted = append(s.wanted, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: k})
		}
		info.steps = append(info.steps, s)
	}
	return info
}

// needed says which steps a request must run to produce the ensemble
// outputs it asks for (outputs: indexes into the ensemble's outputs, all of
// them when every output is asked for); nil means every step. Triton's
// ensemble scheduler prunes the steps no requested output depends on.
func (info *ensembleInfo) needed(outputs []int) []bool {
	if len(outputs) == len(info.outputs) {
		return nil
	}
	want := make([]bool, len(info.tensors))
	for _, j := range outputs {
		want[info.outputs[j]] = true
	}
	need := make([]bool, len(info.steps))
	for changed := true; changed; {
		changed = false
		for i, s := range info.steps {
			if need[i] || !slices.ContainsFunc(s.outputs, func(o stepTensor) bool { return want[o.tensor] }) {
				continue
			}
			need[i], changed = true, true
			for _, in := range s.inputs {
				want[in.tensor] = true
			}
		}
	}
	return need
}

// ensembleProto is the ensemble_scheduling section of the model config.
func ensembleProto(es *EnsembleSpec) *pb.ModelEnsembling {
	out := &pb.ModelEnsembling{}
	for _, st := range es.Steps {
		out.Step = append(out.Step, &pb.ModelEnsembling_Step{
			ModelName:    st.ModelName,
			ModelVersion: st.ModelVersion,
			InputMap:     maps.Clone(st.InputMap),
			OutputMap:    maps.Clone(st.OutputMap),
		})
	}
	return out
}
