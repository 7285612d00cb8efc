package record

// ThresholdResult is one --threshold checked over a span of a run (the
// whole run, one step, one model): the value measured there and whether it
// held. The summary lists one per threshold and span, so a CI job can show
// which bound broke and by how much.
type ThresholdResult struct {
	// Threshold is the expression as given ("p99<100ms").
	Threshold string `json:"threshold"`
	// Scope is the span it was checked over: "run", "step concurrency 8",
	// "model resnet50", or a model's step.
	Scope string `json:"scope"`
	// Value is the measured value in Unit; nil when the span did not
	// measure it (no server statistics, no streaming responses), which
	// fails the threshold: a bound that cannot be checked holds nothing.
	Value *float64 `json:"value"`
	// Limit is the bound, in Unit.
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit,omitempty"`
	Pass  bool    `json:"pass"`
	// Reason says why a threshold without a value failed.
	Reason string `json:"reason,omitempty"`
}

// RepeatFigure is one figure (throughput, p99, ...) of a run of --repeat
// N, over its repeats: how much the same load's result moves from one run
// to the next.
type RepeatFigure struct {
	// Figure is the figure's name ("p99_latency", as compare's metrics).
	Figure string `json:"figure"`
	Unit   string `json:"unit,omitempty"`
	// Values are the repeats' values, in order; a repeat that did not
	// measure the figure is left out.
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	// SpreadPercent is (Max − Min) / Median × 100.
	SpreadPercent float64 `json:"spread_percent"`
}
