package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Comparison is two runs side by side: each load level both ran, matched by
// level, and the whole runs, with A, B and the change from A to B for the
// numbers that decide between two set-ups (a synchronous client against an
// asynchronous one, gRPC against HTTP, batch 1 against batch 8, a model
// config before and after a change). When both runs are of a decoupled
// model (an LLM), each level also compares responses per second and the
// time to the first response and between responses (p50 and p99); when
// both are of a stateful model, sequences per second and the sequence
// latency (p50 and p99).
type Comparison struct {
	A ComparedRun `json:"a"`
	B ComparedRun `json:"b"`
	// Mode is the load mode both runs ran in.
	Mode load.Mode `json:"mode"`
	// Steps are the load levels both runs measured, in A's order. A level
	// either run measured more than once is matched occurrence by
	// occurrence: A's first with B's first, and so on.
	Steps []LevelComparison `json:"steps"`
	// OnlyA and OnlyB name the levels one run measured and the other did
	// not.
	OnlyA []string `json:"only_a,omitempty"`
	OnlyB []string `json:"only_b,omitempty"`
	// Overall compares the whole runs. For runs of several levels it pools
	// them all (latency percentiles across levels included), so it compares
	// like with like only when both ran the same levels for the same time;
	// it then adds the highest step throughput of each.
	Overall LevelComparison `json:"overall"`
	// Models compares runs of which one or both ran several models, model
	// by model: the models of the same name, each level by level and
	// whole (a run of one model counts as its one model, so a model alone
	// can be set beside the same model sharing its GPUs with another).
	// Steps is then empty and Overall compares the whole runs, all their
	// models together. OnlyAModels and OnlyBModels name the models one run
	// had and the other did not.
	Models      []ModelComparison `json:"models,omitempty"`
	OnlyAModels []string          `json:"only_a_models,omitempty"`
	OnlyBModels []string          `json:"only_b_models,omitempty"`
	// Replicas compares runs that both ran over several replicas, replica
	// by replica over the whole run: throughput, p99 from the send,
	// Triton's queue time on that server and errors. ReplicasMatchedBy
	// says how they were paired: MatchByURL when both runs listed the same
	// URLs, else MatchByPosition, the replicas past the shorter list named
	// in OnlyAReplicas or OnlyBReplicas. All empty unless both runs had
	// replicas.
	Replicas          []ReplicaComparison `json:"replicas,omitempty"`
	ReplicasMatchedBy string              `json:"replicas_matched_by,omitempty"`
	OnlyAReplicas     []string            `json:"only_a_replicas,omitempty"`
	OnlyBReplicas     []string            `json:"only_b_replicas,omitempty"`
	// FailIf are compare --fail-if's bounds checked at each level
	// (CheckFailIf).
	FailIf []FailIfResult `json:"fail_if,omitempty"`
	// Alpha is the significance level of the noise tests (AddNoise).
	Alpha float64 `json:"alpha,omitempty"`
	// FewRepeats says why the runs' repeats were not tested as repeats:
	// too few for a Mann–Whitney U test to find any change significant
	// at Alpha, so their ticks were bootstrapped instead; empty otherwise.
	FewRepeats string `json:"few_repeats,omitempty"`
}

// ModelComparison is one model of two runs, compared as two runs of that
// model alone would be.
type ModelComparison struct {
	Model string `json:"model"`
	*Comparison
}

// ComparedRun says which run a side of a Comparison is.
type ComparedRun struct {
	Label    string        `json:"label"`
	Model    string        `json:"model"`
	Version  string        `json:"version,omitempty"`
	URL      string        `json:"url"`
	Protocol string        `json:"protocol"`
	Steps    int           `json:"steps"`
	Duration time.Duration `json:"duration_ns"`
	// Simulated is set when the run's server was tritontop's simulator.
	Simulated bool `json:"simulated,omitempty"`
	// Paused is the time the run's load was paused; its rates leave it out.
	Paused time.Duration `json:"paused_ns,omitempty"`
	// Retries counts the run's retried sends, which the server served
	// on top of its requests.
	Retries int64 `json:"retries,omitempty"`
}

// LevelComparison is one load level (or the whole runs) in both runs.
type LevelComparison struct {
	// Level names the load level ("concurrency 8", "rate 200/s"), or
	// "whole run".
	Level   string   `json:"level"`
	Metrics []Change `json:"metrics"`
	// stepA and stepB are the matched steps (nil for the whole run): the
	// ticks a test of the change's noise reads.
	stepA, stepB *record.Step
}

// Change is one number in A and in B. A value a run did not measure (no
// server statistics, no GPU metrics) is nil, as is a change that cannot be
// computed (a missing value, or A is zero).
type Change struct {
	// Metric is the number's identifier in JSON ("p99_latency"); Name and
	// Unit are how a table heads it.
	Metric string   `json:"metric"`
	Name   string   `json:"name"`
	Unit   string   `json:"unit,omitempty"`
	A      *float64 `json:"a"`
	B      *float64 `json:"b"`
	// Percent is (B − A) / A × 100.
	Percent *float64 `json:"change_percent"`
	// Noise says whether the change is more than the runs' own variation
	// (AddNoise); nil when it was not tested.
	Noise *Noise `json:"noise,omitempty"`
	// samplesA and samplesB are what the noise test read (repeats'
	// figures or ticks' values), for the tests of --fail-if's bounds.
	samplesA, samplesB []float64
}

// wholeRun is the Level of a Comparison's Overall.
const wholeRun = "whole run"

// compared is one metric: how to read it from a step's (or a run's)
// numbers.
type compared struct {
	metric, name, unit string
	value              func(levelNumbers) (float64, bool)
}

// levelNumbers are the parts of a Step or a Summary a comparison reads.
type levelNumbers struct {
	client  stats.ClientStats
	server  record.ServerSummary
	metrics record.MetricsSummary
	cpu     record.ClientCPU
	planned float64 // a load plan's or trace's mean target (stats.Load.Planned)
}

func stepNumbers(st record.Step) levelNumbers {
	return levelNumbers{st.Client, st.Server, st.Metrics, st.ClientCPU, st.Load.Planned}
}

// latency is the distribution a level is judged by: from the schedule in
// open loop (what a user of the service waits), from the send otherwise.
func (n levelNumbers) latency() stats.Latency {
	if s := n.client.Scheduled; s != nil && s.Count > 0 {
		return *s
	}
	return n.client.Latency
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// comparedMetrics are the numbers of a comparison, in table order.
var comparedMetrics = []compared{
	{"throughput", "throughput", "infer/s", func(n levelNumbers) (float64, bool) {
		return n.client.InferPerS, n.client.Duration > 0
	}},
	{"p50_latency", "p50", "ms", func(n levelNumbers) (float64, bool) {
		l := n.latency()
		return millis(l.P50), l.Count > 0
	}},
	{"p99_latency", "p99", "ms", func(n levelNumbers) (float64, bool) {
		l := n.latency()
		return millis(l.P99), l.Count > 0
	}},
	{"queue", "queue", "ms", func(n levelNumbers) (float64, bool) {
		return millis(n.server.Queue), n.server.Available
	}},
	{"compute", "compute", "ms", func(n levelNumbers) (float64, bool) {
		return millis(n.server.Compute()), n.server.Available
	}},
	{"batch_size", "batch size", "", func(n levelNumbers) (float64, bool) {
		return n.server.AvgBatch, n.server.Available && n.server.ExecutionCount > 0
	}},
	{"gpu_utilization", "GPU utilization", "%", func(n levelNumbers) (float64, bool) {
		u, ok := busiestGPU(n.metrics)
		return 100 * u, ok
	}},
	{"client_cpu_per_request", "client CPU per request", "µs", func(n levelNumbers) (float64, bool) {
		return float64(n.cpu.PerRequest) / float64(time.Microsecond), n.cpu.PerRequest > 0
	}},
}

// streamingMetrics are the numbers of a comparison of two decoupled
// models' runs (LLMs, say), which follow the request latency: responses
// per second (output tokens per second when a response is a token), and
// the time to the first response and between responses.
var streamingMetrics = []compared{
	{"responses_per_s", "responses", "resp/s", func(n levelNumbers) (float64, bool) {
		sc := n.client.Streaming
		if sc == nil {
			return 0, false
		}
		return sc.ResponsesPerS, n.client.Duration > 0
	}},
	{"output_tokens_per_s", "output tokens", "tok/s", func(n levelNumbers) (float64, bool) {
		sc := n.client.Streaming
		if sc == nil {
			return 0, false
		}
		// Runs recorded before output tokens were counted have none.
		return sc.OutputTokensPerS, n.client.Duration > 0 && sc.OutputTokens > 0
	}},
	// TTFT, as the latency, from the schedule in open loop.
	{"ttft_p50", "TTFT p50", "ms", streamingLatency(func(sc *stats.StreamingStats) (stats.Latency, time.Duration) { l, _ := stepTTFT(sc); return l, l.P50 })},
	{"ttft_p99", "TTFT p99", "ms", streamingLatency(func(sc *stats.StreamingStats) (stats.Latency, time.Duration) { l, _ := stepTTFT(sc); return l, l.P99 })},
	{"itl_p50", "ITL p50", "ms", streamingLatency(func(sc *stats.StreamingStats) (stats.Latency, time.Duration) { return sc.ITL, sc.ITL.P50 })},
	{"itl_p99", "ITL p99", "ms", streamingLatency(func(sc *stats.StreamingStats) (stats.Latency, time.Duration) { return sc.ITL, sc.ITL.P99 })},
}

// streamingLatency reads one percentile of a decoupled model's response
// timing, in milliseconds; missing when no request was timed.
func streamingLatency(pick func(*stats.StreamingStats) (stats.Latency, time.Duration)) func(levelNumbers) (float64, bool) {
	return func(n levelNumbers) (float64, bool) {
		sc := n.client.Streaming
		if sc == nil {
			return 0, false
		}
		l, d := pick(sc)
		return millis(d), l.Count > 0
	}
}

// sequenceMetrics are the numbers of a comparison of two stateful models'
// runs: sequences ended per second and the sequence latency, from a
// sequence's first send to its last response.
var sequenceMetrics = []compared{
	{"sequences_per_s", "sequences", "seq/s", func(n levelNumbers) (float64, bool) {
		if n.client.Duration <= 0 {
			return 0, false
		}
		// A level of a stateful model that ended no sequence ended 0.
		if sq := n.client.Sequences; sq != nil {
			return sq.EndedPerS, true
		}
		return 0, true
	}},
	{"sequence_latency_p50", "sequence p50", "ms", sequenceLatency(func(l stats.Latency) time.Duration { return l.P50 })},
	{"sequence_latency_p99", "sequence p99", "ms", sequenceLatency(func(l stats.Latency) time.Duration { return l.P99 })},
}

// sequenceLatency reads one percentile of a stateful model's sequence
// latency, in milliseconds; missing when no sequence ended.
func sequenceLatency(pick func(stats.Latency) time.Duration) func(levelNumbers) (float64, bool) {
	return func(n levelNumbers) (float64, bool) {
		sq := n.client.Sequences
		if sq == nil {
			return 0, false
		}
		return millis(pick(sq.Latency)), sq.Latency.Count > 0
	}
}

// metricsFor are the metrics of a comparison: comparedMetrics, with
// streamingMetrics after the request latency when both runs are of a
// decoupled model, then sequenceMetrics when both are of a stateful one.
func metricsFor(streaming, sequences bool) []compared {
	var extra []compared
	if streaming {
		extra = append(extra, streamingMetrics...)
	}
	if sequences {
		extra = append(extra, sequenceMetrics...)
	}
	if len(extra) == 0 {
		return comparedMetrics
	}
	i := slices.IndexFunc(comparedMetrics, func(c compared) bool { return c.metric == "p99_latency" }) + 1
	return slices.Concat(comparedMetrics[:i], extra, comparedMetrics[i:])
}

// bothMetrics are the metrics comparing runs a and b: the models' own
// when both ran that kind of model.
func bothMetrics(a, b record.Summary) []compared {
	m := withPlanned(a, b, metricsFor(a.Client.Streaming != nil && b.Client.Streaming != nil,
		a.Client.Sequences != nil && b.Client.Sequences != nil))
	return append(slices.Clip(m), composingMetrics(a, b)...)
}

// busiestGPU is the highest average utilization of any GPU that reported
// one: the GPU that limits a model spread over several.
func busiestGPU(m record.MetricsSummary) (float64, bool) {
	u, ok := 0.0, false
	for _, g := range m.GPUs {
		if g.HasUtilization {
			u, ok = max(u, g.UtilizationAvg), true
		}
	}
	return u, ok
}

// Compare sets run b beside run a, each named by its label. The runs must
// have run in the same load mode (both closed loop or both open loop):
// levels of different modes do not match. When both ran over several
// replicas, their replicas are compared too (Comparison.Replicas).
func Compare(a, b record.Summary, labelA, labelB string) (*Comparison, error) {
	var c *Comparison
	var err error
	if len(a.Models) > 0 || len(b.Models) > 0 {
		c, err = compareModels(a, b, labelA, labelB)
	} else {
		c, err = compareRuns(a, b, labelA, labelB)
	}
	if err != nil {
		return nil, err
	}
	c.compareReplicas(a.Replicas, b.Replicas)
	return c, nil
}

// compareRuns compares two runs of one model, level by level and whole.
func compareRuns(a, b record.Summary, labelA, labelB string) (*Comparison, error) {
	ma, err := runMode(a, labelA)
	if err != nil {
		return nil, err
	}
	mb, err := runMode(b, labelB)
	if err != nil {
		return nil, err
	}
	if ma != mb {
		return nil, fmt.Errorf("compare: %s ran %s and %s ran %s: compare two runs of the same load mode", labelA, modeWords(ma), labelB, modeWords(mb))
	}
	c := &Comparison{A: comparedRun(a, labelA), B: comparedRun(b, labelB), Mode: ma}
	metrics := bothMetrics(a, b)

	// Match the k-th occurrence of a level in A with its k-th in B.
	type key struct {
		mode  load.Mode
		level float64
	}
	keyOf := func(st record.Step) key { return key{st.Load.Mode, st.Load.Target().Level()} }
	inB := map[key][]int{}
	for i, st := range b.Steps {
		inB[keyOf(st)] = append(inB[keyOf(st)], i)
	}
	usedB := make([]bool, len(b.Steps))
	for i, st := range a.Steps {
		k := keyOf(st)
		if len(inB[k]) == 0 {
			c.OnlyA = append(c.OnlyA, st.Load.String())
			continue
		}
		j := inB[k][0]
		inB[k] = inB[k][1:]
		usedB[j] = true
		lc := compareLevel(metrics, st.Load.String(), stepNumbers(st), stepNumbers(b.Steps[j]))
		lc.stepA, lc.stepB = &a.Steps[i], &b.Steps[j]
		c.Steps = append(c.Steps, lc)
	}
	for j, st := range b.Steps {
		if !usedB[j] {
			c.OnlyB = append(c.OnlyB, st.Load.String())
		}
	}

	c.Overall = compareLevel(metrics, wholeRun,
		levelNumbers{a.Client, a.Server, a.Metrics, a.ClientCPU, runPlanned(a)},
		levelNumbers{b.Client, b.Server, b.Metrics, b.ClientCPU, runPlanned(b)})
	if len(a.Steps) > 1 || len(b.Steps) > 1 {
		pa, okA := peakThroughput(a.Steps)
		pb, okB := peakThroughput(b.Steps)
		c.Overall.Metrics = append(c.Overall.Metrics, newChange("peak_throughput", "highest step throughput", "infer/s", pa, okA, pb, okB))
	}
	return c, nil
}

// compareModels compares two runs of which at least one ran several
// models: model by model, matched by name, and the whole runs.
func compareModels(a, b record.Summary, labelA, labelB string) (*Comparison, error) {
	as, bs := modelRuns(a), modelRuns(b)
	c := &Comparison{A: comparedRun(a, labelA), B: comparedRun(b, labelB), Mode: a.Load.Mode}
	usedB := make([]bool, len(bs))
	for _, x := range as {
		j := slices.IndexFunc(bs, func(y record.Summary) bool { return y.Model == x.Model })
		if j < 0 {
			c.OnlyAModels = append(c.OnlyAModels, x.Model)
			continue
		}
		usedB[j] = true
		mc, err := Compare(x, bs[j], labelA, labelB)
		if err != nil {
			return nil, fmt.Errorf("compare: model %s: %s", textsafe.Quote(x.Model), strings.TrimPrefix(err.Error(), "compare: "))
		}
		c.Models = append(c.Models, ModelComparison{Model: x.Model, Comparison: mc})
	}
	for j, y := range bs {
		if !usedB[j] {
			c.OnlyBModels = append(c.OnlyBModels, y.Model)
		}
	}
	if len(c.Models) == 0 {
		return nil, fmt.Errorf("compare: %s ran %s and %s ran %s: no model in common", labelA, modelNames(as), labelB, modelNames(bs))
	}
	metrics := bothMetrics(a, b)
	c.Overall = compareLevel(metrics, wholeRun,
		levelNumbers{a.Client, a.Server, a.Metrics, a.ClientCPU, runPlanned(a)},
		levelNumbers{b.Client, b.Server, b.Metrics, b.ClientCPU, runPlanned(b)})
	return c, nil
}

// modelRuns are a run's models, each as a run of its own (ModelRun); a run
// of one model is its one model.
func modelRuns(s record.Summary) []record.Summary {
	if len(s.Models) == 0 {
		return []record.Summary{s}
	}
	out := make([]record.Summary, len(s.Models))
	for i := range s.Models {
		out[i] = ModelRun(s, i)
	}
	return out
}

// modelNames lists the models of runs in words.
func modelNames(runs []record.Summary) string {
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = orDash(r.Model)
	}
	return strings.Join(names, ", ")
}

// runMode is the load mode of a run's steps, an error for a run without
// any.
func runMode(s record.Summary, label string) (load.Mode, error) {
	if len(s.Steps) == 0 {
		return "", fmt.Errorf("compare: %s has no load steps (no ticks were recorded): record a run with --record first", label)
	}
	m := s.Steps[0].Load.Mode
	for _, st := range s.Steps[1:] {
		if st.Load.Mode != m {
			return "", fmt.Errorf("compare: %s ran both %s and %s: compare runs of one load mode", label, modeWords(m), modeWords(st.Load.Mode))
		}
	}
	return m, nil
}

func modeWords(m load.Mode) string {
	if m == load.Rate {
		return "a request rate (open loop)"
	}
	return "a concurrency (closed loop)"
}

func comparedRun(s record.Summary, label string) ComparedRun {
	return ComparedRun{Label: label, Model: s.Model, Version: s.Version, URL: s.URL, Protocol: s.Protocol,
		Steps: len(s.Steps), Duration: s.Duration, Simulated: s.Simulated, Paused: s.Paused, Retries: s.Client.Retries}
}

func compareLevel(metrics []compared, level string, a, b levelNumbers) LevelComparison {
	lc := LevelComparison{Level: level}
	for _, m := range metrics {
		va, okA := m.value(a)
		vb, okB := m.value(b)
		lc.Metrics = append(lc.Metrics, newChange(m.metric, m.name, m.unit, va, okA, vb, okB))
	}
	return lc
}

func newChange(metric, name, unit string, a float64, okA bool, b float64, okB bool) Change {
	c := Change{Metric: metric, Name: name, Unit: unit}
	if okA {
		c.A = &a
	}
	if okB {
		c.B = &b
	}
	if okA && okB && a != 0 && !math.IsNaN(a) && !math.IsNaN(b) {
		p := (b - a) / a * 100
		c.Percent = &p
	}
	return c
}

func peakThroughput(steps []record.Step) (float64, bool) {
	peak, ok := 0.0, false
	for _, st := range steps {
		if st.Client.Duration > 0 {
			peak, ok = max(peak, st.Client.InferPerS), true
		}
	}
	return peak, ok
}

// heading is a metric's column or row title: "p99 (ms)".
func (c Change) heading() string {
	if c.Unit == "" {
		return c.Name
	}
	return c.Name + " (" + c.Unit + ")"
}

// cell formats one side's value with the metric's precision, "-" when it
// was not measured.
func (c Change) cell(v *float64) string {
	if v == nil {
		return "-"
	}
	switch c.Unit {
	case "infer/s", "resp/s", "seq/s", "%":
		return strconv.FormatFloat(*v, 'f', 1, 64)
	case "ms":
		return strconv.FormatFloat(*v, 'f', 2, 64)
	case "µs", "requests":
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// percentCell is the change as "+12.3%", "-" when it cannot be computed.
func (c Change) percentCell() string {
	if c.Percent == nil {
		return "-"
	}
	p := math.Round(*c.Percent*10) / 10
	switch {
	case p == 0:
		return "0.0%"
	case p > 0:
		return "+" + strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}
