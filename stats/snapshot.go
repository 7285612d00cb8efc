// Package stats turns the driver's Results, the server's statistics and
// metrics, and the client machine's own load into one Snapshot per tick. A
// Snapshot is the single contract between measuring and showing: the TUI,
// the record file, replay, reports and capacity planning read Snapshots and
// nothing else.
package stats

import (
	"time"

	"github.com/tritontop/tritontop/load"
)

// Snapshot is everything measured in one tick. It is a plain value, encoded
// as one JSON line per tick in a run file (record package), so its field
// names and JSON tags are part of the run-file schema: add fields, never
// rename them.
type Snapshot struct {
	// Seq numbers ticks from 1.
	Seq int `json:"seq"`
	// Repeat is the tick's repeat of a run of --repeat N (1 to N; 0 for a
	// run without repeats). Each repeat numbers its ticks from 1.
	Repeat int `json:"repeat,omitempty"`
	// Time is the wall-clock end of the tick.
	Time time.Time `json:"time"`
	// Elapsed is the run time at the end of the tick.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Interval is the tick's length.
	Interval time.Duration `json:"interval_ns"`
	// Paused is the part of Interval during which the load was paused
	// and idle (every model's, in a run over several): from when the
	// requests in flight at the pause had finished. The client's rates
	// are over the rest, the time load was applied or its requests ran:
	// Tick.Duration is Interval less Paused.
	Paused time.Duration `json:"paused_ns,omitempty"`

	Load Load `json:"load"`

	// Tick is the client's view of this tick alone; Window covers the last
	// WindowLength (merged from tick histograms), restarted at each new load
	// level (a step, a key press) so that it never blends two levels; Run
	// covers the whole run.
	Tick         ClientStats   `json:"tick"`
	Window       ClientStats   `json:"window"`
	WindowLength time.Duration `json:"window_ns"`
	Run          ClientStats   `json:"run"`

	// Server is derived from Triton's ModelStatistics deltas over the tick.
	Server ServerStats `json:"server"`
	// ServerLate is the statistics of the ticks from ServerLateSeq to the
	// one before this, whose read answered only after they were emitted
	// (without server numbers): its own span, kept apart from this tick's
	// Server so that no tick shows another's counts, and added where the
	// whole run or a step is summed up. Nil when no read was late. In a
	// run over several models or replicas it is the sum of the late reads
	// of each model on each server (each model's and replica's entry has
	// its own), and ServerLateSeq the first tick any of them describes.
	ServerLate    *ServerStats `json:"server_late,omitempty"`
	ServerLateSeq int          `json:"server_late_seq,omitempty"`
	// Metrics is Triton's /metrics endpoint read during the tick.
	Metrics ServerMetrics `json:"metrics"`
	// System is the client machine: tritontop's own CPU, host CPU, local GPUs.
	System SystemStats `json:"system"`

	// Replicas has one entry per server of a run over several replicas of
	// the model, in the order given; nil with one server. Tick, Server and
	// Metrics above are then the aggregate over the replicas, and
	// Metrics.GPUs lists every replica's GPUs, each with its Replica.
	Replicas []Replica `json:"replicas,omitempty"`
	// Models has one entry per model of a run over several models, in the
	// order given; nil with one model. Tick, Window, Run and Server above
	// are then the aggregate over the models (counts add up; Server is
	// AggregateServer over every model on every server), Load is their
	// loads together (AggregateLoad), and Metrics is each server's once:
	// the models share its GPUs. Replicas' Tick and Server are over every
	// model too.
	Models []Model `json:"models,omitempty"`

	// Histogram is this tick's from-send latency histogram in
	// hdrhistogram-go's compressed encoding (base64), so any window can be
	// recomputed from a run file. ScheduledHistogram is the same for the
	// coordinated-omission-correct latency (open loop only).
	Histogram          string `json:"histogram,omitempty"`
	ScheduledHistogram string `json:"scheduled_histogram,omitempty"`
	// TTFTHistogram, ITLHistogram and ResponsesHistogram are the same for
	// a decoupled model's responses (ClientStats.Streaming): time to first
	// response and gaps between responses in µs, responses per request as
	// plain counts. Empty for other models.
	TTFTHistogram      string `json:"ttft_histogram,omitempty"`
	ITLHistogram       string `json:"itl_histogram,omitempty"`
	ResponsesHistogram string `json:"responses_histogram,omitempty"`
	// TTFTScheduledHistogram is the time to first response from the
	// schedule (open loop only), in µs.
	TTFTScheduledHistogram string `json:"ttft_scheduled_histogram,omitempty"`
	// SequenceHistogram is the same for the latency of a stateful
	// model's sequences that ended in the tick (ClientStats.Sequences).
	SequenceHistogram string `json:"sequence_histogram,omitempty"`
}

// Load is the load profile that held during a tick and the driver's state at
// its end: the run-file form of load.State.
type Load struct {
	Mode         load.Mode         `json:"mode"`
	Concurrency  int               `json:"concurrency,omitempty"`
	Rate         float64           `json:"rate,omitempty"`
	Distribution load.Distribution `json:"distribution,omitempty"`
	InFlight     int               `json:"in_flight"`
	Paused       bool              `json:"paused,omitempty"`
	Step         int               `json:"step,omitempty"`
	// Drain marks the ticks after the load stopped, while requests in
	// flight finish: they belong to no load level.
	Drain bool `json:"drain,omitempty"`
	// Sequences counts a stateful model's sequences started and not yet
	// ended at the tick's end; 0 for other models.
	Sequences int `json:"sequences,omitempty"`
	// Planned is a load plan's (--stages) mean target over the tick, with
	// the overrides: requests per second, or requests in flight; 0 without
	// a plan. Rate or Concurrency is then the stage's target and Step the
	// stage.
	Planned float64 `json:"planned,omitempty"`
}

// LoadOf is the run-file form of a load generator's state. Only the fields
// of its mode are kept: a closed loop has no rate or distribution.
func LoadOf(st load.State) Load {
	l := Load{Mode: st.Target.Mode, InFlight: st.InFlight, Paused: st.Paused, Step: st.Step, Drain: st.Draining,
		Sequences: st.Sequences}
	if l.Mode == "" {
		l.Mode = load.Concurrency
	}
	if st.Target.Open() {
		l.Rate = st.Target.Rate
		l.Distribution = st.Target.Distribution
		if l.Distribution == "" {
			l.Distribution = load.Constant
		}
	} else {
		l.Concurrency = st.Target.Concurrency
	}
	return l
}

// Target is the load profile without the driver's state.
func (l Load) Target() load.Target {
	return load.Target{Mode: l.Mode, Concurrency: l.Concurrency, Rate: l.Rate, Distribution: l.Distribution}
}

// Open reports whether the load is open loop.
func (l Load) Open() bool { return l.Mode == load.Rate }

// String names the load level: "concurrency 8" or "rate 200/s".
func (l Load) String() string { return load.Label(l.Mode, l.Concurrency, l.Rate) }

// SameLevel reports whether two loads are the same load level: the same
// target and the same step of a schedule. In-flight count and pause state do
// not matter.
func (l Load) SameLevel(o Load) bool {
	return l.Mode == o.Mode && l.Concurrency == o.Concurrency && l.Rate == o.Rate &&
		l.Distribution == o.Distribution && l.Step == o.Step && l.Drain == o.Drain
}

// ClientStats is what the client measured over some span of time.
type ClientStats struct {
	// Duration is the time load was applied in the span: its length less
	// the time the load was paused. The rates are over it.
	Duration time.Duration `json:"duration_ns"`
	// Requests counts finished requests (successes + errors, not cancelled).
	Requests   int64 `json:"requests"`
	Successes  int64 `json:"successes"`
	Errors     int64 `json:"errors"`
	Inferences int64 `json:"inferences"`
	Cancelled  int64 `json:"cancelled,omitempty"`
	Retries    int64 `json:"retries,omitempty"`
	// Late counts open-loop sends later than their schedule.
	Late          int64   `json:"late,omitempty"`
	RequestsPerS  float64 `json:"requests_per_s"`
	InferPerS     float64 `json:"inferences_per_s"`
	LateShare     float64 `json:"late_share,omitempty"`
	BytesSent     int64   `json:"bytes_sent"`
	BytesReceived int64   `json:"bytes_received"`
	// Timed counts the successful requests (unary or over a stream)
	// whose client part was
	// timed; SendTotal and RecvTotal add it up: encoding a request and
	// handing it to the transport, receiving and decoding its response
	// (perf_analyzer's Client Send and Client Recv; ClientSend and
	// ClientRecv are the averages).
	Timed     int64         `json:"timed,omitempty"`
	SendTotal time.Duration `json:"client_send_total_ns,omitempty"`
	RecvTotal time.Duration `json:"client_recv_total_ns,omitempty"`
	// Latency is measured from the actual send; Scheduled from the scheduled
	// send time (coordinated-omission-correct), open loop only.
	Latency   Latency  `json:"latency"`
	Scheduled *Latency `json:"scheduled_latency,omitempty"`
	// ErrorsByCode has one entry per error code, most frequent first.
	ErrorsByCode []ErrorCount `json:"errors_by_code,omitempty"`
	// Streaming times a decoupled model's responses (time to first
	// response, inter-response latency, responses per request and per
	// second); nil for other models. Latency is then the latency to the
	// final response.
	Streaming *StreamingStats `json:"streaming,omitempty"`
	// Sequences is a stateful model's sequences that ended in the span
	// and their latency; nil for other models and when none ended.
	Sequences *SequenceStats `json:"sequences,omitempty"`
}

// Latency is a latency distribution's summary, over successful requests.
type Latency struct {
	Count int64         `json:"count"`
	Min   time.Duration `json:"min_ns"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P95   time.Duration `json:"p95_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Max   time.Duration `json:"max_ns"`
}

// ErrorCount is the number of errors with one code and the latest message.
type ErrorCount struct {
	Code    string `json:"code"`
	Count   int64  `json:"count"`
	Message string `json:"message"`
}

// ServerStats is the server's own account of the tick, from the deltas of
// two ModelStatistics readings (perf_analyzer's method). Averages are per
// request in the tick.
type ServerStats struct {
	// Available is false when statistics could not be read; Err says why.
	Available bool   `json:"available"`
	Err       string `json:"error,omitempty"`
	Model     string `json:"model,omitempty"`
	Version   string `json:"version,omitempty"`
	// Reset is set when the cumulative counters went backwards (server
	// restart or model reload); the tick's deltas are then not reported.
	Reset bool `json:"reset,omitempty"`

	SuccessCount   int64 `json:"success_count"`
	FailCount      int64 `json:"fail_count"`
	InferenceCount int64 `json:"inference_count"`
	ExecutionCount int64 `json:"execution_count"`
	CacheHitCount  int64 `json:"cache_hit_count,omitempty"`

	Request       time.Duration `json:"request_ns"`
	Queue         time.Duration `json:"queue_ns"`
	ComputeInput  time.Duration `json:"compute_input_ns"`
	ComputeInfer  time.Duration `json:"compute_infer_ns"`
	ComputeOutput time.Duration `json:"compute_output_ns"`
	Overhead      time.Duration `json:"overhead_ns"`

	// AvgBatch is Δinference_count / Δexecution_count.
	AvgBatch float64 `json:"avg_batch"`
	// Batches is the executions by batch size in the tick, by ascending size.
	Batches []BatchCount `json:"batches,omitempty"`
	// Responses is Triton's per-response statistics (response_stats) of a
	// decoupled model, nil when the model reports none.
	Responses *ServerResponses `json:"responses,omitempty"`

	// Steps are a pipeline's composing models (an ensemble's steps, a BLS
	// model's --bls-composing-models), each one's own statistics over the
	// same span, in order of name (perf_analyzer's "Composing models"); a
	// composing ensemble's entry has its own Steps. Nil for a model that
	// is no pipeline. With Steps, Queue and the Compute times are the sums
	// of the steps' (Decompose, perf_analyzer's account of an ensemble),
	// Overhead the request time less them, floored at 0, and Own keeps
	// the times of the pipeline's own entry.
	Steps []ServerStats `json:"steps,omitempty"`
	Own   *OwnTimes     `json:"own,omitempty"`
}

// OwnTimes are the per-request times of a pipeline's own statistics entry,
// which its steps' replace in ServerStats: for an ensemble, Queue is its
// scheduler's wait (microseconds) and the compute times are its steps'
// added up by the server, queueing left out.
type OwnTimes struct {
	Queue         time.Duration `json:"queue_ns"`
	ComputeInput  time.Duration `json:"compute_input_ns"`
	ComputeInfer  time.Duration `json:"compute_infer_ns"`
	ComputeOutput time.Duration `json:"compute_output_ns"`
}

// Compute is the own entry's compute time per request.
func (o *OwnTimes) Compute() time.Duration { return o.ComputeInput + o.ComputeInfer + o.ComputeOutput }

// Compute is the average compute time per request: input + infer + output.
func (s ServerStats) Compute() time.Duration {
	return s.ComputeInput + s.ComputeInfer + s.ComputeOutput
}

// BatchCount is how many executions ran with a batch size.
type BatchCount struct {
	Size  int   `json:"size"`
	Count int64 `json:"count"`
}

// ServerMetrics is what Triton's metrics endpoint said during the tick.
type ServerMetrics struct {
	// Available is false when the endpoint could not be read; Err says why.
	// Missing values are missing, never zero.
	Available bool   `json:"available"`
	Err       string `json:"error,omitempty"`
	GPUs      []GPU  `json:"gpus,omitempty"`
	// CPU fields are valid only when HasCPU is set.
	HasCPU         bool    `json:"has_cpu,omitempty"`
	CPUUtilization float64 `json:"cpu_utilization,omitempty"` // 0..1
	CPUMemoryUsed  float64 `json:"cpu_memory_used_bytes,omitempty"`
	CPUMemoryTotal float64 `json:"cpu_memory_total_bytes,omitempty"`
	// Pending is nv_inference_pending_request_count for the model under
	// load, valid when HasPending is set.
	HasPending bool    `json:"has_pending,omitempty"`
	Pending    float64 `json:"pending,omitempty"`
}

// GPU is one GPU's utilization, memory and power. A source may report only
// some of them: each Has* flag says whether its values were reported, so
// that a missing gauge is shown as missing, never as zero.
type GPU struct {
	UUID           string  `json:"uuid"`
	Name           string  `json:"name,omitempty"`
	Utilization    float64 `json:"utilization"` // 0..1
	MemoryUsed     float64 `json:"memory_used_bytes"`
	MemoryTotal    float64 `json:"memory_total_bytes"`
	PowerW         float64 `json:"power_w"`
	PowerLimitW    float64 `json:"power_limit_w,omitempty"`
	HasUtilization bool    `json:"has_utilization,omitempty"`
	HasMemory      bool    `json:"has_memory,omitempty"`
	HasPower       bool    `json:"has_power,omitempty"`
	// Replica is the URL of the replica whose server has this GPU, in a
	// run over several replicas; empty with one server.
	Replica string `json:"replica,omitempty"`
}

// SystemStats is the client machine during the tick.
type SystemStats struct {
	// ProcessCPU is tritontop's own CPU use in cores (1.0 = one core busy).
	ProcessCPU float64 `json:"process_cpu"`
	// CPUPerRequest is tritontop's CPU time per finished request.
	CPUPerRequest time.Duration `json:"cpu_per_request_ns"`
	// HostCPU is the client host's CPU use by all processes, 0..1 over all
	// its cores, or over HostCPUs when tritontop may run on only those
	// (taskset, a cpuset): they are what it competes for.
	HostCPU float64 `json:"host_cpu"`
	// HostCPUs lists the CPUs HostCPU covers, as taskset does ("0-1,4"),
	// when they are not the whole host's.
	HostCPUs string `json:"host_cpus,omitempty"`
	NumCPU   int    `json:"num_cpu"`
	// LocalGPUs are the client host's GPUs through NVML, empty without one.
	LocalGPUs []GPU `json:"local_gpus,omitempty"`
}
