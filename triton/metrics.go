package triton

// Metrics is one reading of Triton's /metrics endpoint, typed. A family the
// server did not expose is absent (nil map, empty slice, Has* false), never
// zero: a dashboard must tell "0%" from "not reported".
type Metrics struct {
	// GPUs has one entry per gpu_uuid seen in any nv_gpu_* family, in the
	// order first seen.
	GPUs []GPUMetrics
	// HasCPU is set when nv_cpu_utilization was present.
	HasCPU         bool
	CPUUtilization float64 // 0..1
	CPUMemoryUsed  float64 // bytes
	CPUMemoryTotal float64 // bytes
	// Models holds the per-model families keyed by model name and version.
	Models map[ModelKey]*ModelMetrics
}

// GPUMetrics is one GPU's gauges. Each Has* flag says whether the family
// was present for this GPU.
type GPUMetrics struct {
	UUID           string
	Utilization    float64 // 0..1
	MemoryUsed     float64 // bytes
	MemoryTotal    float64 // bytes
	PowerUsage     float64 // watts
	PowerLimit     float64 // watts
	Energy         float64 // joules since server start
	HasUtilization bool
	HasMemory      bool
	HasPower       bool
}

// ModelKey names a model version in metrics labels.
type ModelKey struct {
	Model   string
	Version string
}

// ModelMetrics is one model version's per-model families, summed over
// gpu_uuid series where a family is split by GPU. Durations are cumulative
// microseconds, as Triton exports them.
type ModelMetrics struct {
	RequestSuccess    float64
	RequestFailure    map[string]float64 // by reason label
	InferenceCount    float64
	ExecutionCount    float64
	PendingRequests   float64
	HasPending        bool
	RequestDurationUS float64
	QueueDurationUS   float64
	ComputeInputUS    float64
	ComputeInferUS    float64
	ComputeOutputUS   float64
}
