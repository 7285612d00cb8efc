package record

import (
	"time"

	"github.com/tritontop/tritontop/stats"
)

// Summary is a whole run in one value: the summary line of a run file, the
// text printed at the end of a headless run and the JSON of --json.
type Summary struct {
	Model    string `json:"model"`
	Version  string `json:"version,omitempty"`
	URL      string `json:"url"`
	Protocol string `json:"protocol"`

	Start    time.Time     `json:"start_time"`
	End      time.Time     `json:"end_time"`
	Duration time.Duration `json:"duration_ns"`
	Ticks    int           `json:"ticks"`
	// Load is the load profile at the end of the run.
	Load stats.Load `json:"load"`

	// Client is the whole run as the client saw it, merged from every tick
	// (histograms included), so that a reset of the dashboard's windows
	// during the run does not shorten it.
	Client stats.ClientStats `json:"client"`
	// Server, Metrics and ClientCPU aggregate every tick of the run.
	Server    ServerSummary  `json:"server"`
	Metrics   MetricsSummary `json:"metrics"`
	ClientCPU ClientCPU      `json:"client_cpu"`

	// Steps are the run's load levels in recorded order.
	Steps []Step `json:"steps,omitempty"`
}

// Step is one load level: consecutive ticks with the same load target (mode,
// concurrency or rate, distribution, schedule step). A sweep has one per
// concurrency or rate; a live run one per change of load. Paused ticks stay
// in their step.
type Step struct {
	// Load is the target, with InFlight and Paused as at the step's last tick.
	Load     stats.Load    `json:"load"`
	FirstSeq int           `json:"first_seq"`
	LastSeq  int           `json:"last_seq"`
	Ticks    int           `json:"ticks"`
	Duration time.Duration `json:"duration_ns"`
	// Client sums the step's ticks. Its latency percentiles come from the
	// ticks' merged histograms, with the exact min, max and mean of the
	// ticks' own summaries.
	Client stats.ClientStats `json:"client"`
	// Approximate is set when a tick with successes carried no usable
	// histogram: the step's percentiles are then the count-weighted average
	// of the ticks' percentiles, not exact ones.
	Approximate bool           `json:"approximate,omitempty"`
	Server      ServerSummary  `json:"server"`
	Metrics     MetricsSummary `json:"metrics"`
	ClientCPU   ClientCPU      `json:"client_cpu"`
}

// ServerSummary is Triton's own account of a span of ticks.
//
// The per-request averages are the ticks' averages weighted by their
// counts: request and queue time by the success count, compute times by
// success minus cache hits (Triton's compute count). Each tick's average is
// Δns/Δcount of that tick, so the weighted average is Σ Δns / Σ Δcount over
// the span, which is perf_analyzer's Δns/Δcount between the span's first and
// last ModelStatistics readings, up to each tick's rounding of its average
// (under a nanosecond per request). Overhead is then request − queue −
// compute, floored at 0, as perf_analyzer computes it. Ticks without
// statistics, or whose counters went backwards (Reset), are left out.
type ServerSummary struct {
	// ServerStats holds the span's counts and per-request averages;
	// Available is set when at least one tick had server statistics.
	stats.ServerStats
	Ticks int `json:"ticks"`
}

// MetricsSummary is Triton's metrics endpoint over a span of ticks.
type MetricsSummary struct {
	// Ticks counts the ticks whose metrics were read.
	Ticks int          `json:"ticks"`
	GPUs  []GPUSummary `json:"gpus,omitempty"`
	// Server CPU (0..1), valid when HasCPU is set.
	HasCPU bool    `json:"has_cpu,omitempty"`
	CPUAvg float64 `json:"cpu_avg,omitempty"`
	CPUMax float64 `json:"cpu_max,omitempty"`
	// Pending requests, valid when HasPending is set.
	HasPending bool    `json:"has_pending,omitempty"`
	PendingAvg float64 `json:"pending_avg,omitempty"`
	PendingMax float64 `json:"pending_max,omitempty"`
}

// GPUSummary is one server GPU over a span of ticks: the averages and maxima
// perf_analyzer reports (Avg GPU Utilization, Avg GPU Power Usage, Max GPU
// Memory Usage, Total GPU Memory). Each gauge is averaged over the ticks
// that reported it, and is valid only when its Has* flag is set: a gauge the
// server never reported is missing, not zero.
type GPUSummary struct {
	UUID string `json:"uuid"`
	Name string `json:"name,omitempty"`
	// Ticks counts the ticks that reported this GPU.
	Ticks          int     `json:"ticks"`
	UtilizationAvg float64 `json:"utilization_avg"` // 0..1
	UtilizationMax float64 `json:"utilization_max"`
	PowerAvgW      float64 `json:"power_avg_w"`
	PowerMaxW      float64 `json:"power_max_w"`
	MemoryUsedMax  float64 `json:"memory_used_max_bytes"`
	MemoryTotal    float64 `json:"memory_total_bytes"`
	HasUtilization bool    `json:"has_utilization,omitempty"`
	HasMemory      bool    `json:"has_memory,omitempty"`
	HasPower       bool    `json:"has_power,omitempty"`
}

// ClientCPU is tritontop's own CPU cost over a span of ticks.
type ClientCPU struct {
	// AvgCores and MaxCores are the process's CPU use in cores.
	AvgCores float64 `json:"avg_cores"`
	MaxCores float64 `json:"max_cores"`
	// PerRequest is CPU time over finished requests: Σ(cores × tick
	// length) / Σ requests.
	PerRequest time.Duration `json:"per_request_ns"`
	// HostAvg is the client host's average CPU use, 0..1.
	HostAvg float64 `json:"host_avg"`
}
