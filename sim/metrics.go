package sim

import (
	"net/http"
	"slices"
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

// modelFamily is one per-model counter or gauge and how to read it.
type modelFamily struct {
	name, typ, help string
	value           func(*ModelMetricsState) uint64
}

var modelFamilies = []modelFamily{
	{"nv_inference_count", "counter", "Number of inferences performed (does not include cached requests)",
		func(m *ModelMetricsState) uint64 { return m.InferenceCount }},
	{"nv_inference_exec_count", "counter", "Number of model executions performed (does not include cached requests)",
		func(m *ModelMetricsState) uint64 { return m.ExecutionCount }},
	{"nv_inference_pending_request_count", "gauge", "Instantaneous number of pending requests awaiting execution per-model.",
		func(m *ModelMetricsState) uint64 { return m.Pending }},
	{"nv_inference_request_duration_us", "counter", "Cumulative inference request duration in microseconds (includes cached requests)",
		func(m *ModelMetricsState) uint64 { return m.RequestUS }},
	{"nv_inference_queue_duration_us", "counter", "Cumulative inference queuing duration in microseconds (includes cached requests)",
		func(m *ModelMetricsState) uint64 { return m.QueueUS }},
	{"nv_inference_compute_input_duration_us", "counter", "Cumulative compute input duration in microseconds (does not include cached requests)",
		func(m *ModelMetricsState) uint64 { return m.ComputeInputUS }},
	{"nv_inference_compute_infer_duration_us", "counter", "Cumulative compute inference duration in microseconds (does not include cached requests)",
		func(m *ModelMetricsState) uint64 { return m.ComputeInferUS }},
	{"nv_inference_compute_output_duration_us", "counter", "Cumulative inference compute output duration in microseconds (does not include cached requests)",
		func(m *ModelMetricsState) uint64 { return m.ComputeOutputUS }},
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
// the order core registers them, then pinned memory, GPU and CPU gauges.
// Families without series are left out, as prometheus-cpp does.
func appendExposition(b []byte, st MetricsState, cpu cpuState) []byte {
	x := exposition{b: b}
	models := st.Models
	if len(models) > 0 {
		x.family("nv_inference_request_success", "counter", "Number of successful inference requests, all batch sizes")
		for i := range models {
			m := &models[i]
			if len(m.SuccessByGPU) == 0 {
				x.sample("nv_inference_request_success", float64(m.Success), label{"model", m.Model}, label{"version", m.Version})
				continue
			}
			uuids := make([]string, 0, len(m.SuccessByGPU))
			for u := range m.SuccessByGPU {
				uuids = append(uuids, u)
			}
			slices.Sort(uuids)
			for _, u := range uuids {
				v := float64(m.SuccessByGPU[u])
				if u == "" {
					x.sample("nv_inference_request_success", v, label{"model", m.Model}, label{"version", m.Version})
				} else {
					x.sample("nv_inference_request_success", v, label{"gpu_uuid", u}, label{"model", m.Model}, label{"version", m.Version})
				}
			}
		}
		x.family("nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes")
		for i := range models {
			m := &models[i]
			for _, reason := range failureReasons {
				x.sample("nv_inference_request_failure", float64(m.FailureByReason[reason]),
					label{"model", m.Model}, label{"reason", reason}, label{"version", m.Version})
			}
		}
		for _, f := range modelFamilies {
			x.family(f.name, f.typ, f.help)
			for i := range models {
				m := &models[i]
				x.sample(f.name, float64(f.value(m)), label{"model", m.Model}, label{"version", m.Version})
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
