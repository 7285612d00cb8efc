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
	// Paused is the part of Duration during which the load was paused:
	// Client's rates are over the rest (Client.Duration), the time load
	// was applied.
	Paused time.Duration `json:"paused_ns,omitempty"`
	// Simulated is set when the server was tritontop's own simulator (the
	// run file header's server.simulated): every server-side number, GPU
	// included, is then simulated, not measured on real hardware.
	Simulated bool `json:"simulated,omitempty"`
	// Load is the load profile at the end of the run.
	Load stats.Load `json:"load"`
	// Retry is the run's retry policy (the header's), nil without one.
	Retry *RetryPolicy `json:"retry,omitempty"`

	// Client is the whole run as the client saw it, merged from every tick
	// (histograms included), so that a reset of the dashboard's windows
	// during the run does not shorten it.
	Client stats.ClientStats `json:"client"`
	// Server, Metrics and ClientCPU aggregate every tick of the run.
	Server    ServerSummary  `json:"server"`
	Metrics   MetricsSummary `json:"metrics"`
	ClientCPU ClientCPU      `json:"client_cpu"`

	// Steps are the run's load levels in recorded order: a stepped run's
	// measured steps, or else one per level the ticks ran at. The drain
	// after the load stopped is part of no step.
	Steps []Step `json:"steps,omitempty"`
	// Search is what a stepped run found: the highest level meeting the
	// SLO and the knee. Nil for a run without steps.
	Search *Search `json:"search,omitempty"`
	// Plan is the capacity plan of `tritontop plan` (and of `tritontop
	// tune` at its best configuration).
	Plan *Plan `json:"plan,omitempty"`
	// Tune is what `tritontop tune` found: its trials, the best
	// configuration, the frontier.
	Tune *Tune `json:"tune,omitempty"`
	// Diagnosis is what limited the load at the end of the run.
	Diagnosis []stats.Finding `json:"diagnosis,omitempty"`
	// DiagnosisSpans names, for each finding, the ticks it was read over
	// ("last 5 s of load"; "" where the message says).
	DiagnosisSpans []string `json:"diagnosis_spans,omitempty"`
	// ServerResets are the run times at which Triton's cumulative
	// statistics went backwards (the server restarted, or the model was
	// reloaded); those ticks' server numbers are left out.
	ServerResets []time.Duration `json:"server_resets_ns,omitempty"`

	// Replicas has one entry per server of a run over several replicas,
	// in the order given (Snapshot.Replicas over the run); Balance is how
	// requests were spread over them. Client, Server and Metrics above are
	// then the aggregate.
	Replicas []ReplicaSummary `json:"replicas,omitempty"`
	Balance  string           `json:"balance,omitempty"`

	// Models has one entry per model of a run over several models, in the
	// order given (Snapshot.Models over the run). Model then lists them
	// all, Load, Client and Server above are the aggregate, and Steps
	// are the run's load levels of all the models together: a step ends
	// when any model's level changes.
	Models []ModelSummary `json:"models,omitempty"`

	// Thresholds are the run's --threshold checks (ThresholdResult), in
	// the order given, over the run, each step or each model.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Repeats are a run of --repeat N's figures over its repeats, each
	// with every repeat's value, their median and spread; the fields above
	// then pool every repeat.
	Repeats []RepeatFigure `json:"repeats,omitempty"`
}

// ModelSummary is one model of a run over several models, over the whole
// run: its requests, its statistics on every server, and its own load
// levels.
type ModelSummary struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Load is the model's load at the end of the run.
	Load stats.Load `json:"load"`
	// Client sums the model's share of the ticks; its latency comes from
	// their merged histograms (Approximate as in Step).
	Client      stats.ClientStats `json:"client"`
	Approximate bool              `json:"approximate,omitempty"`
	Server      ServerSummary     `json:"server"`
	// Steps are the model's load levels in recorded order, as
	// Summary.Steps are the run's: consecutive ticks at one level of this
	// model, whatever the other models did meanwhile.
	Steps []Step `json:"steps,omitempty"`
}

// ReplicaSummary is one replica over the whole run: the requests it
// answered, its server's statistics and metrics, and how long it was in.
type ReplicaSummary struct {
	URL string `json:"url"`
	// Ticks counts the run's ticks, TicksUp those at whose end the replica
	// was in; Downs how many times it was taken out (an up tick followed by
	// a down one, or a first tick down).
	Ticks   int `json:"ticks"`
	TicksUp int `json:"ticks_up"`
	Downs   int `json:"downs,omitempty"`
	// Client sums the replica's share of the ticks; its latency comes from
	// their merged histograms (Approximate as in Step).
	Client      stats.ClientStats `json:"client"`
	Approximate bool              `json:"approximate,omitempty"`
	Server      ServerSummary     `json:"server"`
	Metrics     MetricsSummary    `json:"metrics"`
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
	// Paused is the time the load was paused during the step's ticks; Duration
	// leaves it out.
	Paused time.Duration `json:"paused_ns,omitempty"`
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
	// Measurement says how a stepped run measured the step; nil for a step
	// of a live run (a change of load by hand).
	Measurement *Measurement `json:"measurement,omitempty"`
	// Diagnosis is what limited the load during the step (stats.Diagnose
	// over its last ticks).
	Diagnosis []stats.Finding `json:"diagnosis,omitempty"`
	// Repeat is the step's repeat in a run of --repeat N (0 without); its
	// FirstSeq and LastSeq number that repeat's ticks.
	Repeat int `json:"repeat,omitempty"`
	// TuneConfig is the model configuration a tritontop tune run measured
	// the step at; nil in other runs.
	TuneConfig *TuneConfig `json:"tune_config,omitempty"`
}

// Measurement is how a stepped run measured one step, perf_analyzer's way:
// measurement windows of WindowTicks ticks run until the last Windows of
// them agree within StabilityPercent in throughput and latency, or Trials
// reaches the maximum; the windows before are warm-up and not part of the
// step. A fixed-length step (--step-duration) measures all its ticks and
// says only whether its last windows agreed.
type Measurement struct {
	// Index is the step's place in the schedule (stats.Load.Step).
	Index int  `json:"index"`
	Fixed bool `json:"fixed,omitempty"`
	// WindowTicks is the length of a measurement window in ticks.
	WindowTicks int `json:"window_ticks"`
	// Windows is how many windows the step's numbers come from; Trials
	// how many ran at the level, warm-up included.
	Windows int `json:"windows"`
	Trials  int `json:"trials"`
	// Stable is set when the last windows agreed; an unstable step's
	// numbers are reported, never silently averaged into a stable one.
	Stable           bool    `json:"stable"`
	StabilityPercent float64 `json:"stability_percent"`
	// UnsteadyLatency: the throughput agreed but the latency did not by
	// the last trial; like perf_analyzer with asynchronous requests, the
	// step counts as stable, with this warning.
	UnsteadyLatency bool `json:"unsteady_latency,omitempty"`
	// WarmupTicks counts the level's ticks before the measured windows.
	WarmupTicks int `json:"warmup_ticks,omitempty"`
	// Interrupted is set when the run ended before the step was measured
	// (a signal, --duration): its numbers are what ran.
	Interrupted bool `json:"interrupted,omitempty"`
	// SLO is the step checked against the latency threshold, if any. With
	// several objectives it is the first that failed (else the first), so
	// that its Pass is the step's, and SLOs holds them all.
	SLO  *SLOCheck  `json:"slo,omitempty"`
	SLOs []SLOCheck `json:"slos,omitempty"`
}

// SLOCheck is one step against the run's service-level objective.
type SLOCheck struct {
	// Metric is the latency the SLO is on: "" for the request latency,
	// "ttft" for a decoupled model's time to first response, "itl" for
	// its time between responses.
	Metric string `json:"metric,omitempty"`
	// Percentile is the latency percentile the SLO is on (99 for p99); 0
	// means the average latency, as perf_analyzer's default.
	Percentile float64       `json:"percentile,omitempty"`
	Threshold  time.Duration `json:"threshold_ns"`
	// Latency is the step's value of that latency; FromSchedule says it
	// was measured from the scheduled send (open loop).
	Latency      time.Duration `json:"latency_ns"`
	FromSchedule bool          `json:"from_schedule,omitempty"`
	// GPUTarget, when set, is the utilization no GPU may exceed (0..1);
	// GPUUtilization is the busiest GPU's average.
	GPUTarget      float64 `json:"gpu_utilization_target,omitempty"`
	GPUUtilization float64 `json:"gpu_utilization,omitempty"`
	// Pass: the step was stable, its latency under the threshold and every
	// GPU at or under the target.
	Pass bool `json:"pass"`
	// Goodput is the requests per second whose own latency (or time to
	// first response) met the threshold; 0 for an SLO on the time between
	// responses.
	Goodput float64 `json:"goodput"`
}

// Search is what a stepped run found on the latency–throughput curve.
type Search struct {
	// Mode is "sweep" (every level), "linear" (until the first level past
	// the SLO) or "binary" (perf_analyzer's --binary-search).
	Mode string `json:"mode"`
	// SLO is the objective searched for, nil for a plain sweep; SLOs
	// holds every objective when there are several.
	SLO  *SLOCheck  `json:"slo,omitempty"`
	SLOs []SLOCheck `json:"slos,omitempty"`
	// Best indexes Steps: the highest level that met the SLO, -1 for none.
	Best int `json:"best"`
	// Knee indexes Steps: where the curve bends, throughput flattening as
	// latency climbs; -1 when the steps do not show one.
	Knee int `json:"knee"`
	// MaxThroughput is the highest throughput of any step, infer/s.
	MaxThroughput float64 `json:"max_throughput"`
}

// Plan is a capacity plan: one replica's capacity under the SLO and what
// the target load needs.
type Plan struct {
	// TargetRate is the load to serve, requests per second.
	TargetRate float64 `json:"target_rate"`
	// Capacity is one replica's highest passing throughput, requests per
	// second (CapacityLevel is the load level that gave it); Limit says
	// what held it there.
	Capacity      float64    `json:"capacity"`
	CapacityLevel stats.Load `json:"capacity_level"`
	Limit         string     `json:"limit"`
	// CapacityTokensPerS is the output tokens per second at that level,
	// for an LLM whose output tokens were counted; 0 otherwise.
	CapacityTokensPerS float64 `json:"capacity_output_tokens_per_s,omitempty"`
	// Replicas is what the target needs: ceil(target / capacity), plus
	// Spare (one replica) when the headroom left is under 20%.
	Replicas int     `json:"replicas"`
	Spare    bool    `json:"spare,omitempty"`
	Headroom float64 `json:"headroom"`
	// GPUsPerReplica and GPUs count the GPUs one replica used and all of
	// them together.
	GPUsPerReplica int `json:"gpus_per_replica"`
	GPUs           int `json:"gpus"`
	// Autoscaling is the metric the HorizontalPodAutoscaler should follow
	// ("gpu-utilization", "queue-time" or "pending-requests") and its
	// target value, with MinReplicas and MaxReplicas.
	Autoscaling       string  `json:"autoscaling_metric"`
	AutoscalingTarget float64 `json:"autoscaling_target"`
	MinReplicas       int     `json:"min_replicas"`
	MaxReplicas       int     `json:"max_replicas"`
	// Assumptions are printed next to the numbers.
	Assumptions []string `json:"assumptions"`
	// HPA is the HorizontalPodAutoscaler YAML.
	HPA string `json:"hpa_yaml,omitempty"`

	// Simulated is set when the server measured was tritontop's simulator;
	// DemoGPU then says how tritontop demo sized its GPU, if it did.
	Simulated bool   `json:"simulated,omitempty"`
	DemoGPU   string `json:"demo_gpu,omitempty"`
	// Repeats are the throughputs of every measurement of the capacity
	// level, in the order measured; CapacityMedian their median and
	// RepeatsAgree whether they all met the SLO within the stability
	// percentage of each other. Capacity is the lowest that met the SLO
	// (the conservative end), CapacityBasis says so in words.
	Repeats        []float64 `json:"repeats,omitempty"`
	CapacityMedian float64   `json:"capacity_median,omitempty"`
	RepeatsAgree   bool      `json:"repeats_agree,omitempty"`
	CapacityBasis  string    `json:"capacity_basis,omitempty"`
	// ClientBound is set when the client limited a level the plan rests
	// on; Refused then says why no replicas were planned (empty when
	// --allow-client-bound planned them anyway, marked).
	ClientBound bool   `json:"client_bound,omitempty"`
	Refused     string `json:"refused,omitempty"`
	// MinRate is the trough the autoscaler's minReplicas serves; MaxRate
	// the target plus the burst allowance, which MaxReplicas serves.
	MinRate float64 `json:"min_rate,omitempty"`
	MaxRate float64 `json:"max_rate,omitempty"`
	// Autoscaler is "hpa" or "keda"; KEDA the ScaledObject YAML.
	Autoscaler string `json:"autoscaler,omitempty"`
	KEDA       string `json:"keda_yaml,omitempty"`
	// Cost, when an hourly price was given.
	Cost *PlanCost `json:"cost,omitempty"`
}

// PlanCost is what a plan costs at the prices given.
type PlanCost struct {
	// GPUHour and ReplicaHour are the prices given, USD per hour.
	GPUHour     float64 `json:"gpu_hour"`
	ReplicaHour float64 `json:"replica_hour"`
	// PerHour is the hourly cost of the replicas the target needs;
	// PerMillion the cost of a million requests (or tokens, Unit says)
	// served by one replica at its capacity.
	PerHour    float64 `json:"per_hour"`
	PerMillion float64 `json:"per_million"`
	Unit       string  `json:"unit"`
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
	// Replica is the URL of the replica whose server has this GPU, in a
	// run over several replicas.
	Replica string `json:"replica,omitempty"`
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

// CPUTotals are the sums a span's ClientCPU is made from: its ticks, the
// CPU seconds tritontop used and the seconds they lasted, the busiest
// tick's cores, the sum of the ticks' host CPU, and the requests finished.
type CPUTotals struct {
	Ticks               int
	CPUSeconds, Seconds float64
	MaxCores, HostSum   float64
	Requests            int64
	// long says that MaxCores is from ticks of CPUMaxTick or more.
	long bool
}

// CPUMaxTick is the shortest tick whose CPU use counts towards the
// maximum once a longer one was seen: the kernel counts CPU time in 10 ms
// clock ticks, so over the sliver that often ends a run one count reads as
// a core or more.
const CPUMaxTick = 100 * time.Millisecond

// AddMax takes a tick of d at cores into the maximum.
func (t *CPUTotals) AddMax(cores float64, d time.Duration) {
	switch {
	case d >= CPUMaxTick && !t.long:
		t.MaxCores, t.long = cores, true
	case d >= CPUMaxTick || !t.long:
		t.MaxCores = max(t.MaxCores, cores)
	}
}

// ClientCPU is the span's client CPU: average and maximum cores, CPU time
// per request, and the host's average use.
func (t CPUTotals) ClientCPU() ClientCPU {
	var c ClientCPU
	if t.Ticks == 0 {
		return c
	}
	c.HostAvg = t.HostSum / float64(t.Ticks)
	if t.Seconds > 0 {
		c.AvgCores = t.CPUSeconds / t.Seconds
	}
	// The average counts the slivers' clock counts that the maximum
	// leaves out; no tick's use was under the average of them all.
	c.MaxCores = max(t.MaxCores, c.AvgCores)
	if t.Requests > 0 {
		c.PerRequest = time.Duration(t.CPUSeconds / float64(t.Requests) * float64(time.Second))
	}
	return c
}
