package sim

import (
	"net/http"
	"strconv"
)

// pinnedPoolBytes is Triton's default --pinned-memory-pool-byte-size.
const pinnedPoolBytes = 268435456

// failureReasons are the reason labels Triton pre-creates for every model.
var failureReasons = [...]string{"REJECTED", "CANCELED", "BACKEND", "OTHER"}

// metricsHandler serves GET /metrics in Prometheus text format, written by
// hand so that values print as plain decimals (strconv 'g' at precision 16,
// like prometheus-cpp) and perf_analyzer's `(\d+\.?\d*)` regex matches.
type metricsHandler struct {
	engine *Engine
	cpu    *cpuSampler
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	var cpu cpuState
	if h.cpu != nil {
		cpu = h.cpu.read()
	}
	body := appendExposition(nil, h.engine.Metrics(), cpu)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// label is one name="value" pair; callers pass labels already in
// alphabetical order, as prometheus-cpp prints them.
type label struct{ name, value string }

// exposition accumulates text exposition, one family at a time.
type exposition struct{ b []byte }

func (x *exposition) family(name, typ, help string) {
	x.b = append(x.b, "# HELP "...)
	x.b = append(x.b, name...)
	x.b = append(x.b, ' ')
	x.b = append(x.b, help...)
	x.b = append(x.b, "\n# TYPE "...)
	x.b = append(x.b, name...)
	x.b = append(x.b, ' ')
	x.b = append(x.b, typ...)
	x.b = append(x.b, '\n')
}

func (x *exposition) sample(name string, v float64, labels ...label) {
	x.b = append(x.b, name...)
	if len(labels) > 0 {
		x.b = append(x.b, '{')
		for i, l := range labels {
			if i > 0 {
				x.b = append(x.b, ',')
			}
			x.b = append(x.b, l.name...)
			x.b = append(x.b, `="`...)
			x.b = appendLabelValue(x.b, l.value)
			x.b = append(x.b, '"')
		}
		x.b = append(x.b, '}')
	}
	x.b = append(x.b, ' ')
	x.b = strconv.AppendFloat(x.b, v, 'g', 16, 64)
	x.b = append(x.b, '\n')
}

// appendLabelValue escapes a label value as the text format requires.
func appendLabelValue(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// modelFamily is one per-model counter or gauge and how to read one of
// its series; model is set for the families only the model's own reporter
// moves (the others' series stay 0, as on Triton).
type modelFamily struct {
	name, typ, help string
	value           func(*ModelSeriesState) uint64
	model           func(*ModelMetricsState) float64
	// only, when set, picks the models that have the family (a backend's
	// own metric): one sample each, labelled by model and version.
	only func(*ModelMetricsState) bool
}

// modelFamilies are the per-model families after success and failure, in
// the order Triton prints them.
var modelFamilies = []modelFamily{
	{name: "nv_inference_count", typ: "counter", help: "Number of inferences performed (does not include cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.InferenceCount }},
	{name: "nv_inference_exec_count", typ: "counter", help: "Number of model executions performed (does not include cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.ExecutionCount }},
	{name: "nv_inference_request_duration_us", typ: "counter", help: "Cumulative inference request duration in microseconds (includes cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.RequestUS }},
	{name: "nv_inference_queue_duration_us", typ: "counter", help: "Cumulative inference queuing duration in microseconds (includes cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.QueueUS }},
	{name: "nv_inference_compute_input_duration_us", typ: "counter", help: "Cumulative compute input duration in microseconds (does not include cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.ComputeInputUS }},
	{name: "nv_inference_compute_infer_duration_us", typ: "counter", help: "Cumulative compute inference duration in microseconds (does not include cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.ComputeInferUS }},
	{name: "nv_inference_compute_output_duration_us", typ: "counter", help: "Cumulative inference compute output duration in microseconds (does not include cached requests)",
		value: func(m *ModelSeriesState) uint64 { return m.ComputeOutputUS }},
	{name: "input_byte_size_counter", typ: "counter", help: "Cumulative input byte size of all requests received by the model",
		model: func(m *ModelMetricsState) float64 { return float64(m.InputByteSize) },
		only:  func(m *ModelMetricsState) bool { return m.HasInputByteSize }},
	{name: "nv_inference_pending_request_count", typ: "gauge", help: "Instantaneous number of pending requests awaiting execution per-model.",
		model: func(m *ModelMetricsState) float64 { return float64(m.Pending) }},
	{name: "nv_model_load_duration_secs", typ: "gauge", help: "Model load time in seconds",
		model: func(m *ModelMetricsState) float64 { return m.LoadSeconds }},
}

// seriesOf returns a model's series; a state built without them is one
// series holding the totals.
func seriesOf(m *ModelMetricsState) []ModelSeriesState {
	if len(m.Series) > 0 {
		return m.Series
	}
	return []ModelSeriesState{{
		Success: m.Success, InferenceCount: m.InferenceCount, ExecutionCount: m.ExecutionCount,
		FailureByReason: m.FailureByReason, RequestUS: m.RequestUS, QueueUS: m.QueueUS,
		ComputeInputUS: m.ComputeInputUS, ComputeInferUS: m.ComputeInferUS, ComputeOutputUS: m.ComputeOutputUS,
	}}
}

// modelSample writes one sample of a per-model family, with gpu_uuid first
// when the series has one (labels in alphabetical order), and extra (the
// failure reason) between model and version.
func (x *exposition) modelSample(name string, v float64, m *ModelMetricsState, gpuUUID string, extra ...label) {
	labels := make([]label, 0, 4)
	if gpuUUID != "" {
		labels = append(labels, label{"gpu_uuid", gpuUUID})
	}
	labels = append(labels, label{"model", m.Model})
	labels = append(labels, extra...)
	labels = append(labels, label{"version", m.Version})
	x.sample(name, v, labels...)
}

// backendFamily writes a family a backend keeps for its models, when one
// of them has it.
func (x *exposition) backendFamily(f modelFamily, models []ModelMetricsState) {
	header := false
	for i := range models {
		m := &models[i]
		if !f.only(m) {
			continue
		}
		if !header {
			x.family(f.name, f.typ, f.help)
			header = true
		}
		x.modelSample(f.name, f.model(m), m, "")
	}
}

// gpuFamily is one per-GPU gauge or counter and how to read it.
type gpuFamily struct {
	name, typ, help string
	value           func(*GPUState) float64
}

var gpuFamilies = []gpuFamily{
	{"nv_gpu_utilization", "gauge", "GPU utilization rate [0.0 - 1.0)",
		func(g *GPUState) float64 { return g.Utilization }},
	{"nv_gpu_memory_total_bytes", "gauge", "GPU total memory, in bytes",
		func(g *GPUState) float64 { return float64(g.MemoryTotal) }},
	{"nv_gpu_memory_used_bytes", "gauge", "GPU used memory, in bytes",
		func(g *GPUState) float64 { return float64(g.MemoryUsed) }},
	{"nv_gpu_power_usage", "gauge", "GPU power usage in watts",
		func(g *GPUState) float64 { return g.PowerW }},
	{"nv_gpu_power_limit", "gauge", "GPU power management limit in watts",
		func(g *GPUState) float64 { return g.PowerLimitW }},
	{"nv_energy_consumption", "counter", "GPU energy consumption in joules since the Triton Server started",
		func(g *GPUState) float64 { return g.EnergyJ }},
}

// appendExposition writes the whole /metrics text: per-model families in
// the order Triton prints them, then pinned memory, GPU and CPU gauges.
// Families without series are left out, as prometheus-cpp does.
func appendExposition(b []byte, st MetricsState, cpu cpuState) []byte {
	x := exposition{b: b}
	models := st.Models
	if len(models) > 0 {
		x.family("nv_inference_request_success", "counter", "Number of successful inference requests, all batch sizes")
		for i := range models {
			m := &models[i]
			for _, sr := range seriesOf(m) {
				x.modelSample("nv_inference_request_success", float64(sr.Success), m, sr.GPUUUID)
			}
		}
		x.family("nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes")
		for i := range models {
			m := &models[i]
			for _, sr := range seriesOf(m) {
				for _, reason := range failureReasons {
					x.modelSample("nv_inference_request_failure", float64(sr.FailureByReason[reason]), m, sr.GPUUUID, label{"reason", reason})
				}
			}
		}
		for _, f := range modelFamilies {
			if f.only != nil {
				x.backendFamily(f, models)
				continue
			}
			x.family(f.name, f.typ, f.help)
			for i := range models {
				m := &models[i]
				for _, sr := range seriesOf(m) {
					var v float64
					switch {
					case f.value != nil:
						v = float64(f.value(&sr))
					case sr.GPUUUID == "":
						v = f.model(m)
					}
					x.modelSample(f.name, v, m, sr.GPUUUID)
				}
			}
		}
	}
	x.family("nv_pinned_memory_pool_total_bytes", "gauge", "Pinned memory pool total memory size, in bytes")
	x.sample("nv_pinned_memory_pool_total_bytes", pinnedPoolBytes)
	x.family("nv_pinned_memory_pool_used_bytes", "gauge", "Pinned memory pool used memory size, in bytes")
	x.sample("nv_pinned_memory_pool_used_bytes", 0)
	if len(st.GPUs) > 0 {
		for _, f := range gpuFamilies {
			x.family(f.name, f.typ, f.help)
			for i := range st.GPUs {
				g := &st.GPUs[i]
				x.sample(f.name, f.value(g), label{"gpu_uuid", g.UUID})
			}
		}
	}
	if cpu.Valid {
		x.family("nv_cpu_utilization", "gauge", "CPU utilization rate [0.0 - 1.0]")
		x.sample("nv_cpu_utilization", cpu.Utilization)
		x.family("nv_cpu_memory_total_bytes", "gauge", "CPU total memory (RAM), in bytes")
		x.sample("nv_cpu_memory_total_bytes", float64(cpu.MemoryTotal))
		x.family("nv_cpu_memory_used_bytes", "gauge", "CPU used memory (RAM), in bytes")
		x.sample("nv_cpu_memory_used_bytes", float64(cpu.MemoryUsed))
	}
	return x.b
}
