package record

import (
	"cmp"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/stats"
)

// span accumulates consecutive ticks into a Step.
type span struct {
	load      stats.Load
	firstSeq  int
	lastSeq   int
	ticks     int
	client    stats.ClientStats // counters only
	latency   latencyAcc
	scheduled latencyAcc
	errors    []stats.ErrorCount
	server    serverAcc
	metrics   metricsAcc
	cpu       cpuAcc
}

func newSpan(load stats.Load) span {
	return span{load: load}
}

func (p *span) add(s stats.Snapshot) {
	if p.ticks == 0 {
		p.firstSeq = s.Seq
	}
	p.ticks++
	p.lastSeq = s.Seq
	p.load.InFlight, p.load.Paused = s.Load.InFlight, s.Load.Paused

	t := &s.Tick
	d := t.Duration
	if d <= 0 {
		d = s.Interval
	}
	c := &p.client
	c.Duration += d
	c.Requests += t.Requests
	c.Successes += t.Successes
	c.Errors += t.Errors
	c.Inferences += t.Inferences
	c.Cancelled += t.Cancelled
	c.Retries += t.Retries
	c.Late += t.Late
	c.BytesSent += t.BytesSent
	c.BytesReceived += t.BytesReceived
	for _, e := range t.ErrorsByCode {
		p.addError(e)
	}
	p.latency.add(t.Latency, s.Histogram)
	if t.Scheduled != nil {
		p.scheduled.add(*t.Scheduled, s.ScheduledHistogram)
	}
	p.server.add(&s.Server)
	p.metrics.add(&s.Metrics)
	p.cpu.add(s, d)
}

func (p *span) addError(e stats.ErrorCount) {
	for i := range p.errors {
		if p.errors[i].Code == e.Code {
			p.errors[i].Count += e.Count
			if e.Message != "" {
				p.errors[i].Message = e.Message
			}
			return
		}
	}
	p.errors = append(p.errors, e)
}

func (p *span) step() Step {
	c := p.client
	if secs := c.Duration.Seconds(); secs > 0 {
		c.RequestsPerS = float64(c.Requests) / secs
		c.InferPerS = float64(c.Inferences) / secs
	}
	if c.Requests > 0 {
		c.LateShare = float64(c.Late) / float64(c.Requests)
	}
	errs := slices.Clone(p.errors)
	slices.SortStableFunc(errs, func(a, b stats.ErrorCount) int { return cmp.Compare(b.Count, a.Count) })
	c.ErrorsByCode = errs
	st := Step{
		Load:      p.load,
		FirstSeq:  p.firstSeq,
		LastSeq:   p.lastSeq,
		Ticks:     p.ticks,
		Duration:  c.Duration,
		Server:    p.server.summary(),
		Metrics:   p.metrics.summary(),
		ClientCPU: p.cpu.summary(),
	}
	var approx bool
	c.Latency, approx = p.latency.summary()
	st.Approximate = approx
	if p.scheduled.count > 0 {
		l, a := p.scheduled.summary()
		c.Scheduled = &l
		st.Approximate = st.Approximate || a
	}
	st.Client = c
	return st
}

// latencyAcc merges tick latencies: exactly through their histograms when
// every tick with successes has one, otherwise by count-weighting the
// ticks' own percentiles.
type latencyAcc struct {
	count   int64
	min     time.Duration
	max     time.Duration
	sum     float64 // Σ mean × count, ns
	hist    *hdrhistogram.Histogram
	missing bool       // a tick with successes had no usable histogram
	pct     [5]float64 // Σ percentile × count, ns
}

func (a *latencyAcc) add(l stats.Latency, encoded string) {
	if l.Count <= 0 {
		return
	}
	if a.count == 0 || l.Min < a.min {
		a.min = l.Min
	}
	if l.Max > a.max {
		a.max = l.Max
	}
	a.count += l.Count
	n := float64(l.Count)
	a.sum += float64(l.Mean) * n
	for i, p := range [...]time.Duration{l.P50, l.P90, l.P95, l.P99, l.P999} {
		a.pct[i] += float64(p) * n
	}
	if a.missing {
		return
	}
	h, err := stats.DecodeHistogram(encoded)
	if err != nil || encoded == "" || h.TotalCount() == 0 {
		a.missing, a.hist = true, nil
		return
	}
	if a.hist == nil {
		a.hist = h
		return
	}
	a.hist.Merge(h)
}

// summary returns the merged latency and whether it is approximate.
func (a *latencyAcc) summary() (stats.Latency, bool) {
	if a.count == 0 {
		return stats.Latency{}, false
	}
	var l stats.Latency
	approx := a.missing || a.hist == nil
	if approx {
		n := float64(a.count)
		l = stats.Latency{
			P50:  time.Duration(a.pct[0] / n),
			P90:  time.Duration(a.pct[1] / n),
			P95:  time.Duration(a.pct[2] / n),
			P99:  time.Duration(a.pct[3] / n),
			P999: time.Duration(a.pct[4] / n),
		}
	} else {
		l = stats.LatencyFromHistogram(a.hist)
	}
	// The ticks' own count, min, max and mean are exact; the histogram's
	// are within its precision.
	l.Count, l.Min, l.Max = a.count, a.min, a.max
	l.Mean = time.Duration(a.sum / float64(a.count))
	for _, p := range []*time.Duration{&l.P50, &l.P90, &l.P95, &l.P99, &l.P999} {
		*p = min(max(*p, l.Min), l.Max)
	}
	return l, approx
}

// serverAcc sums ModelStatistics deltas and count-weighted averages.
type serverAcc struct {
	ticks                                    int
	success, fail, infer, exec, cacheHit     int64
	requestNs, queueNs, inNs, inferNs, outNs float64
	batches                                  []stats.BatchCount
}

func (a *serverAcc) add(s *stats.ServerStats) {
	if !s.Available || s.Reset {
		return
	}
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
	for _, b := range s.Batches {
		i, found := slices.BinarySearchFunc(a.batches, b.Size, func(x stats.BatchCount, size int) int { return cmp.Compare(x.Size, size) })
		if found {
			a.batches[i].Count += b.Count
		} else {
			a.batches = slices.Insert(a.batches, i, b)
		}
	}
}

func (a *serverAcc) summary() ServerSummary {
	s := ServerSummary{Ticks: a.ticks, ServerStats: stats.ServerStats{
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
	return s
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
	GPUSummary
	utilN, powerN     int
	utilSum, powerSum float64
}

func (a *metricsAcc) add(m *stats.ServerMetrics) {
	if !m.Available {
		return
	}
	a.ticks++
	for _, g := range m.GPUs {
		i := slices.IndexFunc(a.gpus, func(x gpuAcc) bool { return x.UUID == g.UUID })
		if i < 0 {
			a.gpus = append(a.gpus, gpuAcc{GPUSummary: GPUSummary{UUID: g.UUID}})
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

func (a *metricsAcc) summary() MetricsSummary {
	s := MetricsSummary{Ticks: a.ticks}
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
type cpuAcc struct {
	ticks      int
	cpuSeconds float64
	seconds    float64
	maxCores   float64
	hostSum    float64
	requests   int64
}

func (a *cpuAcc) add(s stats.Snapshot, d time.Duration) {
	a.ticks++
	a.cpuSeconds += s.System.ProcessCPU * d.Seconds()
	a.seconds += d.Seconds()
	a.maxCores = max(a.maxCores, s.System.ProcessCPU)
	a.hostSum += s.System.HostCPU
	a.requests += s.Tick.Requests
}

func (a *cpuAcc) summary() ClientCPU {
	var c ClientCPU
	if a.ticks == 0 {
		return c
	}
	c.MaxCores = a.maxCores
	c.HostAvg = a.hostSum / float64(a.ticks)
	if a.seconds > 0 {
		c.AvgCores = a.cpuSeconds / a.seconds
	}
	if a.requests > 0 {
		c.PerRequest = time.Duration(a.cpuSeconds / float64(a.requests) * float64(time.Second))
	}
	return c
}
