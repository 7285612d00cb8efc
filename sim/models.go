package sim

// DemoRepository returns the built-in models, on two default GPUs, which
// the models placed on them share (GPUSpec.Overlap):
//
//   - simple: Triton's add/sub example. INPUT0, INPUT1 INT32 [16] →
//     OUTPUT0 = INPUT0+INPUT1, OUTPUT1 = INPUT0−INPUT1 (INT32 [16]);
//     max_batch_size 8, dynamic batching (no preferred sizes, no delay),
//     one KIND_CPU instance, 50 µs + 2 µs per item.
//   - resnet50: platform onnxruntime_onnx, input FP32 [3,224,224] → output
//     FP32 [1000] (pseudo-random scores); max_batch_size 32, dynamic
//     batching with preferred sizes 8, 16, 32 and 100 µs delay; one KIND_GPU
//     instance on each of GPU 0 and GPU 1; infer 4 ms + 1 ms × b^0.8 (5 ms
//     at batch 1, 20 ms at 32), input 20 µs and output 5 µs per item, 5%
//     jitter; 1.5 GiB per instance.
//   - bert: platform onnxruntime_onnx, input_ids and attention_mask INT64
//     [-1] → logits FP32 [2]; max_batch_size 16, dynamic batching with
//     preferred sizes 4, 8, 16 and 500 µs delay; two KIND_GPU instances on
//     GPU 1; infer 3 ms + 250 µs × (b × seq_len/128)^0.9, 5% jitter;
//     requests batch together only when their sequence lengths match.
//   - identity: INPUT0 FP32 [-1] → OUTPUT0 = INPUT0; max_batch_size 8, no
//     dynamic batching, four KIND_CPU instances and no compute time, so
//     that it measures the serving overhead alone.
//   - llm: a decoupled large language model shaped like TensorRT-LLM's
//     (see LLMSpec): text_input BYTES [1], max_tokens INT32 [1], stream
//     BOOL [1] → text_output BYTES [1], one response per token; one
//     KIND_GPU instance on GPU 0 running up to 64 requests at once; prefill
//     20 ms + 50 µs per prompt word; an iteration 15 ms + 0.5 ms per
//     further running request, 5% jitter; 128 ± 32 output tokens (16 to
//     512), at most max_tokens; 12 GiB.
//   - preprocess: a CPU image preprocessor (python backend): image UINT8
//     [224,224,3] (HWC pixels) → preprocessed FP32 [3,224,224] (zeros);
//     max_batch_size 32, dynamic batching with 100 µs delay; two KIND_CPU
//     instances; 5 ms + 5 ms per item, input and output 20 µs per item, 5%
//     jitter. An image takes 10 ms there against 5 ms on resnet50's GPU,
//     and its cost per item makes batching gain little: two instances
//     serve at most about 385 images/s (166 ms per batch of 32) against
//     resnet50's 3 080 on its two GPUs. So a pipeline's time goes to
//     preprocess, and the GPUs stay far from busy.
//   - resnet50_pipeline: an ensemble (see EnsembleSpec) of preprocess then
//     resnet50: image UINT8 [224,224,3] → output FP32 [1000];
//     max_batch_size 32. Its statistics are Triton's for an ensemble; its
//     composing models' show where its time goes.
func DemoRepository() Repository {
	return Repository{Models: []ModelSpec{
		{
			Name:         "simple",
			Platform:     "tensorflow_graphdef",
			Backend:      "tensorflow",
			MaxBatchSize: 8,
			Inputs: []TensorSpec{
				{Name: "INPUT0", DataType: "TYPE_INT32", Dims: []int64{16}},
				{Name: "INPUT1", DataType: "TYPE_INT32", Dims: []int64{16}},
			},
			Outputs: []TensorSpec{
				{Name: "OUTPUT0", DataType: "TYPE_INT32", Dims: []int64{16}},
				{Name: "OUTPUT1", DataType: "TYPE_INT32", Dims: []int64{16}},
			},
			DynamicBatching: &DynamicBatchingSpec{},
			InstanceGroups:  []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
			Latency:         LatencySpec{FixedUS: 50, PerItemUS: 2, Jitter: 0.05},
			Behaviour:       BehaviourAddSub,
		},
		{
			Name:         "resnet50",
			Platform:     "onnxruntime_onnx",
			Backend:      "onnxruntime",
			MaxBatchSize: 32,
			Inputs:       []TensorSpec{{Name: "input", DataType: "TYPE_FP32", Dims: []int64{3, 224, 224}}},
			Outputs:      []TensorSpec{{Name: "output", DataType: "TYPE_FP32", Dims: []int64{1000}}},
			DynamicBatching: &DynamicBatchingSpec{
				PreferredBatchSize:        []int{8, 16, 32},
				MaxQueueDelayMicroseconds: 100,
			},
			InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU", GPUs: []int{0, 1}}},
			Latency: LatencySpec{FixedUS: 4000, PerItemUS: 1000, Exponent: 0.8, Jitter: 0.05,
				ComputeInputUS: 20, ComputeOutputUS: 5},
			MemoryBytes: 1536 << 20,
			Behaviour:   BehaviourClassifier,
		},
		{
			Name:         "bert",
			Platform:     "onnxruntime_onnx",
			Backend:      "onnxruntime",
			MaxBatchSize: 16,
			Inputs: []TensorSpec{
				{Name: "input_ids", DataType: "TYPE_INT64", Dims: []int64{-1}},
				{Name: "attention_mask", DataType: "TYPE_INT64", Dims: []int64{-1}},
			},
			Outputs: []TensorSpec{{Name: "logits", DataType: "TYPE_FP32", Dims: []int64{2}}},
			DynamicBatching: &DynamicBatchingSpec{
				PreferredBatchSize:        []int{4, 8, 16},
				MaxQueueDelayMicroseconds: 500,
			},
			InstanceGroups: []InstanceGroupSpec{{Count: 2, Kind: "KIND_GPU", GPUs: []int{1}}},
			Latency: LatencySpec{FixedUS: 3000, PerItemUS: 250, Exponent: 0.9, Jitter: 0.05,
				ComputeInputUS: 5, ComputeOutputUS: 2, ReferenceElements: 128},
			MemoryBytes: 1 << 30,
			Behaviour:   BehaviourClassifier,
		},
		{
			Name:           "identity",
			Backend:        "identity",
			MaxBatchSize:   8,
			Inputs:         []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{-1}}},
			Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{-1}}},
			InstanceGroups: []InstanceGroupSpec{{Count: 4, Kind: "KIND_CPU"}},
			Behaviour:      BehaviourIdentity,
		},
		DemoLLM(),
		DemoPreprocess(),
		DemoPipeline(),
	}}
}

// DemoPreprocess is the demo repository's preprocess model: the CPU step
// of resnet50_pipeline.
func DemoPreprocess() ModelSpec {
	return ModelSpec{
		Name:            "preprocess",
		Backend:         "python",
		MaxBatchSize:    32,
		Inputs:          []TensorSpec{{Name: "image", DataType: "TYPE_UINT8", Dims: []int64{224, 224, 3}}},
		Outputs:         []TensorSpec{{Name: "preprocessed", DataType: "TYPE_FP32", Dims: []int64{3, 224, 224}}},
		DynamicBatching: &DynamicBatchingSpec{MaxQueueDelayMicroseconds: 100},
		InstanceGroups:  []InstanceGroupSpec{{Count: 2, Kind: "KIND_CPU"}},
		Latency: LatencySpec{FixedUS: 5000, PerItemUS: 5000, Jitter: 0.05,
			ComputeInputUS: 20, ComputeOutputUS: 20},
		Behaviour: BehaviourZeros,
	}
}

// DemoPipeline is the demo repository's resnet50_pipeline ensemble:
// preprocess, then resnet50.
func DemoPipeline() ModelSpec {
	return ModelSpec{
		Name:         "resnet50_pipeline",
		Platform:     EnsemblePlatform,
		MaxBatchSize: 32,
		Inputs:       []TensorSpec{{Name: "image", DataType: "TYPE_UINT8", Dims: []int64{224, 224, 3}}},
		Outputs:      []TensorSpec{{Name: "output", DataType: "TYPE_FP32", Dims: []int64{1000}}},
		EnsembleScheduling: &EnsembleSpec{Steps: []EnsembleStepSpec{
			{ModelName: "preprocess", ModelVersion: -1,
				InputMap: map[string]string{"image": "image"}, OutputMap: map[string]string{"preprocessed": "preprocessed"}},
			{ModelName: "resnet50", ModelVersion: -1,
				InputMap: map[string]string{"input": "preprocessed"}, OutputMap: map[string]string{"output": "output"}},
		}},
	}
}

// DemoLLM is the demo repository's llm model.
func DemoLLM() ModelSpec {
	return ModelSpec{
		Name:    "llm",
		Backend: "tensorrtllm",
		Inputs: []TensorSpec{
			{Name: "text_input", DataType: "TYPE_STRING", Dims: []int64{1}},
			{Name: "max_tokens", DataType: "TYPE_INT32", Dims: []int64{1}},
			{Name: "stream", DataType: "TYPE_BOOL", Dims: []int64{1}},
		},
		Outputs:        []TensorSpec{{Name: "text_output", DataType: "TYPE_STRING", Dims: []int64{1}}},
		InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU", GPUs: []int{0}}},
		Decoupled:      true,
		MemoryBytes:    12 << 30,
		LLM: &LLMSpec{
			PrefillUS: 20000, PrefillPerTokenUS: 50,
			TokenUS: 15000, TokenPerSequenceUS: 500, Jitter: 0.05,
			MaxSequences: 64,
			OutputTokens: LengthSpec{Mean: 128, StdDev: 32, Min: 16, Max: 512},
		},
	}
}
