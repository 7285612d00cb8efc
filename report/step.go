package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// StepBuilder accumulates consecutive ticks of one load level into a
// record.Step: counters added, latency merged from the ticks' histograms,
// server times weighted by their counts, metrics and client CPU averaged.
// Capacity planning builds its measured steps with it, so a step means the
// same thing whoever makes it.
type StepBuilder struct {
	load      stats.Load
	planned   plannedMean // a load plan's target over the ticks
	firstSeq  int
	lastSeq   int
	ticks     int
	client    stats.ClientStats // counters only
	latency   stats.LatencyMerge
	scheduled stats.LatencyMerge
	// A decoupled model's responses.
	ttft stats.LatencyMerge
	// ttftSched is the time to first response from the schedule (open
	// loop).
	ttftSched stats.LatencyMerge
	itl       stats.LatencyMerge
	perReq    stats.CountsMerge
	// A stateful model's sequences.
	seq     stats.LatencyMerge
	server  serverAcc
	metrics metricsAcc
	cpu     cpuAcc
	paused  time.Duration
}

// NewStepBuilder starts a step at load level l; a zero l takes the first
// tick's.
func NewStepBuilder(l stats.Load) *StepBuilder { return &StepBuilder{load: l} }

// Ticks is the number of ticks added.
func (p *StepBuilder) Ticks() int { return p.ticks }

// Add includes the next tick.
func (p *StepBuilder) Add(s stats.Snapshot) {
	if p.ticks == 0 {
		p.firstSeq = s.Seq
		if p.load.Mode == "" {
			p.load = s.Load
		}
	}
	p.ticks++
	p.lastSeq = s.Seq
	p.paused += s.Paused
	p.planned.add(s)
	p.load.InFlight, p.load.Paused = s.Load.InFlight, s.Load.Paused

	t := s.Tick
	if t.Duration <= 0 {
		// A file that did not record the tick's own duration.
		t.Duration = max(s.Interval-s.Paused, 0)
	}
	p.client.Add(&t)
	p.latency.Add(t.Latency, s.Histogram)
	if t.Scheduled != nil {
		p.scheduled.Add(*t.Scheduled, s.ScheduledHistogram)
	}
	if st := t.Streaming; st != nil {
		p.ttft.Add(st.TTFT, s.TTFTHistogram)
		if st.TTFTScheduled != nil {
			p.ttftSched.Add(*st.TTFTScheduled, s.TTFTScheduledHistogram)
		}
		p.itl.Add(st.ITL, s.ITLHistogram)
		p.perReq.Add(st.PerRequest, s.ResponsesHistogram)
	}
	if sq := t.Sequences; sq != nil {
		p.seq.Add(sq.Latency, s.SequenceHistogram)
	}
	p.server.add(&s.Server)
	if s.ServerLate != nil {
		// The ticks before whose read answered late: in the same step
		// unless a change of load came between (then it still counts
		// in the whole run's).
		p.server.add(s.ServerLate)
	}
	p.metrics.add(&s.Metrics)
	p.cpu.add(s, t.Duration)
}

// AtOrBelow counts the successful requests whose latency (from the
// schedule when scheduled is set) was at most d, and reports whether the
// count is exact: it is read off the merged histograms, within their
// precision, and unknown when a tick carried none.
func (p *StepBuilder) AtOrBelow(d time.Duration, scheduled bool) (int64, bool) {
	m := &p.latency
	if scheduled {
		m = &p.scheduled
	}
	return atOrBelow(m, d)
}

// TTFTAtOrBelow counts the successful requests to a decoupled model whose
// time to first response was at most d, as AtOrBelow counts latencies.
func (p *StepBuilder) TTFTAtOrBelow(d time.Duration) (int64, bool) { return atOrBelow(&p.ttft, d) }

// atOrBelow counts the values of a merged histogram up to d.
func atOrBelow(m *stats.LatencyMerge, d time.Duration) (int64, bool) {
	h := m.Histogram()
	if h == nil {
		return 0, false
	}
	limit := int64(d / time.Microsecond)
	var n int64
	for _, b := range h.Distribution() {
		if b.To <= limit {
			n += b.Count
		}
	}
	return n, true
}

// Step returns the step of the ticks added so far.
func (p *StepBuilder) Step() record.Step {
	c := p.client
	c.ErrorsByCode = slices.Clone(c.ErrorsByCode)
	if c.Streaming != nil {
		// The builder keeps adding to its own.
		sc := *c.Streaming
		c.Streaming = &sc
	}
	if c.Sequences != nil {
		sq := *c.Sequences
		c.Sequences = &sq
	}
	c.SetRates()
	st := record.Step{
		Load:      p.planned.of(p.load),
		FirstSeq:  p.firstSeq,
		LastSeq:   p.lastSeq,
		Ticks:     p.ticks,
		Duration:  c.Duration,
		Paused:    p.paused,
		Server:    p.server.summary(),
		Metrics:   p.metrics.summary(),
		ClientCPU: p.cpu.summary(),
	}
	c.Latency, st.Approximate = p.latency.Latency()
	if p.scheduled.Count() > 0 {
		l, a := p.scheduled.Latency()
		c.Scheduled = &l
		st.Approximate = st.Approximate || a
	}
	if sc := c.Streaming; sc != nil {
		var a1, a2, a3 bool
		sc.TTFT, a1 = p.ttft.Latency()
		sc.ITL, a2 = p.itl.Latency()
		sc.PerRequest, a3 = p.perReq.Counts()
		st.Approximate = st.Approximate || a1 || a2 || a3
		if p.ttftSched.Count() > 0 {
			l, a := p.ttftSched.Latency()
			sc.TTFTScheduled = &l
			st.Approximate = st.Approximate || a
		}
	}
	if sq := c.Sequences; sq != nil {
		var a bool
		sq.Latency, a = p.seq.Latency()
		st.Approximate = st.Approximate || a
	}
	st.Client = c
	return st
}

// serverAcc sums ModelStatistics deltas and count-weighted averages; a
// pipeline's steps each in an accumulator of its own, and its own times.
type serverAcc struct {
	ticks                                    int
	success, fail, infer, exec, cacheHit     int64
	requestNs, queueNs, inNs, inferNs, outNs float64
	batches                                  []stats.BatchCount
	responses                                *stats.ServerResponses
	steps                                    []*stepAcc
	own                                      *stats.OwnTimes // Σ average × count, ns
	model, version                           string
}

// stepAcc is one composing model's accumulator.
type stepAcc struct{ serverAcc }

func (a *serverAcc) add(s *stats.ServerStats) {
	if !s.Available || s.Reset {
		return
	}
	a.model, a.version = s.Model, s.Version
	a.addSteps(s)
	a.ticks++
	a.success += s.SuccessCount
	a.fail += s.FailCount
	a.infer += s.InferenceCount
	a.exec += s.ExecutionCount
	a.cacheHit += s.CacheHitCount
	n := float64(s.SuccessCount)
	computeN := float64(max(s.SuccessCount-s.CacheHitCount, 0))
	a.requestNs += float64(s.Request) * n
	a.queueNs += float64(s.Queue) * n
	a.inNs += float64(s.ComputeInput) * computeN
	a.inferNs += float64(s.ComputeInfer) * computeN
	a.outNs += float64(s.ComputeOutput) * computeN
	if s.Responses != nil {
		if a.responses == nil {
			a.responses = &stats.ServerResponses{}
		}
		a.responses.Add(s.Responses)
	}
	for _, b := range s.Batches {
		i, found := slices.BinarySearchFunc(a.batches, b.Size, func(x stats.BatchCount, size int) int { return cmp.Compare(x.Size, size) })
		if found {
			a.batches[i].Count += b.Count
		} else {
			a.batches = slices.Insert(a.batches, i, b)
		}
	}
}

func (a *serverAcc) summary() record.ServerSummary {
	s := record.ServerSummary{Ticks: a.ticks, ServerStats: stats.ServerStats{
		Available:      a.ticks > 0,
		SuccessCount:   a.success,
		FailCount:      a.fail,
		InferenceCount: a.infer,
		ExecutionCount: a.exec,
		CacheHitCount:  a.cacheHit,
		Batches:        slices.Clone(a.batches),
	}}
	if a.success > 0 {
		n := float64(a.success)
		s.Request = time.Duration(a.requestNs / n)
		s.Queue = time.Duration(a.queueNs / n)
	}
	if cn := a.success - a.cacheHit; cn > 0 {
		n := float64(cn)
		s.ComputeInput = time.Duration(a.inNs / n)
		s.ComputeInfer = time.Duration(a.inferNs / n)
		s.ComputeOutput = time.Duration(a.outNs / n)
	}
	s.Overhead = max(s.Request-s.Queue-s.Compute(), 0)
	if a.exec > 0 {
		s.AvgBatch = float64(a.infer) / float64(a.exec)
	}
	if a.responses != nil {
		r := *a.responses
		s.Responses = &r
	}
	a.stepsSummary(&s.ServerStats)
	return s
}

// addSteps adds a pipeline's steps, each to its composing model's
// accumulator, and its own times weighted as the others.
func (a *serverAcc) addSteps(s *stats.ServerStats) {
	for i := range s.Steps {
		st := &s.Steps[i]
		k := slices.IndexFunc(a.steps, func(x *stepAcc) bool { return x.model == st.Model })
		if k < 0 {
			a.steps = append(a.steps, &stepAcc{serverAcc{model: st.Model}})
			k = len(a.steps) - 1
		}
		a.steps[k].add(st)
	}
	if o := s.Own; o != nil {
		if a.own == nil {
			a.own = &stats.OwnTimes{}
		}
		n, cn := time.Duration(s.SuccessCount), time.Duration(max(s.SuccessCount-s.CacheHitCount, 0))
		a.own.Queue += o.Queue * n
		a.own.ComputeInput += o.ComputeInput * cn
		a.own.ComputeInfer += o.ComputeInfer * cn
		a.own.ComputeOutput += o.ComputeOutput * cn
	}
}

// stepsSummary sets a pipeline's steps, own times and decomposition over
// the span.
func (a *serverAcc) stepsSummary(s *stats.ServerStats) {
	if len(a.steps) == 0 {
		return
	}
	s.Steps = make([]stats.ServerStats, len(a.steps))
	for i, st := range a.steps {
		s.Steps[i] = st.summary().ServerStats
		s.Steps[i].Model, s.Steps[i].Version = st.model, st.version
	}
	if a.own != nil {
		o := stats.OwnTimes{}
		if a.success > 0 {
			o.Queue = a.own.Queue / time.Duration(a.success)
		}
		if cn := a.success - a.cacheHit; cn > 0 {
			o.ComputeInput = a.own.ComputeInput / time.Duration(cn)
			o.ComputeInfer = a.own.ComputeInfer / time.Duration(cn)
			o.ComputeOutput = a.own.ComputeOutput / time.Duration(cn)
		}
		s.Own = &o
	}
	s.Decompose()
}

// metricsAcc averages Triton's metrics over the ticks that read them, each
// GPU gauge over the ticks that reported it.
type metricsAcc struct {
	ticks            int
	gpus             []gpuAcc
	cpuN             int
	cpuSum, cpuMax   float64
	pendN            int
	pendSum, pendMax float64
}

type gpuAcc struct {
	record.GPUSummary
	utilN, powerN     int
	utilSum, powerSum float64
}

func (a *metricsAcc) add(m *stats.ServerMetrics) {
	if !m.Available {
		return
	}
	a.ticks++
	for _, g := range m.GPUs {
		// Replicas of one model may report the same GPU UUIDs (copies of
		// one machine image, simulators): a GPU is its replica's.
		i := slices.IndexFunc(a.gpus, func(x gpuAcc) bool { return x.UUID == g.UUID && x.Replica == g.Replica })
		if i < 0 {
			a.gpus = append(a.gpus, gpuAcc{GPUSummary: record.GPUSummary{UUID: g.UUID, Replica: g.Replica}})
			i = len(a.gpus) - 1
		}
		x := &a.gpus[i]
		if g.Name != "" {
			x.Name = g.Name
		}
		x.Ticks++
		if g.HasUtilization {
			x.utilN++
			x.utilSum += g.Utilization
			x.UtilizationMax = max(x.UtilizationMax, g.Utilization)
		}
		if g.HasPower {
			x.powerN++
			x.powerSum += g.PowerW
			x.PowerMaxW = max(x.PowerMaxW, g.PowerW)
		}
		if g.HasMemory {
			x.HasMemory = true
			x.MemoryUsedMax = max(x.MemoryUsedMax, g.MemoryUsed)
			if g.MemoryTotal > 0 {
				x.MemoryTotal = g.MemoryTotal
			}
		}
	}
	if m.HasCPU {
		a.cpuN++
		a.cpuSum += m.CPUUtilization
		a.cpuMax = max(a.cpuMax, m.CPUUtilization)
	}
	if m.HasPending {
		a.pendN++
		a.pendSum += m.Pending
		a.pendMax = max(a.pendMax, m.Pending)
	}
}

func (a *metricsAcc) summary() record.MetricsSummary {
	s := record.MetricsSummary{Ticks: a.ticks}
	for _, g := range a.gpus {
		gs := g.GPUSummary
		if g.utilN > 0 {
			gs.HasUtilization, gs.UtilizationAvg = true, g.utilSum/float64(g.utilN)
		}
		if g.powerN > 0 {
			gs.HasPower, gs.PowerAvgW = true, g.powerSum/float64(g.powerN)
		}
		s.GPUs = append(s.GPUs, gs)
	}
	if a.cpuN > 0 {
		s.HasCPU, s.CPUAvg, s.CPUMax = true, a.cpuSum/float64(a.cpuN), a.cpuMax
	}
	if a.pendN > 0 {
		s.HasPending, s.PendingAvg, s.PendingMax = true, a.pendSum/float64(a.pendN), a.pendMax
	}
	return s
}

// cpuAcc integrates tritontop's CPU use over the ticks.
type cpuAcc struct{ record.CPUTotals }

func (a *cpuAcc) add(s stats.Snapshot, d time.Duration) {
	a.Ticks++
	a.CPUSeconds += s.System.ProcessCPU * d.Seconds()
	a.Seconds += d.Seconds()
	a.AddMax(s.System.ProcessCPU, d)
	a.HostSum += s.System.HostCPU
	a.Requests += s.Tick.Requests
}

func (a *cpuAcc) summary() record.ClientCPU { return a.ClientCPU() }
