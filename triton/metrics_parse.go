package triton

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// gpuFamilies are read in this order, which fixes the order of
// Metrics.GPUs: the order of first appearance walking these families.
var gpuFamilies = [...]string{
	"nv_gpu_utilization",
	"nv_gpu_memory_total_bytes",
	"nv_gpu_memory_used_bytes",
	"nv_gpu_power_usage",
	"nv_gpu_power_limit",
	"nv_energy_consumption",
}

// ParseMetrics reads Triton's Prometheus text exposition into Metrics.
// Unknown families are ignored; families the server did not expose stay
// absent.
func ParseMetrics(r io.Reader) (*Metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics text: %w", err)
	}
	m := &Metrics{}
	parseGPUs(m, fams)
	if f := fams["nv_cpu_utilization"]; f != nil && len(f.GetMetric()) > 0 {
		m.HasCPU = true
		m.CPUUtilization = metricValue(f.GetMetric()[0])
	}
	if f := fams["nv_cpu_memory_used_bytes"]; f != nil && len(f.GetMetric()) > 0 {
		m.CPUMemoryUsed = metricValue(f.GetMetric()[0])
	}
	if f := fams["nv_cpu_memory_total_bytes"]; f != nil && len(f.GetMetric()) > 0 {
		m.CPUMemoryTotal = metricValue(f.GetMetric()[0])
	}
	parseModels(m, fams)
	return m, nil
}

func parseGPUs(m *Metrics, fams map[string]*dto.MetricFamily) {
	index := map[string]int{}
	for _, name := range gpuFamilies {
		f := fams[name]
		if f == nil {
			continue
		}
		for _, s := range f.GetMetric() {
			uuid := label(s, "gpu_uuid")
			if uuid == "" {
				continue
			}
			i, ok := index[uuid]
			if !ok {
				i = len(m.GPUs)
				index[uuid] = i
				m.GPUs = append(m.GPUs, GPUMetrics{UUID: uuid})
			}
			g := &m.GPUs[i]
			v := metricValue(s)
			switch name {
			case "nv_gpu_utilization":
				g.Utilization, g.HasUtilization = v, true
			case "nv_gpu_memory_total_bytes":
				g.MemoryTotal, g.HasMemory = v, true
			case "nv_gpu_memory_used_bytes":
				g.MemoryUsed, g.HasMemory = v, true
			case "nv_gpu_power_usage":
				g.PowerUsage, g.HasPower = v, true
			case "nv_gpu_power_limit":
				g.PowerLimit, g.HasPower = v, true
			case "nv_energy_consumption":
				g.Energy = v
			}
		}
	}
}

// modelCounter returns the field of ModelMetrics a per-model family adds
// to, or nil for families that are not summed this way.
func modelCounter(mm *ModelMetrics, family string) *float64 {
	switch family {
	case "nv_inference_request_success":
		return &mm.RequestSuccess
	case "nv_inference_count":
		return &mm.InferenceCount
	case "nv_inference_exec_count":
		return &mm.ExecutionCount
	case "nv_inference_request_duration_us":
		return &mm.RequestDurationUS
	case "nv_inference_queue_duration_us":
		return &mm.QueueDurationUS
	case "nv_inference_compute_input_duration_us":
		return &mm.ComputeInputUS
	case "nv_inference_compute_infer_duration_us":
		return &mm.ComputeInferUS
	case "nv_inference_compute_output_duration_us":
		return &mm.ComputeOutputUS
	case "nv_inference_pending_request_count":
		mm.HasPending = true
		return &mm.PendingRequests
	}
	return nil
}

var modelFamilies = [...]string{
	"nv_inference_request_success",
	"nv_inference_request_failure",
	"nv_inference_count",
	"nv_inference_exec_count",
	"nv_inference_pending_request_count",
	"nv_inference_request_duration_us",
	"nv_inference_queue_duration_us",
	"nv_inference_compute_input_duration_us",
	"nv_inference_compute_infer_duration_us",
	"nv_inference_compute_output_duration_us",
}

// parseModels sums each per-model family over the series of one model
// version, which Triton splits by gpu_uuid for GPU instances.
func parseModels(m *Metrics, fams map[string]*dto.MetricFamily) {
	for _, name := range modelFamilies {
		f := fams[name]
		if f == nil {
			continue
		}
		for _, s := range f.GetMetric() {
			key := ModelKey{Model: label(s, "model"), Version: label(s, "version")}
			if key.Model == "" {
				continue
			}
			if m.Models == nil {
				m.Models = map[ModelKey]*ModelMetrics{}
			}
			mm := m.Models[key]
			if mm == nil {
				mm = &ModelMetrics{}
				m.Models[key] = mm
			}
			v := metricValue(s)
			if name == "nv_inference_request_failure" {
				if mm.RequestFailure == nil {
					mm.RequestFailure = map[string]float64{}
				}
				mm.RequestFailure[label(s, "reason")] += v
				continue
			}
			*modelCounter(mm, name) += v
		}
	}
}

func label(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// metricValue reads a sample whatever type its family was declared with.
func metricValue(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.GetCounter().GetValue()
	case s.Gauge != nil:
		return s.GetGauge().GetValue()
	case s.Untyped != nil:
		return s.GetUntyped().GetValue()
	}
	return 0
}

// ScrapeMetrics fetches and parses a /metrics URL. hc nil means a plain
// http.Client; ctx bounds the whole scrape.
func ScrapeMetrics(ctx context.Context, hc *http.Client, url string) (*Metrics, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics URL %s: %w", textsafe.Quote(url), err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("scrape Triton metrics at %s: %w", url, ctx.Err())
		}
		return nil, fmt.Errorf("cannot scrape Triton metrics at %s: %s (is the metrics port open? Triton serves it on %d unless --allow-metrics=false)",
			url, dialReason(err), DefaultMetricsPort)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape Triton metrics at %s: HTTP %d %s (is this Triton's metrics URL?)",
			url, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	m, err := ParseMetrics(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape Triton metrics at %s: %w", url, err)
	}
	return m, nil
}
