package sim

import (
	"fmt"
	"math"
	"math/bits"
	"unicode"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// Limits on the numbers of a model repository. Each bounds what the
// simulator allocates or computes from the description before any request
// arrives; a repository over one is refused at start with the field and the
// limit.
const (
	// MaxGPUs is the most simulated GPUs (--gpus, or the repository's
	// "gpus" list): twice the largest single node sold today. Every GPU
	// adds its series to each /metrics page.
	MaxGPUs = 64
	// MaxInstancesPerModel bounds a model's execution instances: the sum
	// over its instance groups of count times the GPUs each is placed on.
	// Each instance is a goroutine and a queue.
	MaxInstancesPerModel = 1024
	// MaxBatchSizeLimit is the largest max_batch_size: Triton's config
	// field is an int32.
	MaxBatchSizeLimit = math.MaxInt32
	// MaxVersions bounds the versions of one model: each is loaded with its
	// own instances.
	MaxVersions = 64
	// MaxLatencyUS bounds every latency term in µs (one hour): an execution
	// longer than that is a hung model, which --stall-after simulates.
	MaxLatencyUS = 3600e6
	// MaxMemoryBytes bounds a model's and a GPU's memory_bytes (1 PiB), so
	// that their sums over models, versions and instances stay exact.
	MaxMemoryBytes = 1 << 50
	// MaxNameBytes bounds a model or tensor name.
	MaxNameBytes = 255
	// MaxSequenceSlots bounds a sequence model's slots, over its
	// instances: each instance keeps max_batch_size slots (or
	// max_candidate_sequences) that every request scans. Triton allocates
	// per slot too.
	MaxSequenceSlots = 1 << 16
)

// checkName refuses a model name Triton's repository could not hold: a
// model is a directory, so its name is one path element, and the
// simulator also refuses control characters and quotes, which no
// directory a user meant to make contains and which would reach terminals
// and logs unescaped.
func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: empty", what)
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%s: %d bytes, over the limit of %d", what, len(name), MaxNameBytes)
	case name == "." || name == "..":
		return fmt.Errorf("%s: %s is not a directory name", what, textsafe.Quote(name))
	}
	for _, r := range name {
		if r == '/' || r == '\\' || r == '"' || r == '\'' || r == '`' || r == ' ' || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%s: %s holds %q; use letters, digits, '-', '_' and '.'", what, textsafe.Quote(name), r)
		}
	}
	return nil
}

// checkTensorName refuses a tensor name with control characters (they
// would reach terminals unescaped). A tensor name is no path, so '/' (as
// in TensorFlow's "InceptionV3/Predictions/Softmax") is fine.
func checkTensorName(what, name string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%s: %d bytes, over the limit of %d", what, len(name), MaxNameBytes)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%s: %s holds %q; a tensor name has no control characters", what, textsafe.Quote(name), r)
		}
	}
	return nil
}

// checkLimits bounds a model's numbers (the checks of its structure are in
// check).
func (m ModelSpec) checkLimits(ngpu int) error {
	if m.MaxBatchSize > MaxBatchSizeLimit {
		return fmt.Errorf("max_batch_size: %d is over %d (Triton's max_batch_size is an int32)", m.MaxBatchSize, MaxBatchSizeLimit)
	}
	if len(m.Versions) > MaxVersions {
		return fmt.Errorf("versions: %d versions, over the limit of %d", len(m.Versions), MaxVersions)
	}
	instances := 0
	for j, g := range m.InstanceGroups {
		per := max(1, len(g.GPUs))
		if len(g.GPUs) == 0 && (g.Kind == "" || g.Kind == "KIND_GPU" || g.Kind == "KIND_AUTO") {
			per = max(1, ngpu)
		}
		if g.Count > MaxInstancesPerModel || g.Count*per > MaxInstancesPerModel-instances {
			return fmt.Errorf("instance_group[%d].count: %d instances on %d device(s) is over the limit of %d instances per model", j, g.Count, per, MaxInstancesPerModel)
		}
		instances += max(1, g.Count) * per
	}
	if err := m.checkSequenceSlots(instances); err != nil {
		return err
	}
	l := m.Latency
	for _, f := range []struct {
		name string
		v    float64
	}{{"fixed_us", l.FixedUS}, {"per_item_us", l.PerItemUS}, {"compute_input_us", l.ComputeInputUS}, {"compute_output_us", l.ComputeOutputUS}} {
		if !(f.v <= MaxLatencyUS) {
			return fmt.Errorf("latency.%s: %g µs is over the limit of %g µs (one hour)", f.name, f.v, float64(MaxLatencyUS))
		}
	}
	if !(l.ReferenceElements <= 1<<53) {
		return fmt.Errorf("latency.reference_elements: %g is over %g", l.ReferenceElements, float64(1<<53))
	}
	if m.MemoryBytes > MaxMemoryBytes {
		return fmt.Errorf("memory_bytes: %d is over the limit of %d (1 PiB)", m.MemoryBytes, uint64(MaxMemoryBytes))
	}
	for _, group := range []struct {
		kind string
		list []TensorSpec
	}{{"inputs", m.Inputs}, {"outputs", m.Outputs}} {
		for j, t := range group.list {
			if err := checkTensorName(fmt.Sprintf("%s[%d].name", group.kind, j), t.Name); err != nil {
				return err
			}
			// The fixed dims of a full batch must have a byte size: a
			// model no request could fit is a typo in the description.
			dt, _ := kserve.ParseDataType(t.DataType)
			n := uint64(max(1, m.MaxBatchSize)) * uint64(max(1, kserve.ElementSize(kserve.DataTypeString(dt))))
			for _, d := range t.Dims {
				if d <= 0 {
					continue
				}
				hi, lo := bits.Mul64(n, uint64(d))
				if hi != 0 || lo > math.MaxInt64 {
					return fmt.Errorf("%s[%d].dims: %s with max_batch_size %d overflows a tensor's byte size", group.kind, j, kserve.FormatDims(t.Dims), m.MaxBatchSize)
				}
				n = lo
			}
		}
	}
	return nil
}

// checkSequenceSlots bounds the sequence slots of a sequence model with
// that many instances.
func (m ModelSpec) checkSequenceSlots(instances int) error {
	sb := m.SequenceBatching
	if sb == nil {
		return nil
	}
	slots, field := max(1, m.MaxBatchSize), "max_batch_size"
	if sb.Oldest != nil && sb.Oldest.MaxCandidateSequences > 0 {
		slots, field = sb.Oldest.MaxCandidateSequences, "sequence_batching.oldest.max_candidate_sequences"
	}
	if slots > MaxSequenceSlots || slots*max(1, instances) > MaxSequenceSlots {
		return fmt.Errorf("%s: %d sequence slots on each of %d instance(s) is over the limit of %d slots per model (each request scans them); lower it, or set sequence_batching.oldest.max_candidate_sequences",
			field, slots, max(1, instances), MaxSequenceSlots)
	}
	return nil
}

// checkGPULimits bounds the repository's GPUs.
func (r Repository) checkGPULimits() error {
	if len(r.GPUs) > MaxGPUs {
		return fmt.Errorf("gpus: %d GPUs, over the limit of %d", len(r.GPUs), MaxGPUs)
	}
	for i, g := range r.GPUs {
		if g.MemoryBytes > MaxMemoryBytes || g.BaseMemoryBytes > MaxMemoryBytes {
			return fmt.Errorf("gpus[%d].memory_bytes: over the limit of %d (1 PiB)", i, uint64(MaxMemoryBytes))
		}
		if !(g.PowerIdleW <= 1e6 && g.PowerMaxW <= 1e6 && g.PowerLimitW <= 1e6) {
			return fmt.Errorf("gpus[%d]: power over the limit of 1e6 W", i)
		}
	}
	return nil
}
