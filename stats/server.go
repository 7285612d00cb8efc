package stats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/pb"
)

// StatisticsClient is what a ServerPoller needs of a Triton client; a
// triton.Client satisfies it.
type StatisticsClient interface {
	// ModelStatistics returns a model's cumulative statistics; an empty
	// version means all of the model's versions.
	ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error)
}

// ServerPoller reads a model's cumulative ModelStatistics once per tick and
// reports the difference from the previous reading, as perf_analyzer does
// between the start and the end of a measurement window. It is used by one
// goroutine at a time.
type ServerPoller struct {
	client  StatisticsClient
	model   string
	version string
	// prev is the last reading, the baseline of the next delta; nil before
	// the first reading and after a failed one that changed versions.
	prev *pb.ModelStatistics
	// first is the first reading, which Served counts from, and reset is
	// set once a Poll found the counters reset since; the collector reads
	// them while the poller's own goroutine may be reading the server.
	first atomic.Pointer[pb.ModelStatistics]
	reset atomic.Bool
	// steps are a pipeline's composing models (SetComposing), names
	// their names, and prevAll their entries in the last reading.
	steps   []stepNode
	names   map[string]bool
	prevAll []*pb.ModelStatistics
}

// NewServerPoller returns a poller of model's statistics through client. An
// empty version follows the server's latest ready version of the model.
func NewServerPoller(client StatisticsClient, model, version string) *ServerPoller {
	return &ServerPoller{client: client, model: model, version: version}
}

// Prime takes the baseline reading that the first Poll is measured from,
// unless one was taken already: a run primes its pollers before its first
// request (Collector.Prime), and the collector's own priming when it
// starts, later, must not move that baseline past the requests between.
func (p *ServerPoller) Prime(ctx context.Context) error {
	if p.prev != nil {
		return nil
	}
	cur, all, err := p.read(ctx)
	if err != nil {
		return err
	}
	p.prev, p.prevAll = cur, all
	p.first.CompareAndSwap(nil, cur)
	return nil
}

// Served reads the statistics now and returns the successful requests the
// server counted since the poller's first reading; ok is false without a
// first reading, when the read fails, or when the counters were reset
// since (another version, a count gone backwards, or a reset a Poll saw).
func (p *ServerPoller) Served(ctx context.Context) (n int64, ok bool) {
	first := p.first.Load()
	if first == nil || p.reset.Load() {
		return 0, false
	}
	cur, _, err := p.read(ctx)
	if err != nil || cur.GetVersion() != first.GetVersion() {
		return 0, false
	}
	a, b := first.GetInferenceStats().GetSuccess().GetCount(), cur.GetInferenceStats().GetSuccess().GetCount()
	if b < a {
		return 0, false
	}
	return int64(b - a), true
}

// Poll reads the statistics and returns the deltas since the previous
// reading. A failed read gives Available=false with the reason in Err and
// keeps the baseline, so the next successful Poll covers both ticks. The
// first reading without a baseline, and a reading whose counters went
// backwards, only take a new baseline (Reset is set for the latter).
func (p *ServerPoller) Poll(ctx context.Context) ServerStats {
	cur, all, err := p.read(ctx)
	if err != nil {
		return ServerStats{Model: p.model, Version: p.version, Err: oneLine(err)}
	}
	prev, prevAll := p.prev, p.prevAll
	p.prev, p.prevAll = cur, all
	p.first.CompareAndSwap(nil, cur)
	if prev == nil {
		return ServerStats{Model: p.model, Version: cur.GetVersion(),
			Err: "first statistics reading taken; deltas start next tick"}
	}
	if prev.GetVersion() != cur.GetVersion() {
		p.reset.Store(true)
		return ServerStats{Available: true, Reset: true, Model: p.model, Version: cur.GetVersion()}
	}
	s := ServerDelta(prev, cur)
	s.Model = p.model
	if s.Reset {
		p.reset.Store(true)
	}
	if len(p.steps) > 0 && !s.Reset {
		addSteps(&s, p.steps, prevAll, all)
	}
	return s
}

// read fetches the statistics of the polled model version, and, for a
// pipeline, its composing models' entries: every model's statistics are
// then read at once, as perf_analyzer reads them.
func (p *ServerPoller) read(ctx context.Context) (*pb.ModelStatistics, []*pb.ModelStatistics, error) {
	model, version := p.model, p.version
	if len(p.steps) > 0 {
		model, version = "", ""
	}
	resp, err := p.client.ModelStatistics(ctx, model, version)
	if err != nil {
		return nil, nil, fmt.Errorf("model statistics of %s: %w", textsafe.Quote(p.model), err)
	}
	st := pickVersion(resp.GetModelStats(), p.model, p.version)
	if st == nil {
		v := p.version
		if v == "" {
			v = "any version"
		}
		return nil, nil, fmt.Errorf("model statistics: server reported none for %s (%s)", textsafe.Quote(p.model), textsafe.Bound(v))
	}
	if len(p.steps) == 0 {
		return st, nil, nil
	}
	return st, p.keepComposing(resp.GetModelStats()), nil
}

// pickVersion returns the statistics of model at version, or of its highest
// numbered version when version is empty.
func pickVersion(all []*pb.ModelStatistics, model, version string) *pb.ModelStatistics {
	var best *pb.ModelStatistics
	bestN := int64(-1)
	for _, st := range all {
		if st.GetName() != model {
			continue
		}
		if version != "" {
			if st.GetVersion() == version {
				return st
			}
			continue
		}
		n, err := strconv.ParseInt(st.GetVersion(), 10, 64)
		if err != nil {
			n = -1
		}
		if best == nil || n > bestN {
			best, bestN = st, n
		}
	}
	return best
}

// oneLine returns err's message on a single line, for a status field.
func oneLine(err error) string {
	msg := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "no answer in time: " + msg
	}
	return strings.Join(strings.Fields(msg), " ")
}

// counter is a cumulative count and time pair, the shape of Triton's
// StatisticDuration.
type counter struct{ count, ns uint64 }

func durationOf(d *pb.StatisticDuration) counter {
	return counter{count: d.GetCount(), ns: d.GetNs()}
}

// deltaOf returns cur − prev and false when either field went backwards.
func deltaOf(prev, cur counter) (counter, bool) {
	if cur.count < prev.count || cur.ns < prev.ns {
		return counter{}, false
	}
	return counter{count: cur.count - prev.count, ns: cur.ns - prev.ns}, true
}

// average is perf_analyzer's per-request average: Δns / Δcount with integer
// division, 0 when Δcount is 0. perf_analyzer divides by Δcount×1000 to get
// whole microseconds; since ⌊⌊a/b⌋/1000⌋ = ⌊a/(b×1000)⌋, truncating this
// value to microseconds gives exactly its number.
func average(ns, count uint64) time.Duration {
	if count == 0 {
		return 0
	}
	return time.Duration(ns / count)
}

// ServerDelta computes one tick's ServerStats from two cumulative readings
// of the same model version: deltas of every counter, perf_analyzer's
// averages, average batch size, executions by batch size, and a decoupled
// model's per-response statistics. When any
// counter went backwards (the server restarted or reloaded the model) it
// returns Reset with zero deltas instead of negative or huge values.
func ServerDelta(prev, cur *pb.ModelStatistics) ServerStats {
	s := ServerStats{Available: true, Model: cur.GetName(), Version: cur.GetVersion()}
	ps, cs := prev.GetInferenceStats(), cur.GetInferenceStats()
	var d [8]counter
	pairs := [8][2]*pb.StatisticDuration{
		{ps.GetSuccess(), cs.GetSuccess()},
		{ps.GetFail(), cs.GetFail()},
		{ps.GetQueue(), cs.GetQueue()},
		{ps.GetComputeInput(), cs.GetComputeInput()},
		{ps.GetComputeInfer(), cs.GetComputeInfer()},
		{ps.GetComputeOutput(), cs.GetComputeOutput()},
		{ps.GetCacheHit(), cs.GetCacheHit()},
		{ps.GetCacheMiss(), cs.GetCacheMiss()},
	}
	for i, p := range pairs {
		var ok bool
		if d[i], ok = deltaOf(durationOf(p[0]), durationOf(p[1])); !ok {
			return resetStats(s)
		}
	}
	if cur.GetInferenceCount() < prev.GetInferenceCount() || cur.GetExecutionCount() < prev.GetExecutionCount() {
		return resetStats(s)
	}
	batches, ok := batchDeltas(prev.GetBatchStats(), cur.GetBatchStats())
	if !ok {
		return resetStats(s)
	}
	responses, ok := responseDeltas(prev.GetResponseStats(), cur.GetResponseStats())
	if !ok {
		return resetStats(s)
	}
	s.Responses = responses
	success, fail, queue, cin, cinf, cout, hit := d[0], d[1], d[2], d[3], d[4], d[5], d[6]

	s.SuccessCount = int64(success.count)
	s.FailCount = int64(fail.count)
	s.InferenceCount = int64(cur.GetInferenceCount() - prev.GetInferenceCount())
	s.ExecutionCount = int64(cur.GetExecutionCount() - prev.GetExecutionCount())
	s.CacheHitCount = int64(hit.count)

	// Triton reports the queue count as its success count, and the compute
	// counts as success less cache hits, but reads each of them apart
	// without the statistics' lock: a reading under load may have them a
	// request apart. The averages divide by the counts a span's averages
	// are weighted by (success, success less cache hits), so that the
	// ticks' times add up to the span's exactly; in a reading taken whole
	// they are the counts perf_analyzer divides by.
	computeN := success.count - min(hit.count, success.count)
	s.Request = average(success.ns, success.count)
	s.Queue = average(queue.ns, success.count)
	s.ComputeInput = average(cin.ns, computeN)
	s.ComputeInfer = average(cinf.ns, computeN)
	s.ComputeOutput = average(cout.ns, computeN)
	compute := average(cin.ns+cinf.ns+cout.ns, computeN)
	s.Overhead = max(0, s.Request-s.Queue-compute)

	if s.ExecutionCount > 0 {
		s.AvgBatch = float64(s.InferenceCount) / float64(s.ExecutionCount)
	}
	s.Batches = batches
	return s
}

// resetStats marks s as a counter reset with no deltas.
func resetStats(s ServerStats) ServerStats {
	s.Reset = true
	return s
}

// batchDeltas returns the executions per batch size between two readings of
// batch_stats, by ascending size, leaving out sizes that did not run. It
// reports false when the readings are not one history: fewer sizes than
// before, a size gone, or a count that went backwards.
func batchDeltas(prev, cur []*pb.InferBatchStatistics) ([]BatchCount, bool) {
	if len(cur) < len(prev) {
		return nil, false
	}
	before := make(map[uint64]uint64, len(prev))
	for _, b := range prev {
		before[b.GetBatchSize()] = executions(b)
	}
	var out []BatchCount
	seen := 0
	for _, b := range cur {
		n := executions(b)
		old, had := before[b.GetBatchSize()]
		if had {
			seen++
		}
		if n < old {
			return nil, false
		}
		if n > old {
			out = append(out, BatchCount{Size: int(b.GetBatchSize()), Count: int64(n - old)})
		}
	}
	if seen != len(before) {
		return nil, false
	}
	slices.SortFunc(out, func(a, b BatchCount) int { return a.Size - b.Size })
	return out, true
}

// executions is a batch_stats entry's execution count. Triton reports the
// same count in its three durations; compute_infer is the one perf_analyzer
// reads.
func executions(b *pb.InferBatchStatistics) uint64 {
	return b.GetComputeInfer().GetCount()
}
