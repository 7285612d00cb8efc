package sim

import (
	"math"
	"strings"
	"testing"
)

// TestRepositoryLimits: each number of a repository past its limit is
// refused at start, in one line that names the field and the limit; values
// at the limit still load.
func TestRepositoryLimits(t *testing.T) {
	base := func() ModelSpec {
		return ModelSpec{
			Name: "m", Backend: "python", MaxBatchSize: 8,
			Inputs:         []TensorSpec{{Name: "IN", DataType: "FP32", Dims: []int64{4}}},
			Outputs:        []TensorSpec{{Name: "OUT", DataType: "FP32", Dims: []int64{4}}},
			InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
		}
	}
	cases := []struct {
		name string
		edit func(r *Repository)
		want string // "" when the repository loads
	}{
		{"instance count 1e8", func(r *Repository) { r.Models[0].InstanceGroups[0].Count = 100000000 }, "over the limit of 1024 instances"},
		{"instance count at the limit", func(r *Repository) { r.Models[0].InstanceGroups[0].Count = MaxInstancesPerModel }, ""},
		{"instance count one over", func(r *Repository) { r.Models[0].InstanceGroups[0].Count = MaxInstancesPerModel + 1 }, "instance_group[0].count"},
		{"instances summed over groups", func(r *Repository) {
			r.Models[0].InstanceGroups = []InstanceGroupSpec{{Count: 600, Kind: "KIND_CPU"}, {Count: 600, Kind: "KIND_CPU"}}
		}, "instance_group[1].count"},
		{"instances times GPUs", func(r *Repository) {
			r.Models[0].InstanceGroups = []InstanceGroupSpec{{Count: 600, Kind: "KIND_GPU"}} // on both default GPUs
		}, "on 2 device(s)"},
		{"max int count", func(r *Repository) { r.Models[0].InstanceGroups[0].Count = math.MaxInt }, "instance_group[0].count"},
		{"max_batch_size 2^63-1", func(r *Repository) { r.Models[0].MaxBatchSize = math.MaxInt64 }, "is an int32"},
		{"max_batch_size int32 max", func(r *Repository) { r.Models[0].MaxBatchSize = math.MaxInt32 }, ""},
		{"fixed_us 1e300", func(r *Repository) { r.Models[0].Latency.FixedUS = 1e300 }, "latency.fixed_us"},
		{"per_item_us 1e10", func(r *Repository) { r.Models[0].Latency.PerItemUS = 1e10 }, "latency.per_item_us"},
		{"compute_input_us over", func(r *Repository) { r.Models[0].Latency.ComputeInputUS = MaxLatencyUS + 1 }, "latency.compute_input_us"},
		{"compute_output_us over", func(r *Repository) { r.Models[0].Latency.ComputeOutputUS = 1e12 }, "latency.compute_output_us"},
		{"fixed_us at one hour", func(r *Repository) { r.Models[0].Latency.FixedUS = MaxLatencyUS }, ""},
		{"reference_elements huge", func(r *Repository) { r.Models[0].Latency.ReferenceElements = 1e300 }, "reference_elements"},
		{"memory_bytes 2^64-1", func(r *Repository) { r.Models[0].MemoryBytes = math.MaxUint64 }, "memory_bytes"},
		{"memory_bytes at 1 PiB", func(r *Repository) { r.Models[0].MemoryBytes = MaxMemoryBytes }, ""},
		{"GPU memory 2^64-1", func(r *Repository) { r.GPUs = []GPUSpec{{MemoryBytes: math.MaxUint64}} }, "gpus[0].memory_bytes"},
		{"GPU power 1e300", func(r *Repository) { r.GPUs = []GPUSpec{{PowerMaxW: 1e300}} }, "power"},
		{"100000 GPUs", func(r *Repository) { r.GPUs = make([]GPUSpec, 100000) }, "over the limit of 64"},
		{"64 GPUs", func(r *Repository) { r.GPUs = make([]GPUSpec, MaxGPUs) }, ""},
		{"65 versions", func(r *Repository) {
			for v := range int64(65) {
				r.Models[0].Versions = append(r.Models[0].Versions, v+1)
			}
		}, "versions: 65"},
		{"dims overflow", func(r *Repository) { r.Models[0].Inputs[0].Dims = []int64{1 << 40, 1 << 40} }, "overflows"},
		{"model name with newline", func(r *Repository) { r.Models[0].Name = "a\nb" }, `holds '\n'`},
		{"model name with ESC", func(r *Repository) { r.Models[0].Name = "\x1b]0;owned\x07" }, `\x1b`},
		{"model name with NUL", func(r *Repository) { r.Models[0].Name = "a\x00" }, `\x00`},
		{"model name with double quote", func(r *Repository) { r.Models[0].Name = `a"b` }, `'"'`},
		{"model name with single quote", func(r *Repository) { r.Models[0].Name = "a'b" }, "holds"},
		{"model name with backslash", func(r *Repository) { r.Models[0].Name = `a\b` }, "holds"},
		{"model name with slash", func(r *Repository) { r.Models[0].Name = "a/b" }, "holds '/'"},
		{"model name dot-dot", func(r *Repository) { r.Models[0].Name = ".." }, "not a directory name"},
		{"model name invalid UTF-8", func(r *Repository) { r.Models[0].Name = "a\xffb" }, "holds"},
		{"model name too long", func(r *Repository) { r.Models[0].Name = strings.Repeat("m", 256) }, "over the limit of 255"},
		{"model name of 10 MB", func(r *Repository) { r.Models[0].Name = strings.Repeat("m", 10<<20) }, `("mmmm`},
		{"tensor name of 10 MB", func(r *Repository) { r.Models[0].Inputs[0].Name = strings.Repeat("i", 10<<20) }, "10485760 bytes, over the limit of 255"},
		{"datatype of 10 MB", func(r *Repository) { r.Models[0].Inputs[0].DataType = strings.Repeat("T", 10<<20) }, "(10485760 bytes in all)"},
		{"behaviour of 10 MB", func(r *Repository) { r.Models[0].Behaviour = strings.Repeat("b", 10<<20) }, "(10485760 bytes in all)"},
		{"model name with dots and dashes", func(r *Repository) { r.Models[0].Name = "resnet-50_v1.5" }, ""},
		{"sequence model with max_batch_size int32 max", func(r *Repository) {
			r.Models[0].MaxBatchSize = math.MaxInt32
			r.Models[0].SequenceBatching = &SequenceBatchingSpec{}
		}, "max_batch_size: 2147483647 sequence slots on each of 1 instance(s) is over the limit of 65536"},
		{"sequence slots over four instances", func(r *Repository) {
			r.Models[0].MaxBatchSize = 20000
			r.Models[0].SequenceBatching = &SequenceBatchingSpec{}
			r.Models[0].InstanceGroups[0].Count = 4
		}, "20000 sequence slots on each of 4 instance(s)"},
		{"oldest candidates are the slots", func(r *Repository) {
			r.Models[0].MaxBatchSize = math.MaxInt32
			r.Models[0].SequenceBatching = &SequenceBatchingSpec{Oldest: &SequenceOldestSpec{MaxCandidateSequences: 16, PreferredBatchSize: []int{8}}}
		}, ""},
		{"sequence slots at the limit", func(r *Repository) {
			r.Models[0].MaxBatchSize = MaxSequenceSlots
			r.Models[0].SequenceBatching = &SequenceBatchingSpec{}
		}, ""},
		{"tensor name with newline", func(r *Repository) { r.Models[0].Inputs[0].Name = "IN\n" }, "inputs[0].name"},
		{"output name with ESC", func(r *Repository) { r.Models[0].Outputs[0].Name = "OUT\x1b[2J" }, "outputs[0].name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Repository{Models: []ModelSpec{base()}}
			tc.edit(&r)
			err := r.check()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("check: %v; want the repository to load", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\n\x1b\x00") || len(err.Error()) > 1<<10 {
				t.Fatalf("check: %.300v; want one clean line under 1 KiB with %q", err, tc.want)
			}
		})
	}
}
