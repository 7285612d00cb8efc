package sim

import (
	"fmt"
	"slices"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// SequenceBatchingSpec makes a model stateful: Triton's sequence_batching
// section, with the same field names. Requests carry a correlation ID
// (the "sequence_id" parameter, a number or a string) and the
// "sequence_start" and "sequence_end" flags; the server routes every
// request of a sequence to the same instance, executes them one at a time in
// the order they arrived, and fills the control inputs for the model.
type SequenceBatchingSpec struct {
	// MaxSequenceIdleMicroseconds releases a sequence that has had no
	// request for this long; a later request without START then fails.
	// 0 means Triton's default, 1 s.
	MaxSequenceIdleMicroseconds uint64 `json:"max_sequence_idle_microseconds"`
	// Direct gives each sequence a batch slot of its own: an execution
	// holds at most one request per slot and runs as soon as any slot has
	// one. It is the default strategy.
	Direct *SequenceDirectSpec `json:"direct,omitempty"`
	// Oldest batches the oldest requests of up to max_candidate_sequences
	// sequences per instance dynamically, one request per sequence.
	Oldest *SequenceOldestSpec `json:"oldest,omitempty"`
	// ControlInputs are the tensors the server fills for the model.
	ControlInputs []ControlInputSpec `json:"control_input"`
}

// SequenceDirectSpec is the direct strategy; it has no settings here.
type SequenceDirectSpec struct{}

// SequenceOldestSpec is the oldest strategy's settings.
type SequenceOldestSpec struct {
	// MaxCandidateSequences is the number of sequence slots per instance;
	// 0 means max(1, max_batch_size).
	MaxCandidateSequences int `json:"max_candidate_sequences"`
	// PreferredBatchSize: a batch of one of these sizes executes at once;
	// default [max_batch_size], as Triton fills it in.
	PreferredBatchSize []int `json:"preferred_batch_size"`
	// MaxQueueDelayMicroseconds is how long a smaller batch may wait for
	// requests of other sequences.
	MaxQueueDelayMicroseconds uint64 `json:"max_queue_delay_microseconds"`
}

// ControlInputSpec is one control input: a tensor name and what it carries.
type ControlInputSpec struct {
	Name    string        `json:"name"`
	Control []ControlSpec `json:"control"`
}

// ControlSpec is one control of a control input. Kind is
// CONTROL_SEQUENCE_START, CONTROL_SEQUENCE_END, CONTROL_SEQUENCE_READY
// (these take the false and true values in exactly one of the
// *_false_true fields) or CONTROL_SEQUENCE_CORRID (which takes data_type:
// TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING).
type ControlSpec struct {
	Kind           string    `json:"kind"`
	Int32FalseTrue []int32   `json:"int32_false_true,omitempty"`
	FP32FalseTrue  []float32 `json:"fp32_false_true,omitempty"`
	BoolFalseTrue  []bool    `json:"bool_false_true,omitempty"`
	DataType       string    `json:"data_type,omitempty"`
}

// sequenceIdleDefaultUS is Triton's default max_sequence_idle_microseconds.
const sequenceIdleDefaultUS = 1_000_000

// check validates the section of a model with the given inputs.
func (sb *SequenceBatchingSpec) check(m ModelSpec) error {
	if m.DynamicBatching != nil {
		return fmt.Errorf("sequence_batching: a model has either dynamic_batching or sequence_batching, not both")
	}
	if sb.Direct != nil && sb.Oldest != nil {
		return fmt.Errorf("sequence_batching: choose one strategy, direct or oldest")
	}
	if o := sb.Oldest; o != nil {
		if o.MaxCandidateSequences < 0 {
			return fmt.Errorf("sequence_batching.oldest.max_candidate_sequences: %d is negative", o.MaxCandidateSequences)
		}
		for _, p := range o.PreferredBatchSize {
			if p < 1 || p > max(1, m.MaxBatchSize) {
				return fmt.Errorf("sequence_batching.oldest.preferred_batch_size: %d must be in 1..max_batch_size (%d)", p, max(1, m.MaxBatchSize))
			}
		}
	}
	names := map[string]bool{}
	for _, in := range m.Inputs {
		names[in.Name] = true
	}
	kinds := map[string]bool{}
	for i, ci := range sb.ControlInputs {
		where := fmt.Sprintf("sequence_batching.control_input[%d]", i)
		if ci.Name == "" {
			return fmt.Errorf("%s.name: empty", where)
		}
		if names[ci.Name] {
			return fmt.Errorf("%s.name: %s is already a model input (the server fills control inputs; requests never send them)", where, textsafe.Quote(ci.Name))
		}
		names[ci.Name] = true
		if len(ci.Control) != 1 {
			return fmt.Errorf("%s.control: give exactly one control", where)
		}
		c := ci.Control[0]
		if kinds[c.Kind] {
			return fmt.Errorf("%s.control[0].kind: %s appears twice", where, textsafe.Bound(c.Kind))
		}
		kinds[c.Kind] = true
		if err := c.check(); err != nil {
			return fmt.Errorf("%s.control[0].%w", where, err)
		}
	}
	switch m.Behaviour {
	case BehaviourSequence, BehaviourAccumulate, BehaviourAccumulateSum:
		if len(m.Inputs) != 1 || len(m.Outputs) != 1 || normDatatype(m.Inputs[0].DataType) != normDatatype(m.Outputs[0].DataType) {
			return fmt.Errorf("behaviour: %s needs one input and one output of the same datatype", m.Behaviour)
		}
		dt := normDatatype(m.Inputs[0].DataType)
		if dt != "INT32" && dt != "INT64" {
			return fmt.Errorf("behaviour: %s needs an INT32 or INT64 input, not %s", m.Behaviour, dt)
		}
	}
	return nil
}

func normDatatype(s string) string {
	dt, _ := kserve.ParseDataType(s)
	return kserve.DataTypeString(dt)
}

func (c ControlSpec) check() error {
	switch c.Kind {
	case "CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_READY":
		set := 0
		for _, n := range []int{len(c.Int32FalseTrue), len(c.FP32FalseTrue), len(c.BoolFalseTrue)} {
			if n > 0 {
				set++
				if n != 2 {
					return fmt.Errorf("*_false_true: give two values, false then true")
				}
			}
		}
		if set != 1 || c.DataType != "" {
			return fmt.Errorf("kind: %s takes exactly one of int32_false_true, fp32_false_true or bool_false_true", textsafe.Bound(c.Kind))
		}
	case "CONTROL_SEQUENCE_CORRID":
		if len(c.Int32FalseTrue)+len(c.FP32FalseTrue)+len(c.BoolFalseTrue) > 0 {
			return fmt.Errorf("kind: CONTROL_SEQUENCE_CORRID takes data_type, not *_false_true")
		}
		switch normDatatype(c.DataType) {
		case "UINT64", "INT64", "UINT32", "INT32", "BYTES":
		default:
			return fmt.Errorf("data_type: %s; CORRID is TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING", textsafe.Quote(c.DataType))
		}
	default:
		return fmt.Errorf("kind: %s is not CONTROL_SEQUENCE_START, _END, _READY or _CORRID", textsafe.Quote(c.Kind))
	}
	return nil
}

// controlValues are the numbers a model sees in its boolean control
// inputs, and whether each control is configured at all.
type controlValues struct {
	hasStart, hasEnd, hasReady, hasCorrID bool
	start, end, ready                     [2]int64 // false, true
	corrIDType                            pb.DataType
	corrIDName                            string
}

func (c ControlSpec) falseTrue() [2]int64 {
	switch {
	case len(c.Int32FalseTrue) == 2:
		return [2]int64{int64(c.Int32FalseTrue[0]), int64(c.Int32FalseTrue[1])}
	case len(c.FP32FalseTrue) == 2:
		return [2]int64{int64(c.FP32FalseTrue[0]), int64(c.FP32FalseTrue[1])}
	case len(c.BoolFalseTrue) == 2:
		b := func(v bool) int64 {
			if v {
				return 1
			}
			return 0
		}
		return [2]int64{b(c.BoolFalseTrue[0]), b(c.BoolFalseTrue[1])}
	}
	return [2]int64{0, 1}
}

func newControlValues(sb *SequenceBatchingSpec) controlValues {
	var cv controlValues
	for _, ci := range sb.ControlInputs {
		c := ci.Control[0]
		switch c.Kind {
		case "CONTROL_SEQUENCE_START":
			cv.hasStart, cv.start = true, c.falseTrue()
		case "CONTROL_SEQUENCE_END":
			cv.hasEnd, cv.end = true, c.falseTrue()
		case "CONTROL_SEQUENCE_READY":
			cv.hasReady, cv.ready = true, c.falseTrue()
		case "CONTROL_SEQUENCE_CORRID":
			cv.hasCorrID, cv.corrIDName = true, ci.Name
			cv.corrIDType, _ = kserve.ParseDataType(c.DataType)
		}
	}
	return cv
}

// withDefaults fills in what Triton's config normalisation fills in.
func (sb SequenceBatchingSpec) withDefaults(maxBatch int) *SequenceBatchingSpec {
	if sb.MaxSequenceIdleMicroseconds == 0 {
		sb.MaxSequenceIdleMicroseconds = sequenceIdleDefaultUS
	}
	if sb.Oldest != nil {
		o := *sb.Oldest
		if len(o.PreferredBatchSize) == 0 && maxBatch > 0 {
			o.PreferredBatchSize = []int{maxBatch}
		}
		o.PreferredBatchSize = slices.Clone(o.PreferredBatchSize)
		sb.Oldest = &o
	}
	sb.ControlInputs = slices.Clone(sb.ControlInputs)
	return &sb
}

// proto is the section as Triton reports it in the model configuration.
func (sb *SequenceBatchingSpec) proto() *pb.ModelSequenceBatching {
	out := &pb.ModelSequenceBatching{MaxSequenceIdleMicroseconds: sb.MaxSequenceIdleMicroseconds}
	if o := sb.Oldest; o != nil {
		st := &pb.ModelSequenceBatching_StrategyOldest{
			MaxCandidateSequences:     int32(o.MaxCandidateSequences),
			MaxQueueDelayMicroseconds: o.MaxQueueDelayMicroseconds,
		}
		for _, p := range o.PreferredBatchSize {
			st.PreferredBatchSize = append(st.PreferredBatchSize, int32(p))
		}
		out.StrategyChoice = &pb.ModelSequenceBatching_Oldest{Oldest: st}
	} else if sb.Direct != nil {
		out.StrategyChoice = &pb.ModelSequenceBatching_Direct{Direct: &pb.ModelSequenceBatching_StrategyDirect{}}
	}
	for _, ci := range sb.ControlInputs {
		pci := &pb.ModelSequenceBatching_ControlInput{Name: ci.Name}
		for _, c := range ci.Control {
			pc := &pb.ModelSequenceBatching_Control{
				Kind:           pb.ModelSequenceBatching_Control_Kind(pb.ModelSequenceBatching_Control_Kind_value[c.Kind]),
				Int32FalseTrue: slices.Clone(c.Int32FalseTrue),
				Fp32FalseTrue:  slices.Clone(c.FP32FalseTrue),
				BoolFalseTrue:  slices.Clone(c.BoolFalseTrue),
			}
			if c.DataType != "" {
				pc.DataType, _ = kserve.ParseDataType(c.DataType)
			}
			pci.Control = append(pci.Control, pc)
		}
		out.ControlInput = append(out.ControlInput, pci)
	}
	return out
}
