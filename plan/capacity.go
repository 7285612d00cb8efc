package plan

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Capacity searches one replica's capacity in requests per second. A
// closed-loop probe finds the throughput the server holds at saturation:
// it starts at Concurrency and doubles while throughput still grows by
// probeGain (a config does not always tell how many requests a model runs
// at once: an LLM batches in flight, an ensemble or BLS model hides its
// steps). Then a binary search over request rates (open loop, as a service
// receives them) from 5% to 110% of the best probe, in steps of 5%, finds
// the highest rate that meets the SLO. Rates too low to measure within a
// level's windows (see MeasurableRate) are left out.
//
// Next is a function of the levels done: the probes are the closed-loop
// levels they start with.
type Capacity struct {
	// Concurrency is the first probe's; enough to saturate the model by its
	// config (twice its instances times its max batch is the usual choice).
	Concurrency int
	// Base is the open-loop target the rates are set on (distribution,
	// in-flight cap).
	Base load.Target
	// Window is the stepper's measurement window; 0 leaves no rate out.
	Window time.Duration

	// Repeat is how many times in a row the capacity level must hold: the
	// search's own measurement and Repeat−1 more after the search ends; a
	// repeat that misses the SLO moves the capacity one rate down, measured
	// Repeat times afresh (see Repeats, MaxStepDowns); 0 or 1 measures it
	// once.
	Repeat int

	// probes is how many probe levels Next has asked for, for Total.
	probes int
}

// DefaultRepeat is how many times tritontop plan measures the capacity
// level.
const DefaultRepeat = 3

// searched is how many of rates the binary search g measured: the levels
// after them are the capacity level's repeats.
func searched(g *Binary, rates []Level) int {
	for k := range rates {
		if _, ok := g.Next(rates[:k]); !ok {
			return k
		}
	}
	return len(rates)
}

// Repeats are the measurements of the level the capacity rests on: the
// search's answer and its repeats, or, after a repeat missed the SLO, the
// lower level measured in its place (see Best); nil when no rate passed.
func (c *Capacity) Repeats(done []Level) []Level {
	cf, ok := c.confirm(done)
	if !ok {
		return nil
	}
	runs := cf.runs
	if cf.over && !cf.held {
		// No rate held: every measurement of the confirmation, the
		// search's answer first, so that the plan shows them all.
		runs = []int{c.Best(done)}
		probes, rates := probed(done)
		for j := searched(c.grid(saturation(probes)), rates); j < len(rates); j++ {
			runs = append(runs, len(probes)+j)
		}
	}
	out := make([]Level, 0, len(runs))
	for _, i := range runs {
		out = append(out, done[i])
	}
	return out
}

// Grid of the rate search, as fractions of the probe's throughput, and the
// probe's doubling.
const (
	rateStep = 0.05
	rateTop  = 1.10
	// rateStart is the rate the binary search measures first, instead
	// of the grid's lowest: rates far under the saturation take long to
	// measure (a window must hold MinWindowRequests: 16 s for 9.6/s in
	// 1 s windows) and seldom decide a plan, so they are measured only
	// when this one misses the SLO.
	rateStart = 0.25
	// probeGain: a probe at twice the concurrency that gains less
	// throughput than this shows the server saturated.
	probeGain = 1.10
	// MaxProbeConcurrency caps the probe's doubling.
	MaxProbeConcurrency = 4096
)

// MeasurableRate is the lowest request rate whose windows can hold
// MinWindowRequests within MaxWindowStretch windows of length window: a
// level below it would end unstable however well the server held it.
func MeasurableRate(window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return MinWindowRequests / (MaxWindowStretch * window.Seconds())
}

// probed splits done into the closed-loop probes it starts with and the
// rate levels after them.
func probed(done []Level) (probes, rates []Level) {
	k := 0
	for k < len(done) && !done[k].Target.Open() {
		k++
	}
	return done[:k], done[k:]
}

// saturation is the probes' best throughput.
func saturation(probes []Level) float64 {
	x := 0.0
	for _, p := range probes {
		x = max(x, probeThroughput(p))
	}
	return x
}

// probeThroughput is a closed-loop probe's throughput by Little's law: the
// requests kept in flight over their mean latency. A batching server
// finishes them a batch at a time, so the count of those finished in a
// probe's few seconds is off by up to a batch per instance (64 of 288 at
// 96 req/s in batches of 32 on two instances): the grid of rates would
// move with it from run to run. The mean latency of hundreds of requests
// does not. Little's law leaves out the client's time between a response
// and the next send: when it is well over the count (a client slow between
// requests), or without a latency, the count is the throughput.
func probeThroughput(p Level) float64 {
	c := p.Step.Client
	x := c.RequestsPerS
	if n := p.Target.Concurrency; n > 0 && c.Latency.Count >= int64(n) && c.Latency.Mean > 0 {
		if little := float64(n) / c.Latency.Mean.Seconds(); little <= littleSlack*x {
			return little
		}
	}
	return x
}

// queued reports whether a probe kept every instance of the model busy:
// its requests waited in Triton's queue at least half as long as they
// computed (and probeQueueMin). A server queues requests only while every
// instance is busy, so twice as many in flight would only wait twice as
// long: the next probe is left out. A server without queue statistics, or
// one that hides its work from them (an LLM batching in flight, an
// ensemble's steps), is probed by doubling as before.
func queued(p Level) bool {
	s := &p.Step.Server
	q, c := s.Queue, s.Compute()
	return s.Available && q >= probeQueueMin && 2*q >= c
}

// probeQueueMin is the queue time under which a probe is not called
// queued: a dynamic batcher's own delay is a fraction of a millisecond.
const probeQueueMin = 5 * time.Millisecond

// littleSlack is how far over the probe's count of finished requests its
// throughput by Little's law may be and still be taken: a batch per
// instance in a few seconds' count, not the client's own gaps.
const littleSlack = 1.25

// Next implements Search.
func (c *Capacity) Next(done []Level) (load.Target, bool) {
	probes, rates := probed(done)
	if len(probes) == 0 {
		c.probes = max(c.probes, 1)
		return load.Target{Mode: load.Concurrency, Concurrency: max(c.Concurrency, 1)}, true
	}
	if len(rates) == 0 {
		last := probes[len(probes)-1]
		before := saturation(probes[:len(probes)-1])
		next := 2 * last.Target.Concurrency
		if x := probeThroughput(last); x > 0 && x >= probeGain*before && next <= MaxProbeConcurrency && !queued(last) {
			c.probes = max(c.probes, len(probes)+1)
			return load.Target{Mode: load.Concurrency, Concurrency: next}, true
		}
	}
	grid := c.grid(saturation(probes))
	if k := searched(grid, rates); k == len(rates) {
		if t, ok := grid.Next(rates); ok {
			return t, true
		}
	}
	// The search is over: its answer again, until it held Repeat times.
	cf, ok := c.confirm(done)
	if !ok || cf.over {
		return load.Target{}, false
	}
	return cf.level, true
}

// grid is the binary search over rates for a saturated throughput x.
func (c *Capacity) grid(x float64) *Binary {
	if !(x > 0) {
		return &Binary{}
	}
	floor := MeasurableRate(c.Window)
	var levels []load.Target
	start := 0
	for i := 1; float64(i)*rateStep <= rateTop+1e-9; i++ {
		t := c.Base
		t.Mode = load.Rate
		// Rates to three significant figures read well in a plan.
		t.Rate = roundSig(float64(i)*rateStep*x, 3)
		if t.Rate >= floor {
			if float64(i)*rateStep < rateStart-1e-9 {
				start = len(levels) + 1
			}
			levels = append(levels, t)
		}
	}
	return &Binary{Levels: levels, Start: min(start, max(len(levels)-1, 0))}
}

// Unmeasurable says why the search measured no rate after its probes when
// the probes' throughput is too low for the measurement window, and which
// window would do; nil otherwise.
func (c *Capacity) Unmeasurable(done []Level) error {
	probes, rates := probed(done)
	x := saturation(probes)
	if len(probes) == 0 || len(rates) > 0 || !(x > 0) || len(c.grid(x).Levels) > 0 {
		return nil
	}
	// A window that measures rates down to half the saturated throughput.
	need := time.Duration(math.Ceil(MinWindowRequests/(MaxWindowStretch*0.5*x))) * time.Second
	return fmt.Errorf("the model saturates at %s req/s: too few requests to measure a rate within %d windows of %v (each needs %d finished requests); give a longer measurement window, -p %d or more",
		strconv.FormatFloat(x, 'g', 3, 64), MaxWindowStretch, c.Window, MinWindowRequests, need.Milliseconds())
}

// Mode implements Search.
func (c *Capacity) Mode() string { return "capacity" }

// Probe reports whether t is one of the search's closed-loop probes: they
// measure the throughput at saturation, so no SLO ends them early.
func (c *Capacity) Probe(t load.Target) bool { return !t.Open() }

// Total implements Search: the most levels the search measures, fixed
// from its start: the probes up to MaxProbeConcurrency, the binary search
// over the whole grid, and the repeats.
func (c *Capacity) Total() int {
	n := int(math.Round(rateTop / rateStep))
	r := max(c.Repeat, 1)
	return c.maxProbes() + Binary{Levels: make([]load.Target, n)}.Total() + r - 1 + MaxStepDowns*r
}

// maxProbes is the most closed-loop probes: doubling from Concurrency up
// to MaxProbeConcurrency.
func (c *Capacity) maxProbes() int {
	n := 1
	for conc := max(c.Concurrency, 1); 2*conc <= MaxProbeConcurrency; conc *= 2 {
		n++
	}
	return n
}

// Phase names level i of done in the search's own terms, for progress:
// "probe 2 of at most 6", "step 3 of at most 7", "repeat 2 of 3".
func (c *Capacity) Phase(done []Level, i int) string {
	probes, rates := probed(done[:i+1])
	if len(rates) == 0 {
		return fmt.Sprintf("probe %d of at most %d", len(probes), c.maxProbes())
	}
	probes, rates = probed(done)
	g := c.grid(saturation(probes))
	k := searched(g, rates)
	if j := i + 1 - len(probes); j <= k {
		return fmt.Sprintf("step %d of at most %d", j, g.Total())
	}
	if cf, ok := c.confirm(done); ok && cf.labels[i] != "" {
		return cf.labels[i]
	}
	return "repeat"
}

// Best implements a search's choice of the answer: the highest passing
// rate, the probes left out.
func (c *Capacity) Best(done []Level) int {
	probes, rates := probed(done)
	i := Best(rates[:searched(c.grid(saturation(probes)), rates)])
	if i < 0 {
		return -1
	}
	// A confirmation that stepped down rests on its lower level.
	if cf, ok := c.confirm(done); ok && cf.held && cf.downs > 0 {
		return cf.runs[len(cf.runs)-1]
	}
	return i + len(probes)
}

func roundSig(v float64, digits int) float64 {
	if v <= 0 {
		return v
	}
	p := math.Pow(10, float64(digits)-math.Ceil(math.Log10(v)))
	return math.Round(v*p) / p
}

// PlanOptions are what a capacity plan is for.
type PlanOptions struct {
	// TargetRate is the load to serve, requests per second.
	TargetRate float64
	SLO        SLO
	// Deployment and Namespace name the Triton Deployment the autoscaler
	// scales; Model is the model its queue-time rule selects.
	Deployment, Namespace, Model string
	// Repeats are the measurements of the capacity level (Capacity.Repeats);
	// nil for the level at best alone. StabilityPercent is how far their
	// throughputs may differ (max/min − 1) to agree; 0 means the default.
	Repeats          []Level
	StabilityPercent float64
	// AllowClientBound plans replicas even when the client limited a
	// level the plan rests on (marked); without it such a plan is refused.
	AllowClientBound bool
	// Simulated is set when the server was tritontop's simulator; DemoGPU
	// says how tritontop demo sized its GPU.
	Simulated bool
	DemoGPU   string
	// MinRate is the trough (0: DefaultMinRateShare of the target) and
	// Burst the share over the target the autoscaler may grow for
	// (tritontop plan's default is DefaultBurst).
	MinRate, Burst float64
	// Autoscaler is "hpa" (default) or "keda"; PrometheusURL is the
	// Prometheus KEDA's trigger queries.
	Autoscaler, PrometheusURL string
	// GPUHourCost and ReplicaHourCost, USD per hour, price the plan when
	// either is above 0; Tokens, when above 0, is the tokens per request
	// at capacity (an LLM), which the price per million counts instead.
	GPUHourCost, ReplicaHourCost, Tokens float64
}

// Spare and scaling assumptions of a plan.
const (
	// SpareHeadroom: the replicas for a rate are the fewest whose capacity
	// is at least this much over it: ceil(rate × (1 + SpareHeadroom) /
	// capacity).
	SpareHeadroom = 0.20
	// DefaultMinRateShare is the trough, as a share of the target, that
	// minReplicas serves when --min-rate is not given.
	DefaultMinRateShare = 0.25
	// DefaultBurst is the share over the target the autoscaler may grow
	// for: maxReplicas serve the target × (1 + DefaultBurst).
	DefaultBurst = 0.5
	// saturatedGPU is the utilization from which GPU utilization no longer
	// tells how close a replica is to its capacity.
	saturatedGPU = 0.90
	// queueTargetShare: the queue-time target is this share of the queue
	// time per request measured at capacity.
	queueTargetShare = 0.8
)

// ReplicasFor is the replicas that serve rate with the spare rule: the
// fewest whose capacity is at least SpareHeadroom over the rate, and at
// least one.
func ReplicasFor(rate, capacity float64) int {
	if !(capacity > 0) || !(rate > 0) {
		return 1
	}
	// The tolerance keeps 1.2 × 500 / 100 at 6, not 6.000000000000001 → 7.
	return max(1, int(math.Ceil(rate*(1+SpareHeadroom)/capacity-1e-9)))
}

// MakePlan turns the measured levels of a capacity search into a plan:
// capacity per replica (the conservative end of the capacity level's
// repeats) and what limits it, replicas for the target, GPUs, and the
// autoscaling settings, with every assumption written down. When the client
// limited a level the plan rests on, the plan is returned with Refused set
// and no replicas, and the error is a *ClientBoundError, unless
// o.AllowClientBound. When no level met the SLO, the plan says so in
// Refused, and the error is a *NoCapacityError.
func MakePlan(levels []Level, best int, o PlanOptions) (*record.Plan, error) {
	if best < 0 || best >= len(levels) {
		// No level passed: when the client limited them, the failure is
		// no evidence against the server.
		if why := clientLimitedAny(levels); why != "" && !o.AllowClientBound {
			p := &record.Plan{TargetRate: o.TargetRate, Simulated: o.Simulated, DemoGPU: o.DemoGPU, ClientBound: true,
				Limit: why,
				Refused: fmt.Sprintf("no level met the SLO %s, but the client limited the measurement (%s): the failure may be the client's, not the server's; measure from a bigger client machine, or from several (--workers)",
					o.SLO, why)}
			return p, &ClientBoundError{Why: why}
		}
		msg := fmt.Sprintf("no load level met the SLO %s: the replica cannot serve even the lowest rate tried; relax the SLO or check the diagnosis", o.SLO)
		return &record.Plan{TargetRate: o.TargetRate, Simulated: o.Simulated, DemoGPU: o.DemoGPU, Refused: msg}, &NoCapacityError{msg}
	}
	if !(o.TargetRate > 0) {
		return nil, fmt.Errorf("target rate %v: give a positive number of requests per second", o.TargetRate)
	}
	st := levels[best].Step
	p := &record.Plan{TargetRate: o.TargetRate, Capacity: st.Client.RequestsPerS, CapacityLevel: st.Load,
		Simulated: o.Simulated, DemoGPU: o.DemoGPU}
	if sc := st.Client.Streaming; sc != nil && sc.OutputTokens > 0 {
		p.CapacityTokensPerS = sc.OutputTokensPerS
	}
	if !(p.Capacity > 0) {
		return nil, fmt.Errorf("the passing level %s finished no request", st.Load)
	}
	repeats := o.Repeats
	if len(repeats) == 0 {
		repeats = []Level{levels[best]}
	}
	if l := applyRepeats(p, repeats, o.StabilityPercent); l != nil {
		p.CapacityLevel = l.Step.Load
	}
	p.Limit = limitOf(levels, best, o.SLO)
	if why := clientLimited(levels, best, repeats); why != "" {
		p.ClientBound = true
		if !o.AllowClientBound {
			p.Refused = fmt.Sprintf("the client limited the measurement (%s): %s req/s is only a lower bound on the replica's capacity, and replicas planned on it would be too many; measure from a bigger client machine, or from several (--workers), or pass --allow-client-bound to plan on the lower bound",
				why, num(p.Capacity))
			return p, &ClientBoundError{Why: why, LowerBound: p.Capacity}
		}
	}
	p.Replicas = ReplicasFor(o.TargetRate, p.Capacity)
	p.Spare = p.Replicas > int(math.Ceil(o.TargetRate/p.Capacity-1e-9))
	p.Headroom = float64(p.Replicas)*p.Capacity/o.TargetRate - 1
	gpuMax := 0.0
	for _, g := range st.Metrics.GPUs {
		if g.HasUtilization && g.UtilizationAvg > 0.01 {
			p.GPUsPerReplica++
			gpuMax = max(gpuMax, g.UtilizationAvg)
		}
	}
	p.GPUs = p.Replicas * p.GPUsPerReplica
	scaleRange(p, o)

	// GPU utilization is the usual autoscaling signal; when it is already
	// near full at capacity (dynamic batching fills the GPU long before the
	// SLO breaks), it cannot tell a replica at half its capacity from one
	// at its limit, and the queue time can.
	metric, target := ScaleOnGPUUtilization, o.SLO.GPUTarget
	switch {
	case gpuMax >= saturatedGPU || p.GPUsPerReplica == 0:
		metric, target = ScaleOnQueueTime, math.Round(queueTargetShare*float64(st.Server.Queue/time.Microsecond))
		if target < 1 || !st.Server.Available {
			metric, target = ScaleOnPendingRequests, math.Max(1, math.Round(st.Metrics.PendingAvg))
		}
	case target == 0:
		target = math.Floor(100*gpuMax) / 100
	}
	p.Autoscaling, p.AutoscalingTarget = autoscalingName(metric), target
	p.Assumptions = assumptions(p, o, gpuMax, metric)
	if p.ClientBound {
		p.Assumptions = append([]string{"CLIENT-BOUND (planned because of --allow-client-bound): the client limited the measurement (tritontop or its host near full CPU, or its sends falling behind their schedule): the capacity is a lower bound and the replicas are too many; measure from a bigger client machine, or from several (--workers)"},
			p.Assumptions...)
	}
	if o.Simulated {
		p.Assumptions = append([]string{simulatedNote(o)}, p.Assumptions...)
	}
	if p.Cost = planCost(p, o); p.Cost != nil {
		p.Assumptions = append(p.Assumptions, costAssumption(p))
	}
	notes := []string{fmt.Sprintf("Measured: one replica holds %s req/s of %s under %s (%s); the target is %s req/s.",
		num(p.Capacity), o.Model, o.SLO, p.CapacityBasis, num(o.TargetRate))}
	if o.Simulated {
		notes = append(notes, "SIMULATED: "+simulatedNote(o)+".")
	}
	if p.ClientBound {
		notes = append(notes, "CLIENT-BOUND: the capacity is a lower bound (planned because of --allow-client-bound).")
	}
	yaml, err := HPAYAML(HPAOptions{
		Deployment: o.Deployment, Namespace: o.Namespace, Model: o.Model,
		MinReplicas: p.MinReplicas, MaxReplicas: p.MaxReplicas, Metric: metric, Target: target,
		Notes: notes,
	})
	if err != nil {
		return nil, err
	}
	p.HPA = string(yaml)
	p.Autoscaler = "hpa"
	if o.Autoscaler == "keda" {
		p.Autoscaler = "keda"
		y, err := KEDAYAML(KEDAOptions{HPA: HPAOptions{
			Deployment: o.Deployment, Namespace: o.Namespace, Model: o.Model,
			MinReplicas: p.MinReplicas, MaxReplicas: p.MaxReplicas, Metric: metric, Target: target,
			Notes: notes,
		}, PrometheusURL: o.PrometheusURL})
		if err != nil {
			return nil, err
		}
		p.KEDA = string(y)
	}
	return p, nil
}

// simulatedNote says the server was tritontop's simulator, and how its GPU
// was sized.
func simulatedNote(o PlanOptions) string {
	s := "the server measured was tritontop's simulator, not a Triton on real GPUs: these numbers show how to plan, not what to buy"
	if o.DemoGPU != "" {
		s += "; " + o.DemoGPU
	}
	return s
}

// clientLimited says how the client limited a level the plan rests on: the
// capacity's level, its repeats, and the lowest failing level above it (the
// one that set the limit); "" when the diagnosis named the client at none.
func clientLimited(levels []Level, best int, repeats []Level) string {
	b := levels[best].Target.Level()
	check := append([]Level{levels[best]}, repeats...)
	next := -1
	for i, l := range levels {
		if l.Target.Open() && !l.Pass && l.Target.Level() > b && (next < 0 || l.Target.Level() < levels[next].Target.Level()) {
			next = i
		}
	}
	if next >= 0 {
		check = append(check, levels[next])
	}
	for _, l := range check {
		for _, f := range l.Step.Diagnosis {
			if f.Verdict == stats.ClientBound || f.Verdict == stats.FallingBehind {
				return fmt.Sprintf("at %s: %s", l.Target, f.Message)
			}
		}
	}
	return ""
}

// clientLimitedAny says how the client limited the first level whose
// diagnosis names it; "" when none does.
func clientLimitedAny(levels []Level) string {
	for _, l := range levels {
		for _, f := range l.Step.Diagnosis {
			if f.Verdict == stats.ClientBound || f.Verdict == stats.FallingBehind {
				return fmt.Sprintf("at %s: %s", l.Target, f.Message)
			}
		}
	}
	return ""
}

func autoscalingName(m HPAMetric) string {
	switch m {
	case ScaleOnQueueTime:
		return "queue-time"
	case ScaleOnPendingRequests:
		return "pending-requests"
	}
	return "gpu-utilization"
}

// limitOf says what held the capacity where it is: the first failing level
// above it, with its diagnosis.
func limitOf(levels []Level, best int, slo SLO) string {
	b := levels[best].Target.Level()
	next := -1
	for i, l := range levels {
		if l.Target.Open() && !l.Pass && l.Target.Level() > b && (next < 0 || l.Target.Level() < levels[next].Target.Level()) {
			next = i
		}
	}
	if next < 0 {
		return "the highest rate tried still met the SLO: the capacity may be higher"
	}
	l := levels[next]
	m := l.Step.Measurement
	why := ""
	switch {
	case m == nil || m.SLO == nil:
	case m.SLO.Latency >= slo.Threshold:
		why = fmt.Sprintf("%s reached %s", sloWhat(slo), fmtMS(m.SLO.Latency))
	case slo.GPUTarget > 0 && m.SLO.GPUUtilization > slo.GPUTarget:
		why = fmt.Sprintf("GPU utilization reached %s of the %s allowed", pctOf(m.SLO.GPUUtilization), pctOf(slo.GPUTarget))
	case !m.Stable:
		why = "the measurement did not stabilize"
	}
	s := fmt.Sprintf("at %s %s", l.Target, why)
	if f, ok := limitFinding(l.Step.Diagnosis); ok {
		s += " (" + f.Message + ")"
	}
	return s
}

// limitFinding is the finding a plan's limit quotes: the first, unless
// one names a pipeline's step (where its requests queue): that one says
// which model to give more instances.
func limitFinding(fs []stats.Finding) (stats.Finding, bool) {
	for _, f := range fs {
		if f.Step != "" {
			return f, true
		}
	}
	if len(fs) == 0 {
		return stats.Finding{}, false
	}
	return fs[0], true
}

// spareAssumption states the spare rule exactly, with the numbers it was
// applied to.
func spareAssumption(p *record.Plan) string {
	// One decimal: 19.5% rounded to 20% would read as not under 20%.
	pct1 := func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
	need := int(math.Ceil(p.TargetRate/p.Capacity - 1e-9))
	s := fmt.Sprintf("replicas are the fewest whose capacity is at least %s over the target: ceil(%s × %s / %s) = %d",
		pctOf(SpareHeadroom), num(p.TargetRate), strconv.FormatFloat(1+SpareHeadroom, 'f', -1, 64), num(p.Capacity), p.Replicas)
	if p.Spare {
		s += fmt.Sprintf(", %d more than the %d the target alone needs", p.Replicas-need, need)
	}
	return s + fmt.Sprintf("; headroom %s", pct1(p.Headroom))
}

func assumptions(p *record.Plan, o PlanOptions, gpuMax float64, m HPAMetric) []string {
	a := []string{
		fmt.Sprintf("capacity is the highest open-loop rate (constant arrivals) at which %s held and the measurement was stable, on this server with this model config and these inputs",
			o.SLO),
		fmt.Sprintf("replicas scale linearly: %d × %s req/s, no shared bottleneck (network, load balancer, CPU of the nodes)", p.Replicas, num(p.Capacity)),
		spareAssumption(p),
		scaleAssumption(p),
	}
	switch m {
	case ScaleOnGPUUtilization:
		a = append(a, fmt.Sprintf("GPU utilization (nv_gpu_utilization through the Prometheus adapter) tracks load: %s at capacity", pctOf(gpuMax)))
	case ScaleOnQueueTime:
		a = append(a, fmt.Sprintf("GPU utilization is %s at capacity, saturated before latency: the autoscaler follows Triton's queue time per request instead (nv_inference_queue_duration_us over nv_inference_request_success), targeting %s of its value at capacity",
			pctOf(gpuMax), pctOf(queueTargetShare)))
	case ScaleOnPendingRequests:
		a = append(a, "neither GPU utilization nor queue time tells the headroom here: the autoscaler follows nv_inference_pending_request_count")
	}
	if p.GPUsPerReplica > 0 {
		gpus := fmt.Sprintf("the %d GPUs", p.GPUsPerReplica)
		if p.GPUsPerReplica == 1 {
			gpus = "the GPU"
		}
		a = append(a, fmt.Sprintf("a replica uses %s busy during the measurement", gpus))
	}
	return a
}

func sloWhat(s SLO) string {
	if s.Percentile > 0 {
		return "p" + strconv.FormatFloat(s.Percentile, 'g', -1, 64) + " latency"
	}
	return "average latency"
}

func fmtMS(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + " ms" }

func pctOf(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }

// num is a rate: whole numbers, and three significant figures under 10.
func num(f float64) string {
	if f != 0 && math.Abs(f) < 10 {
		return strconv.FormatFloat(f, 'g', 3, 64)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}
