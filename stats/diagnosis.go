package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// Verdict names what limits the load, one condition per value. The
// dashboard, the headless progress line, the summary and capacity planning
// all take their verdicts from Diagnose, so they always agree.
type Verdict string

// The verdicts, from the most to the least pressing.
const (
	// Unreachable: nothing answered in the last tick, neither requests nor
	// statistics nor metrics.
	Unreachable Verdict = "unreachable"
	// Stalled: requests are in flight and none finished in the last tick.
	Stalled Verdict = "stalled"
	// Failing: a share of requests fail.
	Failing Verdict = "errors"
	// ClientBound: tritontop or the client host is near its CPU limit,
	// which bends every latency measured.
	ClientBound Verdict = "client"
	// FallingBehind: an open loop sends less than offered or late.
	FallingBehind Verdict = "falling-behind"
	// Queueing: requests wait in Triton's queue longer than they compute,
	// or the wait rises while compute stays flat: the server is at capacity.
	Queueing Verdict = "queueing"
	// ComputeBound: a GPU runs at its ceiling.
	ComputeBound Verdict = "gpu"
	// OutsideTriton: most of the client's latency is spent outside the
	// server (network, client, serialization).
	OutsideTriton Verdict = "outside-triton"
)

// Finding is one verdict with the numbers behind it.
type Finding struct {
	Verdict Verdict `json:"verdict"`
	// Message says what holds, with numbers, in one line.
	Message string `json:"message"`
	// Step is the composing model of a pipeline the finding names: where
	// its requests queue the most.
	Step string `json:"step,omitempty"`
}

// Diagnosis thresholds. They are deliberately coarse: a verdict must be
// clear in the numbers before it is shown.
const (
	// DiagnoseTicks is how many recent ticks a diagnosis reads.
	DiagnoseTicks = 5
	// errorShare is the share of failed requests that is worth a verdict.
	errorShare = 0.01
	// clientCPUShare is the share of the client's cores, or of the host,
	// from which the client is called the limit.
	clientCPUShare = 0.9
	// behindShare is how far under the offered rate (or how many late
	// sends) an open loop may be before it is called falling behind.
	behindShare = 0.05
	// behindRequests is the fewest requests the offered rate must bring
	// over the window before a shortfall of finished requests is read as
	// falling behind: at a few requests the count is mostly chance (and the
	// requests still running).
	behindRequests = 20
	// lateMaterial is the share of the latency from the schedule that the
	// sends' mean lateness must reach for late sends alone (the rate sent
	// being on target) to be called falling behind.
	lateMaterial = 0.01
	// gpuCeiling is the utilization called the ceiling.
	gpuCeiling = 0.95
	// outsideShare is the share of client latency outside Triton worth a
	// verdict, with at least outsideMin of it.
	outsideShare = 0.5
	outsideMin   = time.Millisecond
	// queueMin is the queue time below which queueing is not a limit.
	queueMin = time.Millisecond
	// queueRise and computeFlat: queue time up by half (and queueMin) from
	// the earlier half of the ticks while compute stays within 15%.
	queueRise   = 1.5
	computeFlat = 0.15
)

// DiagnoseOptions are facts about the run that the snapshots do not carry.
type DiagnoseOptions struct {
	// SharedProcess is set when the server runs inside tritontop's own
	// process (tritontop demo): its CPU is then mostly the server's and is
	// no evidence against the client.
	SharedProcess bool
}

// Diagnose reads the last ticks (oldest first; it looks at up to
// 2×DiagnoseTicks of them) and says what limits the load, most pressing
// first. A healthy run gets no finding. Since it reads only the recent
// ticks, a verdict lasts exactly as long as its condition holds. Every
// verdict but queueing reads only the ticks at the last tick's load level
// (a step, a key press or a pause starts afresh), so that nothing measured
// at one level is blamed on the next; queueing compares the queue time
// before and after a change, which is how a knee shows.
func Diagnose(recent []Snapshot, o DiagnoseOptions) []Finding {
	if len(recent) == 0 {
		return nil
	}
	if len(recent) > 2*DiagnoseTicks {
		recent = recent[len(recent)-2*DiagnoseTicks:]
	}
	last := &recent[len(recent)-1]
	if last.Load.Drain {
		return nil
	}
	var out []Finding
	add := func(v Verdict, format string, args ...any) {
		out = append(out, Finding{Verdict: v, Message: fmt.Sprintf(format, args...)})
	}
	tail, _ := DiagnosisTail(recent)

	switch {
	case !last.Server.Available && !last.Metrics.Available && last.Tick.Successes == 0 && last.Interval > 0:
		add(Unreachable, "server unreachable: no response, statistics or metrics in the last tick")
	case stalled(recent):
		add(Stalled, "server stalled: %d requests in flight and none finished in the last %s", last.Load.InFlight,
			stalledSpan(recent).Round(time.Millisecond))
	}

	var c ClientStats
	for i := range tail {
		c.Add(&tail[i].Tick)
	}
	c.SetRates()
	for _, e := range c.ErrorsByCode {
		if strings.Contains(e.Message, "too many open files") {
			add(ClientBound, "client-bound: %d requests failed for lack of file descriptors; %s", e.Count, triton.OutOfFiles())
			break
		}
	}
	if c.Requests > 0 && float64(c.Errors) >= errorShare*float64(c.Requests) {
		msg := ""
		if len(c.ErrorsByCode) > 0 {
			e := c.ErrorsByCode[0]
			msg = fmt.Sprintf(" (%s: %s)", e.Code, e.Message)
		}
		add(Failing, "errors: %s of requests fail%s", pct(float64(c.Errors)/float64(c.Requests)), msg)
	}

	if f, ok := clientBound(tail, o); ok {
		out = append(out, f)
	}

	q, queued := queueing(recent)
	if offered := offeredRate(tail); last.Load.Open() && offered > 0 && c.Duration > 0 && !last.Load.Paused {
		sent, span, backlog := sends(recent, len(recent)-len(tail))
		switch {
		case span > 0 && sent/span < (1-behindShare)*offered && offered*span >= behindRequests &&
			offered*span-sent > batchSlack(tail) && c.LateShare >= behindShare/2:
			// The count of sends is finished requests and the growth of
			// those in flight: a batching server's answers make it lumpy
			// (batchSlack), and a driver that saw few of its sends late
			// (LateShare) did send them.
			add(FallingBehind, "open loop falling behind: %s req/s sent of %s offered", num(sent/span), num(offered))
		case c.LateShare > behindShare && queued && backlog > 0 && !clientFound(out):
			// The server is saturated and its backlog grows: the sends wait
			// behind it (an in-flight cap, or, in one process, the
			// backlog's own work), so the lateness is the server's.
			q.Message += fmt.Sprintf("; %s of sends late behind a backlog of %d more requests in flight", pct(c.LateShare), backlog)
		case c.LateShare > behindShare:
			// Sends late while their count is on target bend the
			// measurement only when their lateness is a part of the
			// latency worth naming. A send a few milliseconds late (a host's timer or a
			// vCPU's hiccup) against latencies of hundreds is not the
			// client falling behind, and a plan must not be refused for it.
			if late, of, ok := lateness(tail); !ok || float64(late) >= lateMaterial*float64(of) {
				msg := pct(c.LateShare) + " of sends late"
				if ok {
					msg += fmt.Sprintf(", by %s on average (%s of the latency from the schedule)", ms(late), pct(float64(late)/float64(of)))
				}
				add(FallingBehind, "open loop falling behind: %s", msg)
			}
		}
	}

	if queued {
		out = append(out, q)
	}

	for i, g := range last.Metrics.GPUs {
		if g.HasUtilization && meanGPU(tail, i) >= gpuCeiling {
			add(ComputeBound, "GPU %d at its ceiling: %s busy", i, pct(meanGPU(tail, i)))
			break
		}
	}

	if f, ok := outsideTriton(tail); ok {
		out = append(out, f)
	}
	return out
}

// sends is how many requests an open loop sent per second over the ticks
// of recent from index from on: those that finished (or were cancelled)
// and the growth of those in flight, since a request sent and not yet
// answered was sent all the same. Counting only the finished ones would
// blame the client for a saturated server's growing backlog. The in-flight
// count before the first tick is the tick before it; without one, the first
// tick only gives it. span is the seconds of load counted, backlog the
// growth of the requests in flight.
func sends(recent []Snapshot, from int) (sent, span float64, backlog int) {
	if from == 0 {
		from = 1
	}
	if from >= len(recent) {
		return 0, 0, 0
	}
	before := recent[from-1].Load.InFlight
	var n int64
	for i := from; i < len(recent); i++ {
		t := &recent[i].Tick
		n += t.Requests + t.Cancelled
		span += t.Duration.Seconds()
	}
	backlog = recent[len(recent)-1].Load.InFlight - before
	return float64(n + int64(backlog)), span, backlog
}

// lateness is the mean time an open loop's successful requests were sent
// after their schedule, over the ticks of tail, and the mean latency from
// the schedule it is part of, both from the ticks' two latencies (from the
// send and from the schedule, each over the same successes). ok is false
// when no tick has both.
func lateness(tail []Snapshot) (late, of time.Duration, ok bool) {
	var sum, sched float64
	var n int64
	for i := range tail {
		t := &tail[i].Tick
		s := t.Scheduled
		if s == nil || s.Count == 0 || t.Latency.Count != s.Count {
			continue
		}
		sum += float64(s.Count) * float64(s.Mean-t.Latency.Mean)
		sched += float64(s.Count) * float64(s.Mean)
		n += s.Count
	}
	if n == 0 || sched <= 0 {
		return 0, 0, false
	}
	return time.Duration(max(sum, 0) / float64(n)), time.Duration(sched / float64(n)), true
}

// batchSlack is how many sends the count of an open loop's sends may miss
// by chance: a batching server answers a batch at once, and the batches
// answered as a tick ends are out of the in-flight count before the tick
// counts them, at either end of the span: two of the span's average batch.
func batchSlack(tail []Snapshot) float64 {
	var sum float64
	n := 0
	for i := range tail {
		if s := &tail[i].Server; s.Available && s.AvgBatch > 0 {
			sum += s.AvgBatch
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return 2 * sum / float64(n)
}

// clientFound reports whether the findings already name the client's CPU.
func clientFound(fs []Finding) bool {
	for _, f := range fs {
		if f.Verdict == ClientBound {
			return true
		}
	}
	return false
}

// DiagnosisTail is the ticks most of Diagnose's verdicts read: the last
// DiagnoseTicks of recent, from the first at the last tick's load level
// (step, target, pause). cut reports whether a change of load made it
// shorter. The dashboard and the summaries name a finding's span from it.
func DiagnosisTail(recent []Snapshot) (tail []Snapshot, cut bool) {
	if len(recent) == 0 {
		return nil, false
	}
	tail = recent[max(0, len(recent)-DiagnoseTicks):]
	last := &tail[len(tail)-1].Load
	for i := len(tail) - 1; i > 0; i-- {
		if !sameLevel(&tail[i-1].Load, last) {
			return tail[i:], true
		}
	}
	return tail, false
}

// sameLevel reports whether two ticks ran the same load: the same step,
// target and pause.
func sameLevel(a, b *Load) bool {
	return a.Step == b.Step && a.Paused == b.Paused && a.Target() == b.Target()
}

// clientBound is tritontop's process or the client host near its CPU
// limit.
func clientBound(tail []Snapshot, o DiagnoseOptions) (Finding, bool) {
	var proc, host float64
	n := 0
	cpus := 1
	list := ""
	for i := range tail {
		s := &tail[i].System
		if s.NumCPU == 0 {
			continue
		}
		proc += s.ProcessCPU
		host += s.HostCPU
		cpus, list = s.NumCPU, s.HostCPUs
		n++
	}
	if n == 0 {
		return Finding{}, false
	}
	proc, host = proc/float64(n), host/float64(n)
	limit := clientCPUShare * float64(max(cpus, 1))
	switch {
	case !o.SharedProcess && proc >= limit:
		return Finding{Verdict: ClientBound, Message: fmt.Sprintf("client-bound: tritontop uses %s of %d cores; every latency is bent by it",
			strconv.FormatFloat(proc, 'f', 1, 64), cpus)}, true
	case host >= clientCPUShare && list != "":
		return Finding{Verdict: ClientBound, Message: fmt.Sprintf("client cores %s near full: %s busy (tritontop may run on no others); every latency is bent by it",
			list, pct(host))}, true
	case host >= clientCPUShare:
		return Finding{Verdict: ClientBound, Message: fmt.Sprintf("client host near full: %s CPU busy; every latency is bent by it", pct(host))}, true
	}
	return Finding{}, false
}

// queueing is Triton's queue time longer than compute, or rising while
// compute stays flat, over the recent ticks with server statistics.
func queueing(recent []Snapshot) (Finding, bool) {
	var ticks []*ServerStats
	for i := range recent {
		if s := &recent[i].Server; s.Available && !s.Reset && s.SuccessCount > 0 {
			ticks = append(ticks, s)
		}
	}
	if len(ticks) == 0 {
		return Finding{}, false
	}
	mean := func(ss []*ServerStats) (q, c time.Duration) {
		var n int64
		for _, s := range ss {
			q += s.Queue * time.Duration(s.SuccessCount)
			c += s.Compute() * time.Duration(s.SuccessCount)
			n += s.SuccessCount
		}
		return q / time.Duration(n), c / time.Duration(n)
	}
	tail := ticks[max(0, len(ticks)-DiagnoseTicks):]
	q, c := mean(tail)
	if q >= queueMin && q >= c {
		if f, ok := stepQueueing(tail); ok {
			return f, true
		}
		return Finding{Verdict: Queueing, Message: fmt.Sprintf("server queueing: requests wait %s in Triton's queue, longer than the %s they compute; more load only adds latency",
			ms(q), ms(c))}, true
	}
	if len(ticks) >= 2*DiagnoseTicks {
		qb, cb := mean(ticks[:len(ticks)-DiagnoseTicks])
		rising := float64(q) >= queueRise*float64(qb) && q-qb >= queueMin
		flat := cb > 0 && float64(c) <= float64(cb)*(1+computeFlat) && float64(c) >= float64(cb)*(1-computeFlat)
		if rising && flat {
			f := Finding{Verdict: Queueing, Message: fmt.Sprintf("server saturated: queue time rises %s → %s while compute stays %s; more load only adds latency",
				ms(qb), ms(q), ms(c))}
			if st, ok := stepQueueing(tail); ok {
				f.Step = st.Step
				f.Message = fmt.Sprintf("server saturated at %s: queue time rises %s → %s while compute stays %s; more load only adds latency",
					st.Step, ms(qb), ms(q), ms(c))
			}
			return f, true
		}
	}
	return Finding{}, false
}

// outsideTriton is client latency minus the server's request time
// dominating the client latency.
func outsideTriton(tail []Snapshot) (Finding, bool) {
	var client, server time.Duration
	var n int64
	for i := range tail {
		s := &tail[i]
		if !s.Server.Available || s.Server.Reset || s.Server.SuccessCount == 0 || s.Tick.Latency.Count == 0 {
			continue
		}
		k := s.Tick.Latency.Count
		client += s.Tick.Latency.Mean * time.Duration(k)
		server += s.Server.Request * time.Duration(k)
		n += k
	}
	if n == 0 {
		return Finding{}, false
	}
	client, server = client/time.Duration(n), server/time.Duration(n)
	out := client - server
	if out >= outsideMin && float64(out) >= outsideShare*float64(client) {
		return Finding{Verdict: OutsideTriton, Message: fmt.Sprintf("time outside Triton: %s of the %s client latency (%s) is network and client; the server takes %s",
			ms(out), ms(client), pct(float64(out)/float64(client)), ms(server))}, true
	}
	return Finding{}, false
}

func meanGPU(tail []Snapshot, i int) float64 {
	var sum float64
	n := 0
	for j := range tail {
		if g := tail[j].Metrics.GPUs; i < len(g) && g[i].HasUtilization {
			sum += g[i].Utilization
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }

// num is a rate: whole numbers, and three significant figures under 10.
func num(f float64) string {
	if f != 0 && math.Abs(f) < 10 {
		return strconv.FormatFloat(f, 'g', 3, 64)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

func ms(d time.Duration) string {
	v := float64(d) / 1e6
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
}

// MinStallSpan is the shortest time without a finished request that the
// diagnosis calls a stall: a tick shorter than a request takes (a 10 ms
// tick of a 60 ms model) sees none finish from a healthy server.
const MinStallSpan = 500 * time.Millisecond

// stalled reports whether requests were in flight and none finished (nor
// sent a response) for at least MinStallSpan and three times the recent
// mean latency, over the last ticks.
func stalled(recent []Snapshot) bool {
	last := &recent[len(recent)-1]
	if last.Load.InFlight == 0 || last.Load.Paused || last.Interval <= 0 {
		return false
	}
	span := stalledSpan(recent)
	return span > 0 && span >= max(MinStallSpan, 3*recentMeanLatency(recent))
}

// stalledSpan is how long the ticks at the end of recent, with requests in
// flight, saw no request finish, none cancelled and no response sent. A
// tick's idle pause (nothing in flight) is no part of it: the in-flight
// count is read at the cut, and may be the next load's first requests.
func stalledSpan(recent []Snapshot) time.Duration {
	var span time.Duration
	for i := len(recent) - 1; i >= 0; i-- {
		s := &recent[i]
		if s.Load.InFlight == 0 || s.Tick.Requests != 0 || s.Tick.Cancelled != 0 || s.Server.Responses.progressed() {
			break
		}
		span += max(s.Interval-s.Paused, 0)
	}
	return span
}

// recentMeanLatency is the mean latency of the last tick of recent in
// which requests finished, or of the window; 0 when none did.
func recentMeanLatency(recent []Snapshot) time.Duration {
	for i := len(recent) - 1; i >= 0; i-- {
		if l := recent[i].Tick.Latency; l.Count > 0 {
			return l.Mean
		}
	}
	if l := recent[len(recent)-1].Window.Latency; l.Count > 0 {
		return l.Mean
	}
	return 0
}
