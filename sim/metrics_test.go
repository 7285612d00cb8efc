package sim

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/triton"
)

func TestExpositionText(t *testing.T) {
	st := MetricsState{
		Models: []ModelMetricsState{{
			Model: "m", Version: "1", Pending: 2, LoadSeconds: 1.5,
			Series: []ModelSeriesState{
				{FailureByReason: map[string]uint64{"REJECTED": 4}},
				{GPUUUID: "GPU-a", Success: 3, InferenceCount: 5, ExecutionCount: 3,
					FailureByReason: map[string]uint64{"BACKEND": 1},
					RequestUS:       1234567, QueueUS: 1000, ComputeInputUS: 10, ComputeInferUS: 20000000, ComputeOutputUS: 5},
				{GPUUUID: "GPU-b", Success: 2, InferenceCount: 4, ExecutionCount: 1, RequestUS: 7},
			},
		}},
		GPUs: []GPUState{{UUID: "GPU-a", Utilization: 0.25, MemoryUsed: 1234567168, MemoryTotal: 85899345920,
			PowerW: 312.5, PowerLimitW: 700, EnergyJ: 1500000}},
	}
	got := string(appendExposition(nil, st, cpuState{Utilization: 0.5, MemoryTotal: 150000000000, MemoryUsed: 1000000, Valid: true}))
	want := `# HELP nv_inference_request_success Number of successful inference requests, all batch sizes
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="m",version="1"} 0
nv_inference_request_success{gpu_uuid="GPU-a",model="m",version="1"} 3
nv_inference_request_success{gpu_uuid="GPU-b",model="m",version="1"} 2
# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes
# TYPE nv_inference_request_failure counter
nv_inference_request_failure{model="m",reason="REJECTED",version="1"} 4
nv_inference_request_failure{model="m",reason="CANCELED",version="1"} 0
nv_inference_request_failure{model="m",reason="BACKEND",version="1"} 0
nv_inference_request_failure{model="m",reason="OTHER",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-a",model="m",reason="REJECTED",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-a",model="m",reason="CANCELED",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-a",model="m",reason="BACKEND",version="1"} 1
nv_inference_request_failure{gpu_uuid="GPU-a",model="m",reason="OTHER",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-b",model="m",reason="REJECTED",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-b",model="m",reason="CANCELED",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-b",model="m",reason="BACKEND",version="1"} 0
nv_inference_request_failure{gpu_uuid="GPU-b",model="m",reason="OTHER",version="1"} 0
# HELP nv_inference_count Number of inferences performed (does not include cached requests)
# TYPE nv_inference_count counter
nv_inference_count{model="m",version="1"} 0
nv_inference_count{gpu_uuid="GPU-a",model="m",version="1"} 5
nv_inference_count{gpu_uuid="GPU-b",model="m",version="1"} 4
# HELP nv_inference_exec_count Number of model executions performed (does not include cached requests)
# TYPE nv_inference_exec_count counter
nv_inference_exec_count{model="m",version="1"} 0
nv_inference_exec_count{gpu_uuid="GPU-a",model="m",version="1"} 3
nv_inference_exec_count{gpu_uuid="GPU-b",model="m",version="1"} 1
# HELP nv_inference_request_duration_us Cumulative inference request duration in microseconds (includes cached requests)
# TYPE nv_inference_request_duration_us counter
nv_inference_request_duration_us{model="m",version="1"} 0
nv_inference_request_duration_us{gpu_uuid="GPU-a",model="m",version="1"} 1234567
nv_inference_request_duration_us{gpu_uuid="GPU-b",model="m",version="1"} 7
# HELP nv_inference_queue_duration_us Cumulative inference queuing duration in microseconds (includes cached requests)
# TYPE nv_inference_queue_duration_us counter
nv_inference_queue_duration_us{model="m",version="1"} 0
nv_inference_queue_duration_us{gpu_uuid="GPU-a",model="m",version="1"} 1000
nv_inference_queue_duration_us{gpu_uuid="GPU-b",model="m",version="1"} 0
# HELP nv_inference_compute_input_duration_us Cumulative compute input duration in microseconds (does not include cached requests)
# TYPE nv_inference_compute_input_duration_us counter
nv_inference_compute_input_duration_us{model="m",version="1"} 0
nv_inference_compute_input_duration_us{gpu_uuid="GPU-a",model="m",version="1"} 10
nv_inference_compute_input_duration_us{gpu_uuid="GPU-b",model="m",version="1"} 0
# HELP nv_inference_compute_infer_duration_us Cumulative compute inference duration in microseconds (does not include cached requests)
# TYPE nv_inference_compute_infer_duration_us counter
nv_inference_compute_infer_duration_us{model="m",version="1"} 0
nv_inference_compute_infer_duration_us{gpu_uuid="GPU-a",model="m",version="1"} 20000000
nv_inference_compute_infer_duration_us{gpu_uuid="GPU-b",model="m",version="1"} 0
# HELP nv_inference_compute_output_duration_us Cumulative inference compute output duration in microseconds (does not include cached requests)
# TYPE nv_inference_compute_output_duration_us counter
nv_inference_compute_output_duration_us{model="m",version="1"} 0
nv_inference_compute_output_duration_us{gpu_uuid="GPU-a",model="m",version="1"} 5
nv_inference_compute_output_duration_us{gpu_uuid="GPU-b",model="m",version="1"} 0
# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution per-model.
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="m",version="1"} 2
nv_inference_pending_request_count{gpu_uuid="GPU-a",model="m",version="1"} 0
nv_inference_pending_request_count{gpu_uuid="GPU-b",model="m",version="1"} 0
# HELP nv_model_load_duration_secs Model load time in seconds
# TYPE nv_model_load_duration_secs gauge
nv_model_load_duration_secs{model="m",version="1"} 1.5
nv_model_load_duration_secs{gpu_uuid="GPU-a",model="m",version="1"} 0
nv_model_load_duration_secs{gpu_uuid="GPU-b",model="m",version="1"} 0
# HELP nv_pinned_memory_pool_total_bytes Pinned memory pool total memory size, in bytes
# TYPE nv_pinned_memory_pool_total_bytes gauge
nv_pinned_memory_pool_total_bytes 268435456
# HELP nv_pinned_memory_pool_used_bytes Pinned memory pool used memory size, in bytes
# TYPE nv_pinned_memory_pool_used_bytes gauge
nv_pinned_memory_pool_used_bytes 0
# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-a"} 0.25
# HELP nv_gpu_memory_total_bytes GPU total memory, in bytes
# TYPE nv_gpu_memory_total_bytes gauge
nv_gpu_memory_total_bytes{gpu_uuid="GPU-a"} 85899345920
# HELP nv_gpu_memory_used_bytes GPU used memory, in bytes
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a"} 1234567168
# HELP nv_gpu_power_usage GPU power usage in watts
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="GPU-a"} 312.5
# HELP nv_gpu_power_limit GPU power management limit in watts
# TYPE nv_gpu_power_limit gauge
nv_gpu_power_limit{gpu_uuid="GPU-a"} 700
# HELP nv_energy_consumption GPU energy consumption in joules since the Triton Server started
# TYPE nv_energy_consumption counter
nv_energy_consumption{gpu_uuid="GPU-a"} 1500000
# HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]
# TYPE nv_cpu_utilization gauge
nv_cpu_utilization 0.5
# HELP nv_cpu_memory_total_bytes CPU total memory (RAM), in bytes
# TYPE nv_cpu_memory_total_bytes gauge
nv_cpu_memory_total_bytes 150000000000
# HELP nv_cpu_memory_used_bytes CPU used memory (RAM), in bytes
# TYPE nv_cpu_memory_used_bytes gauge
nv_cpu_memory_used_bytes 1000000
`
	if got != want {
		t.Fatalf("exposition:\n%s\nwant:\n%s", got, want)
	}
	// Label values are escaped as the text format requires.
	esc := string(appendExposition(nil, MetricsState{Models: []ModelMetricsState{{Model: `a"b\c`, Version: "1"}}}, cpuState{}))
	if !strings.Contains(esc, `nv_inference_count{model="a\"b\\c",version="1"} 0`) {
		t.Fatalf("escaping: %s", esc)
	}
}

// perfAnalyzerGauges are the GPU families perf_analyzer reads with its
// regex `\n<name>\{gpu_uuid="([^"]+)"\} (\d+\.?\d*)`.
var perfAnalyzerGauges = []string{"nv_gpu_utilization", "nv_gpu_power_usage", "nv_gpu_memory_used_bytes", "nv_gpu_memory_total_bytes"}

func TestMetricsEndpoint(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	for range 5 {
		if _, err := raw.ModelInfer(ctx, simpleRequest(3)); err != nil {
			t.Fatal(err)
		}
	}
	s.Engine().SetFaults(Faults{ErrorRate: 1})
	for range 2 {
		if _, err := raw.ModelInfer(ctx, simpleRequest(1)); err == nil {
			t.Fatal("request succeeded with error rate 1")
		}
	}
	s.Engine().SetFaults(Faults{})

	code, hdr, body := httpDo(t, "GET", "http://"+s.MetricsAddr()+"/metrics", nil, nil)
	if code != 200 || hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("GET /metrics = %d %q", code, hdr.Get("Content-Type"))
	}
	text := "\n" + string(body)
	ngpu := len(s.Engine().Metrics().GPUs)
	if ngpu == 0 {
		t.Fatal("no simulated GPUs")
	}
	for _, name := range perfAnalyzerGauges {
		re := regexp.MustCompile(`\n` + name + `\{gpu_uuid="([^"]+)"\} (\d+\.?\d*)`)
		if m := re.FindAllStringSubmatch(text, -1); len(m) != ngpu {
			t.Fatalf("perf_analyzer's regex for %s matched %d lines, want %d:\n%s", name, len(m), ngpu, body)
		}
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && strings.ContainsAny(line[strings.LastIndexByte(line, ' '):], "eE") {
			t.Fatalf("value with an exponent: %q", line)
		}
	}

	m, err := triton.ParseMetrics(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("ParseMetrics: %v", err)
	}
	if !m.HasCPU || m.CPUMemoryTotal <= 0 || m.CPUUtilization < 0 || m.CPUUtilization > 1 {
		t.Fatalf("CPU gauges: %+v", m)
	}
	checkMetricsMatchStats(t, s, m, "simple")
	mm := m.Models[triton.ModelKey{Model: "simple", Version: "1"}]
	if mm.RequestFailure["BACKEND"] != 2 {
		t.Fatalf("BACKEND failures = %v, want 2", mm.RequestFailure)
	}
	if !strings.Contains(string(body), `nv_inference_request_success{gpu_uuid="`) {
		t.Fatalf("GPU model's success counter is not split by gpu_uuid:\n%s", body)
	}

	code, _, _ = httpDo(t, "GET", "http://"+s.MetricsAddr()+"/other", nil, nil)
	if code != 404 {
		t.Fatalf("GET /other on the metrics port = %d, want 404", code)
	}
}

// checkMetricsMatchStats compares a model's /metrics counters with its
// ModelStatistics, as Triton keeps them in step.
func checkMetricsMatchStats(t *testing.T, s *Server, m *triton.Metrics, model string) {
	t.Helper()
	st, err := s.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	ms := st.GetModelStats()[0]
	is := ms.GetInferenceStats()
	mm := m.Models[triton.ModelKey{Model: model, Version: ms.GetVersion()}]
	if mm == nil {
		t.Fatalf("no metrics for %s", model)
	}
	check := func(what string, got float64, want uint64) {
		t.Helper()
		if got != float64(want) {
			t.Errorf("%s: metrics %v, statistics %d", what, got, want)
		}
	}
	check("request success", mm.RequestSuccess, is.GetSuccess().GetCount())
	check("inference count", mm.InferenceCount, ms.GetInferenceCount())
	check("execution count", mm.ExecutionCount, ms.GetExecutionCount())
	var failures float64
	for _, v := range mm.RequestFailure {
		failures += v
	}
	check("failures", failures, is.GetFail().GetCount())
	// Metrics truncate each request's ns to µs, so the sum is at most the
	// statistics total and at most one µs per request below it.
	within := func(what string, us float64, d interface{ GetNs() uint64 }, n uint64) {
		t.Helper()
		hi := float64(d.GetNs() / 1000)
		if us > hi || us < hi-float64(n)-1 {
			t.Errorf("%s: metrics %v µs, statistics %d ns over %d requests", what, us, d.GetNs(), n)
		}
	}
	n := is.GetSuccess().GetCount()
	within("request duration", mm.RequestDurationUS, is.GetSuccess(), n)
	within("queue duration", mm.QueueDurationUS, is.GetQueue(), n)
	within("compute input", mm.ComputeInputUS, is.GetComputeInput(), n)
	within("compute infer", mm.ComputeInferUS, is.GetComputeInfer(), n)
	within("compute output", mm.ComputeOutputUS, is.GetComputeOutput(), n)
}

// TestMetricsEveryModelFamilySplitByGPU checks Triton's label sets: each
// KIND_GPU instance's reporter adds a gpu_uuid series to every per-model
// family, next to the model's own series without gpu_uuid, and the work
// its instances did is counted under gpu_uuid, not under the model's own.
func TestMetricsEveryModelFamilySplitByGPU(t *testing.T) {
	s := startSim(t, testRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	for range 3 {
		if _, err := raw.ModelInfer(ctxT(t), simpleRequest(2)); err != nil {
			t.Fatal(err)
		}
	}
	uuid := s.Engine().Metrics().GPUs[0].UUID
	_, _, body := httpDo(t, "GET", "http://"+s.MetricsAddr()+"/metrics", nil, nil)
	for _, want := range []string{
		`nv_inference_request_success{model="simple",version="1"} 0`,
		`nv_inference_count{model="simple",version="1"} 0`,
		`nv_inference_request_failure{gpu_uuid="` + uuid + `",model="simple",reason="BACKEND",version="1"} 0`,
		`nv_inference_pending_request_count{model="simple",version="1"} 0`,
		`nv_inference_pending_request_count{gpu_uuid="` + uuid + `",model="simple",version="1"} 0`,
		`nv_inference_compute_infer_duration_us{model="simple",version="1"} 0`,
		"# TYPE nv_model_load_duration_secs gauge",
	} {
		if !strings.Contains(string(body), "\n"+want+"\n") {
			t.Errorf("missing line %q", want)
		}
	}
	for _, family := range []string{"nv_inference_request_duration_us", "nv_inference_queue_duration_us",
		"nv_inference_compute_input_duration_us", "nv_inference_compute_output_duration_us", "nv_model_load_duration_secs"} {
		if !strings.Contains(string(body), "\n"+family+`{gpu_uuid="`+uuid+`",model="simple",version="1"} `) {
			t.Errorf("%s has no gpu_uuid series for the GPU model", family)
		}
	}
	// "simple" has one instance on each GPU: their series share the work.
	for family, want := range map[string]float64{"nv_inference_request_success": 3, "nv_inference_count": 6, "nv_inference_exec_count": 3} {
		if got := gpuSeriesSum(string(body), family, "simple"); got != want {
			t.Errorf("Σ %s over gpu_uuid series = %v, want %v", family, got, want)
		}
	}
	// A CPU-only model has the model's own series alone.
	if strings.Contains(string(body), `gpu_uuid="`+uuid+`",model="nobatch"`) {
		t.Errorf("CPU model with a gpu_uuid series:\n%s", body)
	}
	m, err := triton.ParseMetrics(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	checkMetricsMatchStats(t, s, m, "simple")
	if t.Failed() {
		t.Logf("exposition:\n%s", body)
	}
}

// gpuSeriesSum adds up the values of a family's gpu_uuid series for model.
func gpuSeriesSum(body, family, model string) float64 {
	var sum float64
	for line := range strings.SplitSeq(body, "\n") {
		if !strings.HasPrefix(line, family+`{gpu_uuid="`) || !strings.Contains(line, `,model="`+model+`",`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}
