package triton

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// gpuExposition is shaped like Triton's /metrics on a two-GPU box with
// GPU-instance models (success split by gpu_uuid), a CPU-instance model,
// prometheus-cpp's plain-decimal values and no CPU families.
const gpuExposition = `# HELP nv_inference_request_success Number of successful inference requests, all batch sizes
# TYPE nv_inference_request_success counter
nv_inference_request_success{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 30
nv_inference_request_success{gpu_uuid="GPU-bbbb",model="resnet",version="1"} 12
nv_inference_request_success{model="simple",version="1"} 7
# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes
# TYPE nv_inference_request_failure counter
nv_inference_request_failure{gpu_uuid="GPU-aaaa",model="resnet",reason="BACKEND",version="1"} 2
nv_inference_request_failure{gpu_uuid="GPU-bbbb",model="resnet",reason="BACKEND",version="1"} 1
nv_inference_request_failure{gpu_uuid="GPU-aaaa",model="resnet",reason="REJECTED",version="1"} 4
nv_inference_request_failure{model="simple",reason="CANCELED",version="1"} 0
nv_inference_request_failure{model="simple",reason="OTHER",version="1"} 0
# HELP nv_inference_count Number of inferences performed (does not include cached requests)
# TYPE nv_inference_count counter
nv_inference_count{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 240
nv_inference_count{gpu_uuid="GPU-bbbb",model="resnet",version="1"} 96
nv_inference_count{model="simple",version="1"} 7
# HELP nv_inference_exec_count Number of model executions performed (does not include cached requests)
# TYPE nv_inference_exec_count counter
nv_inference_exec_count{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 30
nv_inference_exec_count{gpu_uuid="GPU-bbbb",model="resnet",version="1"} 12
nv_inference_exec_count{model="simple",version="1"} 5
# HELP nv_inference_request_duration_us Cumulative inference request duration in microseconds (includes cached requests)
# TYPE nv_inference_request_duration_us counter
nv_inference_request_duration_us{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 1500000
nv_inference_request_duration_us{gpu_uuid="GPU-bbbb",model="resnet",version="1"} 600000
nv_inference_request_duration_us{model="simple",version="1"} 7000.5
# HELP nv_inference_queue_duration_us Cumulative inference queuing duration in microseconds (includes cached requests)
# TYPE nv_inference_queue_duration_us counter
nv_inference_queue_duration_us{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 300000
nv_inference_queue_duration_us{gpu_uuid="GPU-bbbb",model="resnet",version="1"} 100000
nv_inference_queue_duration_us{model="simple",version="1"} 70
# HELP nv_inference_compute_input_duration_us Cumulative compute input duration in microseconds (does not include cached requests)
# TYPE nv_inference_compute_input_duration_us counter
nv_inference_compute_input_duration_us{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 1000
nv_inference_compute_input_duration_us{model="simple",version="1"} 1
# HELP nv_inference_compute_infer_duration_us Cumulative compute inference duration in microseconds (does not include cached requests)
# TYPE nv_inference_compute_infer_duration_us counter
nv_inference_compute_infer_duration_us{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 1100000
nv_inference_compute_infer_duration_us{gpu_uuid="GPU-bbbb",model="resnet",version="1"} 450000
nv_inference_compute_infer_duration_us{model="simple",version="1"} 700
# HELP nv_inference_compute_output_duration_us Cumulative inference compute output duration in microseconds (does not include cached requests)
# TYPE nv_inference_compute_output_duration_us counter
nv_inference_compute_output_duration_us{gpu_uuid="GPU-aaaa",model="resnet",version="1"} 2000
nv_inference_compute_output_duration_us{model="simple",version="1"} 7
# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution per-model.
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="resnet",version="1"} 3
nv_inference_pending_request_count{model="simple",version="1"} 0
# HELP nv_model_load_duration_secs Model load time in seconds
# TYPE nv_model_load_duration_secs gauge
nv_model_load_duration_secs{model="resnet",version="1"} 2.5
# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-bbbb"} 0.25
nv_gpu_utilization{gpu_uuid="GPU-aaaa"} 0.87
# HELP nv_gpu_memory_total_bytes GPU total memory, in bytes
# TYPE nv_gpu_memory_total_bytes gauge
nv_gpu_memory_total_bytes{gpu_uuid="GPU-aaaa"} 85899345920
nv_gpu_memory_total_bytes{gpu_uuid="GPU-bbbb"} 85899345920
# HELP nv_gpu_memory_used_bytes GPU used memory, in bytes
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-aaaa"} 1234567168
nv_gpu_memory_used_bytes{gpu_uuid="GPU-bbbb"} 524288000
# HELP nv_gpu_power_usage GPU power usage in watts
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="GPU-aaaa"} 301.5
nv_gpu_power_usage{gpu_uuid="GPU-bbbb"} 95.25
# HELP nv_gpu_power_limit GPU power management limit in watts
# TYPE nv_gpu_power_limit gauge
nv_gpu_power_limit{gpu_uuid="GPU-aaaa"} 700
nv_gpu_power_limit{gpu_uuid="GPU-bbbb"} 700
# HELP nv_energy_consumption GPU energy consumption in joules since the Triton Server started
# TYPE nv_energy_consumption counter
nv_energy_consumption{gpu_uuid="GPU-aaaa"} 150000000000
nv_energy_consumption{gpu_uuid="GPU-bbbb"} 1000000
`

func TestParseMetricsGPUBox(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(gpuExposition))
	if err != nil {
		t.Fatal(err)
	}
	if m.HasCPU {
		t.Error("HasCPU is set, but the text has no nv_cpu_* family")
	}
	want := []GPUMetrics{
		{UUID: "GPU-bbbb", Utilization: 0.25, MemoryUsed: 524288000, MemoryTotal: 85899345920, PowerUsage: 95.25, PowerLimit: 700, Energy: 1000000,
			HasUtilization: true, HasMemory: true, HasPower: true},
		{UUID: "GPU-aaaa", Utilization: 0.87, MemoryUsed: 1234567168, MemoryTotal: 85899345920, PowerUsage: 301.5, PowerLimit: 700, Energy: 150000000000,
			HasUtilization: true, HasMemory: true, HasPower: true},
	}
	if len(m.GPUs) != len(want) {
		t.Fatalf("GPUs = %+v; want %d", m.GPUs, len(want))
	}
	for i := range want {
		if m.GPUs[i] != want[i] {
			t.Errorf("GPU %d = %+v; want %+v", i, m.GPUs[i], want[i])
		}
	}
	resnet := m.Models[ModelKey{"resnet", "1"}]
	if resnet == nil {
		t.Fatalf("no resnet in %v", m.Models)
	}
	// GPU-split series add up to one number per model version.
	wantResnet := ModelMetrics{
		RequestSuccess: 42, InferenceCount: 336, ExecutionCount: 42, PendingRequests: 3, HasPending: true,
		RequestDurationUS: 2100000, QueueDurationUS: 400000, ComputeInputUS: 1000, ComputeInferUS: 1550000, ComputeOutputUS: 2000,
	}
	got := *resnet
	got.RequestFailure = nil
	if !reflect.DeepEqual(got, wantResnet) {
		t.Errorf("resnet = %+v; want %+v", got, wantResnet)
	}
	if f := resnet.RequestFailure; len(f) != 2 || f["BACKEND"] != 3 || f["REJECTED"] != 4 {
		t.Errorf("resnet failures = %v; want BACKEND 3, REJECTED 4", f)
	}
	simple := m.Models[ModelKey{"simple", "1"}]
	if simple == nil || simple.RequestSuccess != 7 || simple.RequestDurationUS != 7000.5 || !simple.HasPending ||
		simple.PendingRequests != 0 || len(simple.RequestFailure) != 2 {
		t.Errorf("simple = %+v", simple)
	}
	if len(m.Models) != 2 {
		t.Errorf("models = %v; want resnet and simple", m.Models)
	}
}

func TestParseMetricsCPUOnly(t *testing.T) {
	text := `# HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]
# TYPE nv_cpu_utilization gauge
nv_cpu_utilization 0.125
# HELP nv_cpu_memory_total_bytes CPU total memory (RAM), in bytes
# TYPE nv_cpu_memory_total_bytes gauge
nv_cpu_memory_total_bytes 67108864000
# HELP nv_cpu_memory_used_bytes CPU used memory (RAM), in bytes
# TYPE nv_cpu_memory_used_bytes gauge
nv_cpu_memory_used_bytes 8.5e+09
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="m",version="2"} 1
`
	m, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasCPU || m.CPUUtilization != 0.125 || m.CPUMemoryTotal != 67108864000 || m.CPUMemoryUsed != 8.5e9 {
		t.Errorf("CPU = %v %v %v %v", m.HasCPU, m.CPUUtilization, m.CPUMemoryUsed, m.CPUMemoryTotal)
	}
	if len(m.GPUs) != 0 {
		t.Errorf("GPUs = %v; want none", m.GPUs)
	}
	mm := m.Models[ModelKey{"m", "2"}]
	if mm == nil || mm.RequestSuccess != 1 || mm.HasPending || mm.RequestFailure != nil {
		t.Errorf("model m = %+v; want success 1 and nothing else reported", mm)
	}
}

func TestParseMetricsEmptyAndBad(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(""))
	if err != nil || m.HasCPU || m.GPUs != nil || m.Models != nil {
		t.Errorf("empty text = %+v, %v; want nothing reported", m, err)
	}
	if _, err := ParseMetrics(strings.NewReader("nv_gpu_utilization{gpu_uuid=\"x\" 1\n")); err == nil {
		t.Error("malformed text parsed without error")
	}
}

func TestScrapeMetrics(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(gpuExposition))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	m, err := ScrapeMetrics(ctx, nil, srv.URL+"/metrics")
	if err != nil || len(m.GPUs) != 2 || m.Models[ModelKey{"simple", "1"}] == nil {
		t.Errorf("ScrapeMetrics = %+v, %v", m, err)
	}
	if _, err := ScrapeMetrics(ctx, srv.Client(), srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404 scrape error = %v", err)
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + lis.Addr().String() + "/metrics"
	lis.Close()
	_, err = ScrapeMetrics(ctx, nil, dead)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot scrape Triton metrics at "+dead+": connection refused") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("unreachable scrape error = %v", err)
	}
}
