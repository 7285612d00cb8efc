package record

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/stats"
)

// Worker says that a run is one worker's share of a load that several
// tritontop processes drive together (--workers N --worker-index I): which
// worker, of how many, and the whole load. The header's Load is the
// worker's own share.
type Worker struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Load is the whole load of all the workers at the start of the run.
	Load stats.Load `json:"load"`
	// StartAt is the shared start time (--start-at), zero without one.
	StartAt time.Time `json:"start_at,omitzero"`
}

// Merged says that a run file was merged from the run files of one run's
// workers (tritontop merge).
type Merged struct {
	// Count is how many workers the run had; Workers are the indexes of
	// those merged, from the Files of the same order. Fewer Workers than
	// Count means some workers' files were missing: the load is then not
	// the whole.
	Count   int      `json:"count"`
	Workers []int    `json:"workers"`
	Files   []string `json:"files,omitempty"`
}

// Merge adds up the run files of one distributed run's workers tick by
// tick into one run, as if one process had driven the whole load:
//
//   - client counters add and rates are recomputed over the tick;
//   - latency histograms merge exactly (HDR histograms of one geometry add
//     bucket by bucket), so a merged tick's percentiles are those of one
//     histogram holding every worker's results, with the exact count,
//     minimum, maximum and mean; a tick's Window and Run are recomputed
//     from the merged ticks over the window and the whole run;
//   - load levels add (concurrency, rate, requests in flight);
//   - the server's own numbers (Server, Metrics) are the same server seen by
//     every worker, so they are taken from one worker (the lowest index
//     that read them), never summed;
//   - client CPU adds up (the fleet's cores), host CPU is averaged;
//   - measured steps merge by schedule index, their numbers recomputed from
//     the merged ticks; a merged step is stable when every worker's was,
//     and carries no SLO verdict, which each worker made on its share.
//
// The merged run has no Summary: report.Summarize makes it from the
// merged ticks and steps. names name the runs in errors (file names).
// Runs of different models, servers or tick lengths, started more than a
// tick apart, the same worker twice, or ticks that do not line up are
// refused, each with one line that says why.
func Merge(runs []*Run, names []string) (*Run, error) {
	if len(runs) != len(names) {
		return nil, errors.New("record: merge: one name per run")
	}
	if len(runs) == 0 {
		return nil, errors.New("record: merge: no run to merge")
	}
	parts := make([]mergePart, len(runs))
	for i, r := range runs {
		parts[i] = mergePart{name: names[i], run: r}
	}
	if err := checkMergeable(parts); err != nil {
		return nil, err
	}
	slices.SortFunc(parts, func(a, b mergePart) int {
		return cmp.Compare(a.run.Header.Worker.Index, b.run.Header.Worker.Index)
	})
	out := &Run{Header: mergedHeader(parts)}
	for _, p := range parts {
		out.Truncated = out.Truncated || p.run.Truncated
	}
	steps := stepRanges(parts)
	window := newTickRing(windowTicks(out.Header))
	var prevLevel stats.Load
	var run spanMerge
	for i := 0; ; i++ {
		var ticks []stats.Snapshot
		var from []string
		for _, p := range parts {
			if i < len(p.run.Snapshots) {
				ticks = append(ticks, p.run.Snapshots[i])
				from = append(from, p.name)
			}
		}
		if len(ticks) == 0 {
			break
		}
		if err := checkTicks(ticks, from, out.Header.Interval); err != nil {
			return nil, err
		}
		s, sp, err := mergeTick(ticks)
		if err != nil {
			return nil, fmt.Errorf("record: merge: tick %d: %w", ticks[0].Seq, err)
		}
		// The window restarts at a new load level, as the collector's does.
		if i > 0 && (s.Load.Step != prevLevel.Step || s.Load.Target() != prevLevel.Target()) {
			window.reset()
		}
		prevLevel = s.Load
		window.push(sp)
		run.add(sp)
		s.Window = window.stats()
		s.Run = run.stats()
		out.Snapshots = append(out.Snapshots, s)
		for _, st := range steps {
			st.add(s, sp)
		}
	}
	for _, st := range steps {
		out.Steps = append(out.Steps, st.step())
	}
	return out, nil
}

// mergePart is one worker's run and its name.
type mergePart struct {
	name string
	run  *Run
}

// checkMergeable refuses runs that are not the workers of one run.
func checkMergeable(parts []mergePart) error {
	for _, p := range parts {
		if p.run.Header.Worker == nil {
			return fmt.Errorf("record: %s is not a worker's run file (it ran without --workers): merge adds up the run files of one run's workers", p.name)
		}
	}
	a := parts[0]
	ha := a.run.Header
	seen := map[int]string{}
	for _, b := range parts {
		hb := b.run.Header
		switch {
		case hb.Model.Name != ha.Model.Name || hb.Model.Version != ha.Model.Version:
			return fmt.Errorf("record: %s measured model %s, %s model %s: merge adds up the workers of one run",
				a.name, modelName(ha.Model), b.name, modelName(hb.Model))
		case hb.Server.URL != ha.Server.URL || hb.Server.Protocol != ha.Server.Protocol:
			return fmt.Errorf("record: %s ran against %s (%s), %s against %s (%s): merge adds up the workers of one run against one server",
				a.name, textsafe.Bound(ha.Server.URL), textsafe.Bound(ha.Server.Protocol), b.name, textsafe.Bound(hb.Server.URL), textsafe.Bound(hb.Server.Protocol))
		case hb.Interval != ha.Interval:
			return fmt.Errorf("record: %s ticks every %v, %s every %v: ticks of different lengths cannot be added (give every worker the same --tick)",
				a.name, ha.Interval, b.name, hb.Interval)
		case hb.Worker.Count != ha.Worker.Count:
			return fmt.Errorf("record: %s is worker %d of %d, %s worker %d of %d: they are not the workers of one run",
				a.name, ha.Worker.Index, ha.Worker.Count, b.name, hb.Worker.Index, hb.Worker.Count)
		}
		if apart := hb.StartTime.Sub(ha.StartTime).Abs(); apart > ha.Interval {
			return fmt.Errorf("record: %s started at %s, %s at %s, %v apart, more than a tick (%v): their ticks do not line up (was one late for --start-at?)",
				a.name, ha.StartTime.Format(time.RFC3339Nano), b.name, hb.StartTime.Format(time.RFC3339Nano), apart, ha.Interval)
		}
		if other, dup := seen[hb.Worker.Index]; dup {
			return fmt.Errorf("record: %s and %s are both worker %d of %d: give each worker's file once",
				other, b.name, hb.Worker.Index, hb.Worker.Count)
		}
		seen[hb.Worker.Index] = b.name
	}
	return nil
}

func modelName(m ModelInfo) string {
	if m.Version == "" {
		return textsafe.Quote(m.Name)
	}
	return fmt.Sprintf("%s version %s", textsafe.Quote(m.Name), textsafe.Bound(m.Version))
}

// mergedHeader is the lowest-indexed worker's header with the load of all
// the workers merged and the list of what was merged.
func mergedHeader(parts []mergePart) Header {
	h := parts[0].run.Header
	h.Worker = nil
	m := &Merged{Count: parts[0].run.Header.Worker.Count}
	loads := make([]stats.Load, len(parts))
	for i, p := range parts {
		ph := p.run.Header
		m.Workers = append(m.Workers, ph.Worker.Index)
		m.Files = append(m.Files, p.name)
		loads[i] = ph.Load
		if ph.StartTime.Before(h.StartTime) {
			h.StartTime = ph.StartTime
		}
	}
	h.Merged = m
	h.Load = addLoads(loads)
	return h
}

// windowTicks is how many ticks the "last N s" window covers, as the
// collector counts them.
func windowTicks(h Header) int {
	if h.Interval <= 0 || h.Window <= 0 {
		return 1
	}
	return int((h.Window + h.Interval - 1) / h.Interval)
}

// checkTicks refuses ticks of the same place in the workers' runs that are
// not the same tick: a different sequence number, a different step or load
// mode, or ends more than a tick apart. Ticks of the drain, while requests
// in flight finish after the load stopped, end when each worker's last
// request does and are exempt from the time check.
func checkTicks(ticks []stats.Snapshot, names []string, interval time.Duration) error {
	a := ticks[0]
	for i, b := range ticks[1:] {
		nb := names[i+1]
		if b.Seq != a.Seq {
			return fmt.Errorf("record: %s's tick %d is %s's tick %d: the workers' ticks do not line up", nb, b.Seq, names[0], a.Seq)
		}
		if a.Load.Drain || b.Load.Drain {
			continue
		}
		if apart := b.Time.Sub(a.Time).Abs(); apart > interval {
			return fmt.Errorf("record: tick %d of %s ends %v away from %s's: the workers' ticks do not line up (a change of load by hand?)",
				a.Seq, nb, apart.Round(time.Millisecond), names[0])
		}
		if b.Load.Mode != a.Load.Mode || b.Load.Step != a.Load.Step || b.Load.Paused != a.Load.Paused {
			return fmt.Errorf("record: tick %d of %s is at %s (step %d), %s's at %s (step %d): the workers' steps do not line up",
				a.Seq, nb, b.Load, b.Load.Step, names[0], a.Load, a.Load.Step)
		}
	}
	return nil
}

// addLoads is the load of several workers together: targets and requests in
// flight add; the rest is the first loading worker's.
func addLoads(loads []stats.Load) stats.Load {
	ref := loads[0]
	for _, l := range loads {
		if !l.Drain {
			ref = l
			break
		}
	}
	out := stats.Load{Mode: ref.Mode, Distribution: ref.Distribution, Step: ref.Step, Drain: true}
	var rate float64
	for _, l := range loads {
		out.Concurrency += l.Concurrency
		rate += l.Rate
		out.InFlight += l.InFlight
		out.Paused = out.Paused || l.Paused
		out.Drain = out.Drain && l.Drain
	}
	// Shares of a rate are the rate divided: adding them back should give
	// the rate asked for, not its last bits of rounding.
	out.Rate, _ = strconv.ParseFloat(strconv.FormatFloat(rate, 'g', 12, 64), 64)
	return out
}

// tickSpan is one merged tick's client statistics and its decoded
// histograms (nil where a worker's tick lacked one), kept so that the
// window and the run merge them without decoding again.
type tickSpan struct {
	client                stats.ClientStats
	lat, sched, ttft, itl *hdrhistogram.Histogram
	perReq                *hdrhistogram.Histogram
	duration              time.Duration
	// The fleet's client CPU: CPU time, cores and the hosts' average use.
	cpuSeconds, cores, hostCPU float64
	requests                   int64
}

// spanMerge adds up client statistics of several spans: counters with
// ClientStats.Add, distributions with their histograms.
type spanMerge struct {
	client               stats.ClientStats
	lat, sched           stats.LatencyMerge
	ttft, itl            stats.LatencyMerge
	perReq               stats.CountsMerge
	scheduled, streaming bool
}

// addClient includes one span given by its client stats and decoded
// histograms.
func (m *spanMerge) addClient(c *stats.ClientStats, lat, sched, ttft, itl, perReq *hdrhistogram.Histogram) {
	m.client.Add(c)
	m.lat.AddDecoded(c.Latency, lat)
	if c.Scheduled != nil {
		m.scheduled = true
		m.sched.AddDecoded(*c.Scheduled, sched)
	}
	if st := c.Streaming; st != nil {
		m.streaming = true
		m.ttft.AddDecoded(st.TTFT, ttft)
		m.itl.AddDecoded(st.ITL, itl)
		m.perReq.AddDecoded(st.PerRequest, perReq)
	}
}

// add includes a merged tick.
func (m *spanMerge) add(sp *tickSpan) {
	m.addClient(&sp.client, sp.lat, sp.sched, sp.ttft, sp.itl, sp.perReq)
}

// stats is the client statistics of the spans added.
func (m *spanMerge) stats() stats.ClientStats {
	c := m.client
	c.ErrorsByCode = slices.Clone(c.ErrorsByCode)
	if c.Streaming != nil || m.streaming {
		sc := stats.StreamingStats{}
		if c.Streaming != nil {
			sc = *c.Streaming
		}
		sc.TTFT, _ = m.ttft.Latency()
		sc.ITL, _ = m.itl.Latency()
		sc.PerRequest, _ = m.perReq.Counts()
		c.Streaming = &sc
	}
	c.SetRates()
	c.Latency, _ = m.lat.Latency()
	c.Scheduled = nil
	if m.scheduled {
		l, _ := m.sched.Latency()
		c.Scheduled = &l
	}
	return c
}

// approximate reports whether a span lacked a histogram, so that the
// percentiles are weighted averages rather than exact.
func (m *spanMerge) approximate() bool {
	_, a := m.lat.Latency()
	if m.scheduled {
		_, b := m.sched.Latency()
		a = a || b
	}
	if m.streaming {
		_, b := m.ttft.Latency()
		_, c := m.itl.Latency()
		_, d := m.perReq.Counts()
		a = a || b || c || d
	}
	return a
}

// decodeTick decodes one of a tick's histograms: nil for none, an error
// for a garbled one.
func decodeTick(encoded, what string) (*hdrhistogram.Histogram, error) {
	if encoded == "" {
		return nil, nil
	}
	h, err := stats.DecodeHistogram(encoded)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return h, nil
}

// mergeTick merges the workers' snapshots of one tick (in worker order).
func mergeTick(ticks []stats.Snapshot) (stats.Snapshot, *tickSpan, error) {
	ref := ticks[0]
	s := stats.Snapshot{Seq: ref.Seq, Time: ref.Time, Elapsed: ref.Elapsed, Interval: ref.Interval,
		WindowLength: ref.WindowLength}
	loads := make([]stats.Load, len(ticks))
	var m spanMerge
	sp := &tickSpan{duration: ref.Interval}
	var hasSched, hasStream bool
	for i, t := range ticks {
		loads[i] = t.Load
		lat, err := decodeTick(t.Histogram, "latency histogram")
		if err != nil {
			return s, nil, err
		}
		sched, err := decodeTick(t.ScheduledHistogram, "scheduled latency histogram")
		if err != nil {
			return s, nil, err
		}
		ttft, err := decodeTick(t.TTFTHistogram, "time to first response histogram")
		if err != nil {
			return s, nil, err
		}
		itl, err := decodeTick(t.ITLHistogram, "inter-response histogram")
		if err != nil {
			return s, nil, err
		}
		perReq, err := decodeTick(t.ResponsesHistogram, "responses per request histogram")
		if err != nil {
			return s, nil, err
		}
		c := t.Tick
		m.addClient(&c, lat, sched, ttft, itl, perReq)
		hasSched = hasSched || t.ScheduledHistogram != "" || c.Scheduled != nil
		hasStream = hasStream || c.Streaming != nil

		sys := t.System
		s.System.ProcessCPU += sys.ProcessCPU
		s.System.NumCPU += sys.NumCPU
		s.System.LocalGPUs = append(s.System.LocalGPUs, sys.LocalGPUs...)
		sp.hostCPU += sys.HostCPU
		d := t.Interval
		if t.Tick.Duration > 0 {
			d = t.Tick.Duration
		}
		sp.cpuSeconds += sys.ProcessCPU * d.Seconds()
	}
	s.Load = addLoads(loads)
	m.client.Duration = ref.Interval
	if ref.Tick.Duration > 0 {
		m.client.Duration = ref.Tick.Duration
	}
	s.Tick = m.stats()
	sp.client = s.Tick
	sp.lat = m.lat.Histogram()
	sp.sched, sp.ttft, sp.itl, sp.perReq = m.sched.Histogram(), m.ttft.Histogram(), m.itl.Histogram(), m.perReq.Histogram()
	sp.cores = s.System.ProcessCPU
	sp.requests = s.Tick.Requests
	sp.duration = m.client.Duration
	s.System.HostCPU = sp.hostCPU / float64(len(ticks))
	sp.hostCPU = s.System.HostCPU
	if s.Tick.Requests > 0 {
		s.System.CPUPerRequest = time.Duration(sp.cpuSeconds / float64(s.Tick.Requests) * float64(time.Second))
	}

	// The same server, seen by every worker: one reading, never a sum.
	s.Server, s.Metrics = ref.Server, ref.Metrics
	if i := slices.IndexFunc(ticks, func(t stats.Snapshot) bool { return t.Server.Available }); i >= 0 {
		s.Server = ticks[i].Server
	}
	if i := slices.IndexFunc(ticks, func(t stats.Snapshot) bool { return t.Metrics.Available }); i >= 0 {
		s.Metrics = ticks[i].Metrics
	}

	var err error
	enc := func(h *hdrhistogram.Histogram) string {
		if h == nil || err != nil {
			return ""
		}
		var e string
		e, err = stats.EncodeHistogram(h)
		return e
	}
	s.Histogram = enc(sp.lat)
	if hasSched {
		s.ScheduledHistogram = enc(sp.sched)
	}
	if hasStream {
		s.TTFTHistogram, s.ITLHistogram, s.ResponsesHistogram = enc(sp.ttft), enc(sp.itl), enc(sp.perReq)
	}
	return s, sp, err
}

// tickRing keeps the last merged ticks of the sliding window.
type tickRing struct {
	spans []*tickSpan
	next  int
	n     int
}

func newTickRing(n int) *tickRing { return &tickRing{spans: make([]*tickSpan, max(n, 1))} }

func (r *tickRing) push(sp *tickSpan) {
	r.spans[r.next] = sp
	r.next = (r.next + 1) % len(r.spans)
	r.n = min(r.n+1, len(r.spans))
}

// reset empties the window.
func (r *tickRing) reset() { r.next, r.n = 0, 0 }

// stats merges the ticks in the window.
func (r *tickRing) stats() stats.ClientStats {
	var m spanMerge
	for i := range r.n {
		m.add(r.spans[(r.next-r.n+i+len(r.spans))%len(r.spans)])
	}
	return m.stats()
}

// stepMerge collects one measured step of every worker and the merged
// ticks it covers.
type stepMerge struct {
	index    int
	steps    []Step // the workers', in worker order
	first    int
	last     int
	client   spanMerge
	ticks    int
	duration time.Duration
	cpu      cpuSum
}

// cpuSum integrates the fleet's client CPU over merged ticks, as a
// ClientCPU.
type cpuSum struct{ CPUTotals }

func (c *cpuSum) add(sp *tickSpan) {
	c.Ticks++
	c.CPUSeconds += sp.cpuSeconds
	c.Seconds += sp.duration.Seconds()
	c.AddMax(sp.cores, sp.duration)
	c.HostSum += sp.hostCPU
	c.Requests += sp.requests
}

func (c *cpuSum) summary() ClientCPU { return c.ClientCPU() }

// stepRanges groups the workers' measured steps by schedule index.
func stepRanges(parts []mergePart) []*stepMerge {
	byIndex := map[int]*stepMerge{}
	var out []*stepMerge
	for _, p := range parts {
		for i, st := range p.run.Steps {
			idx := i
			if st.Measurement != nil {
				idx = st.Measurement.Index
			}
			m := byIndex[idx]
			if m == nil {
				m = &stepMerge{index: idx, first: st.FirstSeq, last: st.LastSeq}
				byIndex[idx] = m
				out = append(out, m)
			}
			m.steps = append(m.steps, st)
			m.first, m.last = min(m.first, st.FirstSeq), max(m.last, st.LastSeq)
		}
	}
	slices.SortFunc(out, func(a, b *stepMerge) int { return cmp.Compare(a.first, b.first) })
	return out
}

// add includes a merged tick if it is one of the step's: within its ticks,
// at its schedule step, loading and not paused (the ticks a stepped run
// measures).
func (m *stepMerge) add(s stats.Snapshot, sp *tickSpan) {
	if s.Seq < m.first || s.Seq > m.last || s.Load.Step != m.index || s.Load.Drain || s.Load.Paused {
		return
	}
	m.ticks++
	m.duration += sp.duration
	m.client.add(sp)
	m.cpu.add(sp)
}

// step is the merged step: the workers' loads added, the numbers of the
// merged ticks it covers, and the server's account from one worker.
func (m *stepMerge) step() Step {
	loads := make([]stats.Load, len(m.steps))
	var want stats.ClientStats
	var fallback spanMerge
	for i, st := range m.steps {
		loads[i] = st.Load
		c := st.Client
		want.Add(&c)
		fallback.addClient(&c, nil, nil, nil, nil, nil)
	}
	out := Step{Load: addLoads(loads), FirstSeq: m.first, LastSeq: m.last, Ticks: m.ticks, Duration: m.duration,
		ClientCPU: m.cpu.summary(), Measurement: mergeMeasurements(m.steps)}
	out.Load.Step = m.index
	out.Client = m.client.stats()
	out.Approximate = m.client.approximate()
	if out.Client.Requests != want.Requests || out.Client.Latency.Count != sumLatencyCounts(m.steps) {
		// The merged ticks are not the workers' steps (a step cut short
		// differently in each worker): the steps' own numbers add up, and
		// their percentiles can only be weighted.
		out.Client = fallback.stats()
		out.Approximate = true
		for _, st := range m.steps {
			out.Ticks = max(out.Ticks, st.Ticks)
			out.Duration = max(out.Duration, st.Duration)
		}
		out.Client.Duration = out.Duration
		out.Client.SetRates()
	}
	// Triton's account of the step: one worker's, the one that read the
	// server on the most ticks.
	best := 0
	for i, st := range m.steps {
		if st.Server.Ticks > m.steps[best].Server.Ticks {
			best = i
		}
	}
	out.Server, out.Metrics = m.steps[best].Server, m.steps[best].Metrics
	return out
}

func sumLatencyCounts(steps []Step) int64 {
	var n int64
	for _, st := range steps {
		n += st.Client.Latency.Count
	}
	return n
}

// mergeMeasurements says how the workers measured a step: stable when
// every worker's was, interrupted when any was cut short. SLO verdicts are
// dropped: each worker judged its own share.
func mergeMeasurements(steps []Step) *Measurement {
	var out *Measurement
	for _, st := range steps {
		m := st.Measurement
		if m == nil {
			continue
		}
		if out == nil {
			c := *m
			c.SLO, c.SLOs = nil, nil
			out = &c
			continue
		}
		out.Fixed = out.Fixed && m.Fixed
		out.Windows = min(out.Windows, m.Windows)
		out.Trials = min(out.Trials, m.Trials)
		out.Stable = out.Stable && m.Stable
		out.UnsteadyLatency = out.UnsteadyLatency || m.UnsteadyLatency
		out.WarmupTicks = max(out.WarmupTicks, m.WarmupTicks)
		out.Interrupted = out.Interrupted || m.Interrupted
	}
	return out
}
