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
