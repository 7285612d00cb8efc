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

	// probes is how many probe levels Next has asked for, for Total.
	probes int
}

// Grid of the rate search, as fractions of the probe's throughput, and the
// probe's doubling.
const (
	rateStep = 0.05
	rateTop  = 1.10
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
		x = max(x, p.Step.Client.RequestsPerS)
	}
	return x
}

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
		if x := last.Step.Client.RequestsPerS; x > 0 && x >= probeGain*before && next <= MaxProbeConcurrency {
			c.probes = max(c.probes, len(probes)+1)
			return load.Target{Mode: load.Concurrency, Concurrency: next}, true
		}
	}
	grid := c.grid(saturation(probes))
	return grid.Next(rates)
}

// grid is the binary search over rates for a saturated throughput x.
func (c *Capacity) grid(x float64) *Binary {
	if !(x > 0) {
		return &Binary{}
	}
	floor := MeasurableRate(c.Window)
	var levels []load.Target
	for i := 1; float64(i)*rateStep <= rateTop+1e-9; i++ {
		t := c.Base
		t.Mode = load.Rate
		// Rates to three significant figures read well in a plan.
		t.Rate = roundSig(float64(i)*rateStep*x, 3)
		if t.Rate >= floor {
			levels = append(levels, t)
		}
	}
	return &Binary{Levels: levels}
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

// Total implements Search: the probes so far (and the next, while probing)
// and the binary search.
func (c *Capacity) Total() int {
	n := int(math.Round(rateTop / rateStep))
	return max(c.probes, 1) + Binary{Levels: make([]load.Target, n)}.Total()
}

// Best implements a search's choice of the answer: the highest passing
// rate, the probes left out.
func (c *Capacity) Best(done []Level) int {
	probes, rates := probed(done)
	i := Best(rates)
	if i < 0 {
		return -1
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
}

// Spare and scaling assumptions of a plan.
const (
	// SpareHeadroom: with less spare capacity than this over the target,
	// the plan adds one replica.
	SpareHeadroom = 0.20
	// maxReplicasFactor: the autoscaler may grow to this many times the
	// replicas the target needs.
	maxReplicasFactor = 2
	// saturatedGPU is the utilization from which GPU utilization no longer
	// tells how close a replica is to its capacity.
	saturatedGPU = 0.90
	// queueTargetShare: the queue-time target is this share of the queue
	// time per request measured at capacity.
	queueTargetShare = 0.8
)

// MakePlan turns the measured levels of a capacity search into a plan:
// capacity per replica and what limits it, replicas for the target, GPUs,
// and the autoscaling settings, with every assumption written down.
func MakePlan(levels []Level, best int, o PlanOptions) (*record.Plan, error) {
	if best < 0 || best >= len(levels) {
		return nil, fmt.Errorf("no load level met the SLO %s: the replica cannot serve even the lowest rate tried; relax the SLO or check the diagnosis", o.SLO)
	}
	if !(o.TargetRate > 0) {
		return nil, fmt.Errorf("target rate %v: give a positive number of requests per second", o.TargetRate)
	}
	st := levels[best].Step
	p := &record.Plan{TargetRate: o.TargetRate, Capacity: st.Client.RequestsPerS, CapacityLevel: st.Load}
	if sc := st.Client.Streaming; sc != nil && sc.OutputTokens > 0 {
		p.CapacityTokensPerS = sc.OutputTokensPerS
	}
	if !(p.Capacity > 0) {
		return nil, fmt.Errorf("the passing level %s finished no request", st.Load)
	}
	p.Limit = limitOf(levels, best, o.SLO)
	p.Replicas = int(math.Ceil(o.TargetRate / p.Capacity))
	p.Headroom = float64(p.Replicas)*p.Capacity/o.TargetRate - 1
	if p.Headroom < SpareHeadroom {
		p.Replicas++
		p.Spare = true
		p.Headroom = float64(p.Replicas)*p.Capacity/o.TargetRate - 1
	}
	gpuMax := 0.0
	for _, g := range st.Metrics.GPUs {
		if g.HasUtilization && g.UtilizationAvg > 0.01 {
			p.GPUsPerReplica++
			gpuMax = max(gpuMax, g.UtilizationAvg)
		}
	}
	p.GPUs = p.Replicas * p.GPUsPerReplica
	p.MinReplicas, p.MaxReplicas = p.Replicas, maxReplicasFactor*p.Replicas

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
	if clientLimited(levels, best) {
		p.Assumptions = append([]string{"the client limited the measurement (tritontop or its host near full CPU, or its sends falling behind their schedule): the capacity is a lower bound; measure from a bigger client machine, or from several (--workers)"},
			p.Assumptions...)
	}
	yaml, err := HPAYAML(HPAOptions{
		Deployment: o.Deployment, Namespace: o.Namespace, Model: o.Model,
		MinReplicas: p.MinReplicas, MaxReplicas: p.MaxReplicas, Metric: metric, Target: target,
		Notes: []string{fmt.Sprintf("Measured: one replica holds %s req/s of %s under %s; the target is %s req/s.",
			num(p.Capacity), o.Model, o.SLO, num(o.TargetRate))},
	})
	if err != nil {
		return nil, err
	}
	p.HPA = string(yaml)
	return p, nil
}

// clientLimited reports whether the diagnosis named the client as the limit
// (its CPU, or an open loop falling behind its schedule) at the capacity's
// level or at the lowest failing level above it, the one that set the limit.
func clientLimited(levels []Level, best int) bool {
	b := levels[best].Target.Level()
	check := []int{best}
	next := -1
	for i, l := range levels {
		if l.Target.Open() && !l.Pass && l.Target.Level() > b && (next < 0 || l.Target.Level() < levels[next].Target.Level()) {
			next = i
		}
	}
	if next >= 0 {
		check = append(check, next)
	}
	for _, i := range check {
		for _, f := range levels[i].Step.Diagnosis {
			if f.Verdict == stats.ClientBound || f.Verdict == stats.FallingBehind {
				return true
			}
		}
	}
	return false
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
	if len(l.Step.Diagnosis) > 0 {
		s += " (" + l.Step.Diagnosis[0].Message + ")"
	}
	return s
}

// spareAssumption states the spare rule with the headroom it was decided
// on: without the spare when one was added (that headroom was under the
// rule's), else the plan's own.
func spareAssumption(p *record.Plan) string {
	// One decimal: 19.5% rounded to 20% would read as not under 20%.
	pct1 := func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
	if p.Spare {
		without := float64(p.Replicas-1)*p.Capacity/p.TargetRate - 1
		return fmt.Sprintf("one spare replica is added when the headroom over the target is under %s (here %s without it, %s with it)",
			pctOf(SpareHeadroom), pct1(without), pct1(p.Headroom))
	}
	return fmt.Sprintf("one spare replica is added when the headroom over the target is under %s (here %s)", pctOf(SpareHeadroom), pct1(p.Headroom))
}

func assumptions(p *record.Plan, o PlanOptions, gpuMax float64, m HPAMetric) []string {
	a := []string{
		fmt.Sprintf("capacity is the highest open-loop rate (constant arrivals) at which %s held and the measurement was stable, on this server with this model config and these inputs",
			o.SLO),
		fmt.Sprintf("replicas scale linearly: %d × %s req/s, no shared bottleneck (network, load balancer, CPU of the nodes)", p.Replicas, num(p.Capacity)),
		spareAssumption(p),
		fmt.Sprintf("the autoscaler may grow to %d× the replicas the target needs, for bursts", maxReplicasFactor),
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
