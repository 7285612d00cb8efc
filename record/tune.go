package record

import "time"

// Tune is what tritontop tune found (Summary.Tune): every trial (a model
// configuration measured at one concurrency), the best under the SLO, the
// frontier of throughput against latency, and the grid searched.
type Tune struct {
	// Objective is what the search maximized: "throughput",
	// "throughput-per-gpu" or "latency"; SLOs are the objectives every
	// passing trial met (as --slo gives them), MinThroughput the latency
	// objective's floor (infer/s).
	Objective     string   `json:"objective"`
	SLOs          []string `json:"slos"`
	MinThroughput float64  `json:"min_throughput,omitempty"`
	// GPUUtilizationTarget is the plan's GPU ceiling (0: none).
	GPUUtilizationTarget float64 `json:"gpu_utilization_target,omitempty"`
	// Search is "climb" (tritontop tune's search) or "grid" (every point
	// measured).
	Search string   `json:"search"`
	Grid   TuneGrid `json:"grid"`
	// Trials are the measurements in the order made; Configurations counts
	// the distinct configurations among them.
	Trials         []TuneTrial `json:"trials"`
	Configurations int         `json:"configurations"`
	// Best indexes Trials: the passing trial with the best objective, -1
	// when none passed. Baseline indexes the model's own configuration's
	// best trial (its first when none passed), -1 when none was measured.
	Best     int `json:"best"`
	Baseline int `json:"baseline"`
	// Frontier indexes Trials: the measured trials that no other beats in
	// both throughput and p99 latency, by ascending p99.
	Frontier []int `json:"frontier"`
	// Stopped says why the search ended.
	Stopped string `json:"stopped"`
	// Elapsed is the search's time, from its first trial's start to its
	// last's end.
	Elapsed time.Duration `json:"elapsed_ns"`
	// BestConfig is the best trial's configuration as a config.pbtxt
	// (protobuf text format); Output is the file it was written to.
	BestConfig string `json:"best_config_pbtxt,omitempty"`
	Output     string `json:"output,omitempty"`
	// Restored says the model's original configuration was loaded back
	// after the search (and the server reported it again);
	// RestoreError why it could not be.
	Restored     bool   `json:"restored"`
	RestoreError string `json:"restore_error,omitempty"`
}

// TuneGrid is the grid a tune run searched: each dimension's values, and
// its size (configurations × concurrencies).
type TuneGrid struct {
	Instances      []int    `json:"instances"`
	MaxBatchSizes  []int    `json:"max_batch_sizes"`
	QueueDelaysUS  []int    `json:"max_queue_delays_us"`
	Preferred      []string `json:"preferred"`
	Concurrencies  []int    `json:"concurrencies"`
	Configurations int      `json:"configurations"`
	Points         int      `json:"points"`
}

// TuneConfig is one model configuration of a tune run: every instance
// group's count, max_batch_size and the dynamic batcher's
// max_queue_delay_microseconds and preferred batch sizes ("max":
// [max_batch_size], "half": [max_batch_size/2, max_batch_size], "" for no
// dynamic batcher).
type TuneConfig struct {
	Instances    int    `json:"instances"`
	MaxBatchSize int    `json:"max_batch_size"`
	QueueDelayUS int    `json:"max_queue_delay_us"`
	Preferred    string `json:"preferred,omitempty"`
}

// TuneTrial is one configuration measured at one concurrency.
type TuneTrial struct {
	Config      TuneConfig `json:"config"`
	Concurrency int        `json:"concurrency"`
	// Baseline marks the model's own configuration.
	Baseline bool `json:"baseline,omitempty"`
	// Step indexes Summary.Steps: the trial's measured step; -1 when the
	// configuration did not load (LoadError says why).
	Step      int    `json:"step"`
	LoadError string `json:"load_error,omitempty"`
	// Throughput is infer/s; Latency the latency the (first) SLO is on,
	// P99 the p99 latency.
	Throughput float64       `json:"throughput"`
	Latency    time.Duration `json:"latency_ns"`
	P99        time.Duration `json:"p99_ns"`
	// GPUs counts the GPUs busy, GPUUtilization the busiest one's average.
	GPUs           int     `json:"gpus,omitempty"`
	GPUUtilization float64 `json:"gpu_utilization,omitempty"`
	// Queue and Compute are Triton's queue and compute time per request,
	// Batch its average batch size.
	Queue   time.Duration `json:"queue_ns,omitempty"`
	Compute time.Duration `json:"compute_ns,omitempty"`
	Batch   float64       `json:"batch,omitempty"`
	// Stable: the measurement windows agreed; Pass: stable and every SLO
	// met (and the latency objective's floor).
	Stable bool `json:"stable"`
	Pass   bool `json:"pass"`
	// Objective is the trial's value under the objective (infer/s,
	// infer/s per GPU, or the latency in ms for "latency"), pass or not.
	Objective float64 `json:"objective"`
	// Elapsed is the trial's time, the configuration's load included.
	Elapsed time.Duration `json:"elapsed_ns"`
}
