package sim

import (
	_ "embed"
	"strings"
)

// The class names of the two image classifiers, as in Triton's example
// model repository (the ImageNet classes; inception's list starts with a
// background class).
var (
	//go:embed labels/densenet_labels.txt
	densenetLabels string
	//go:embed labels/inception_labels.txt
	inceptionLabels string
)

func labelLines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// Names of the built-in model repositories, for --model-repository.
const (
	// BuiltinDemo names DemoRepository.
	BuiltinDemo = "demo"
	// BuiltinExamples names ExampleRepository.
	BuiltinExamples = "examples"
)

// BuiltinRepository returns the built-in repository of that name
// (BuiltinDemo or BuiltinExamples), or false.
func BuiltinRepository(name string) (Repository, bool) {
	switch name {
	case BuiltinDemo:
		return DemoRepository(), true
	case BuiltinExamples:
		return ExampleRepository(), true
	}
	return Repository{}, false
}

// ExampleRepository returns Triton's example model repository
// (docs/examples/model_repository of triton-inference-server/server, as it
// stood with inception_graphdef, up to release 25.03), with the models'
// names, platforms, tensors, batching and instance groups as their
// config.pbtxt files give them, on two default GPUs. Triton's example
// clients run against it unchanged:
//
//   - simple: INT32 add/sub, INPUT0 and INPUT1 [16] → OUTPUT0 = sum,
//     OUTPUT1 = difference; max_batch_size 8.
//   - simple_int8: the same in INT8 (wrapping).
//   - simple_string: the same in BYTES: each element is a decimal INT32 as
//     a string, and so is each result.
//   - simple_identity: BYTES INPUT0 [-1] → OUTPUT0, the same strings.
//   - simple_sequence: stateful, direct strategy; INT32 INPUT [1] →
//     OUTPUT = INPUT + START (1 on a sequence's first request).
//   - simple_dyna_sequence: stateful, oldest strategy (1024 candidate
//     sequences, 10 ms queue delay), CORRID as UINT64; OUTPUT = INPUT +
//     START + END × CORRID, so a sequence's last answer adds its ID.
//   - densenet_onnx: FP32 data_0 [3,224,224] (NCHW) → fc6_1 [1000] scores,
//     no batching; labels from densenet_labels.txt.
//   - inception_graphdef: FP32 input [299,299,3] (NHWC) →
//     InceptionV3/Predictions/Softmax [1001] scores; max_batch_size 128;
//     labels from inception_labels.txt.
//
// The two classifiers answer the classification extension with their
// labels. Latencies are modest guesses for small models on a data-centre
// GPU (the sequence models run on the CPU, as their configs say).
func ExampleRepository() Repository {
	int32Pair := func(dt string) ([]TensorSpec, []TensorSpec) {
		return []TensorSpec{{Name: "INPUT0", DataType: dt, Dims: []int64{16}}, {Name: "INPUT1", DataType: dt, Dims: []int64{16}}},
			[]TensorSpec{{Name: "OUTPUT0", DataType: dt, Dims: []int64{16}}, {Name: "OUTPUT1", DataType: dt, Dims: []int64{16}}}
	}
	small := LatencySpec{FixedUS: 60, PerItemUS: 2, Jitter: 0.05}
	addSub := func(name, dt string) ModelSpec {
		in, out := int32Pair(dt)
		return ModelSpec{Name: name, Platform: "tensorflow_graphdef", MaxBatchSize: 8, Inputs: in, Outputs: out,
			Latency: small, MemoryBytes: 16 << 20, Behaviour: BehaviourAddSub}
	}
	control := func(name, kind string) ControlInputSpec {
		c := ControlSpec{Kind: kind, Int32FalseTrue: []int32{0, 1}}
		if kind == "CONTROL_SEQUENCE_CORRID" {
			c = ControlSpec{Kind: kind, DataType: "TYPE_UINT64"}
		}
		return ControlInputSpec{Name: name, Control: []ControlSpec{c}}
	}
	seqTensors := func() ([]TensorSpec, []TensorSpec) {
		return []TensorSpec{{Name: "INPUT", DataType: "TYPE_INT32", Dims: []int64{1}}},
			[]TensorSpec{{Name: "OUTPUT", DataType: "TYPE_INT32", Dims: []int64{1}}}
	}
	seqIn, seqOut := seqTensors()
	dynaIn, dynaOut := seqTensors()
	return Repository{Models: []ModelSpec{
		addSub("simple", "TYPE_INT32"),
		addSub("simple_int8", "TYPE_INT8"),
		addSub("simple_string", "TYPE_STRING"),
		{
			Name:         "simple_identity",
			Platform:     "tensorflow_savedmodel",
			MaxBatchSize: 8,
			Inputs:       []TensorSpec{{Name: "INPUT0", DataType: "TYPE_STRING", Dims: []int64{-1}}},
			Outputs:      []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_STRING", Dims: []int64{-1}}},
			Latency:      LatencySpec{FixedUS: 40, PerItemUS: 1, Jitter: 0.05},
			MemoryBytes:  16 << 20,
			Behaviour:    BehaviourIdentity,
		},
		{
			Name:         "simple_sequence",
			Platform:     "tensorflow_graphdef",
			MaxBatchSize: 8,
			Inputs:       seqIn,
			Outputs:      seqOut,
			SequenceBatching: &SequenceBatchingSpec{ControlInputs: []ControlInputSpec{
				control("START", "CONTROL_SEQUENCE_START"),
				control("READY", "CONTROL_SEQUENCE_READY"),
			}},
			InstanceGroups: []InstanceGroupSpec{{Kind: "KIND_CPU"}},
			Latency:        LatencySpec{FixedUS: 50, PerItemUS: 2, Jitter: 0.05},
			Behaviour:      BehaviourSequence,
		},
		{
			Name:         "simple_dyna_sequence",
			Platform:     "tensorflow_graphdef",
			MaxBatchSize: 8,
			Inputs:       dynaIn,
			Outputs:      dynaOut,
			SequenceBatching: &SequenceBatchingSpec{
				MaxSequenceIdleMicroseconds: 10_000_000,
				Oldest:                      &SequenceOldestSpec{MaxCandidateSequences: 1024, MaxQueueDelayMicroseconds: 10_000},
				ControlInputs: []ControlInputSpec{
					control("START", "CONTROL_SEQUENCE_START"),
					control("END", "CONTROL_SEQUENCE_END"),
					control("READY", "CONTROL_SEQUENCE_READY"),
					control("CORRID", "CONTROL_SEQUENCE_CORRID"),
				},
			},
			// The config's parameter is for Triton's custom sequence
			// backend; it is reported, not simulated.
			Parameters:     map[string]string{"execute_delay_ms": "3"},
			InstanceGroups: []InstanceGroupSpec{{Count: 2, Kind: "KIND_CPU"}},
			Latency:        LatencySpec{FixedUS: 50, PerItemUS: 2, Jitter: 0.05},
			Behaviour:      BehaviourSequence,
		},
		{
			Name:         "densenet_onnx",
			Platform:     "onnxruntime_onnx",
			MaxBatchSize: 0,
			Inputs: []TensorSpec{{Name: "data_0", DataType: "TYPE_FP32", Format: "FORMAT_NCHW",
				Dims: []int64{3, 224, 224}, Reshape: []int64{1, 3, 224, 224}}},
			Outputs: []TensorSpec{{Name: "fc6_1", DataType: "TYPE_FP32", Dims: []int64{1000},
				Reshape: []int64{1, 1000, 1, 1}, LabelFilename: "densenet_labels.txt", Labels: labelLines(densenetLabels)}},
			Latency: LatencySpec{FixedUS: 2500, PerItemUS: 1000, Jitter: 0.05,
				ComputeInputUS: 60, ComputeOutputUS: 5},
			MemoryBytes: 512 << 20,
			Behaviour:   BehaviourClassifier,
		},
		{
			Name:         "inception_graphdef",
			Platform:     "tensorflow_graphdef",
			MaxBatchSize: 128,
			Inputs: []TensorSpec{{Name: "input", DataType: "TYPE_FP32", Format: "FORMAT_NHWC",
				Dims: []int64{299, 299, 3}}},
			Outputs: []TensorSpec{{Name: "InceptionV3/Predictions/Softmax", DataType: "TYPE_FP32", Dims: []int64{1001},
				LabelFilename: "inception_labels.txt", Labels: labelLines(inceptionLabels)}},
			Latency: LatencySpec{FixedUS: 3000, PerItemUS: 700, Exponent: 0.8, Jitter: 0.05,
				ComputeInputUS: 100, ComputeOutputUS: 5},
			MemoryBytes: 768 << 20,
			Behaviour:   BehaviourClassifier,
		},
	}}
}
