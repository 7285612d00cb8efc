package stats

import (
	"slices"
	"strings"
	"time"
)

// Replica is one server of a run over several replicas of the same model
// (tritontop -u A -u B): the requests it answered in the tick, Triton's
// statistics and metrics of that server alone, and whether the balancer
// had it in. The Snapshot's own Tick, Server and Metrics are then the
// aggregate over all replicas (see AggregateServer, AggregateMetrics).
type Replica struct {
	URL string `json:"url"`
	// Up is false while the replica is taken out after a failure (it is
	// probed, and put back once it answers).
	Up bool `json:"up"`
	// Tick is the client's view of the requests this replica answered in
	// the tick: counts, rates, errors by code and latency from the send.
	// The replicas' counts add up to the Snapshot's Tick.
	Tick ClientStats `json:"tick"`
	// Histogram is Tick's latency histogram, encoded as Snapshot.Histogram.
	Histogram string `json:"histogram,omitempty"`
	// Server is this server's ModelStatistics deltas over the tick.
	Server ServerStats `json:"server"`
	// ServerLate and ServerLateSeq are this server's statistics read late,
	// as the Snapshot's (over its models, in a run over several).
	ServerLate    *ServerStats `json:"server_late,omitempty"`
	ServerLateSeq int          `json:"server_late_seq,omitempty"`
	// Metrics is this server's metrics endpoint; its GPUs carry the
	// replica's URL.
	Metrics ServerMetrics `json:"metrics"`
}

// ReplicaSource is where a Collector reads one replica's server side.
type ReplicaSource struct {
	// URL names the replica in Snapshots.
	URL string
	// Server and Metrics read the replica's statistics and metrics; either
	// may be nil.
	Server  *ServerPoller
	Metrics *MetricsScraper
	// Up reports whether the balancer has the replica in; nil means it
	// always has.
	Up func() bool
}

// AggregateServer adds the statistics of several servers serving the same
// model in the same tick: counts add, per-request averages are weighted by
// the counts they average over (success count; for compute, successes that
// were not cache hits), which is Σ Δns / Σ Δcount over the servers, the
// way perf_analyzer averages one server's deltas, up to each server's
// rounding of its own average (under a nanosecond). A server without
// statistics this tick, or whose counters went back (Reset), adds nothing:
// the aggregate is over the servers that measured the tick, Reset only
// when every one that answered was reset, and unavailable when none
// answered, with their errors. A pipeline's steps are aggregated step by
// step (each composing model's over the servers) and its times decomposed
// over them again (Decompose), its own times weighted as the others.
func AggregateServer(parts []ServerStats) ServerStats { return aggregateServer(parts, true) }

// aggregateServer is AggregateServer; without steps (statistics of
// different models), a pipeline's decomposed times are weighted as any
// model's and its steps left out.
func aggregateServer(parts []ServerStats, steps bool) ServerStats {
	var out ServerStats
	var own ownAcc
	var (
		measured, reset           int
		requestNs, queueNs        float64
		inNs, inferNs, outNs      float64
		computeN                  int64
		errs                      []string
		responses                 *ServerResponses
		infer, exec, success, hit int64
	)
	for i := range parts {
		p := &parts[i]
		if out.Model == "" {
			out.Model, out.Version = p.Model, p.Version
		}
		switch {
		case !p.Available:
			if p.Err != "" && !slices.Contains(errs, p.Err) {
				errs = append(errs, p.Err)
			}
			continue
		case p.Reset:
			reset++
			continue
		}
		measured++
		out.Model, out.Version = p.Model, p.Version
		n := float64(p.SuccessCount)
		cn := max(p.SuccessCount-p.CacheHitCount, 0)
		success += p.SuccessCount
		hit += p.CacheHitCount
		out.FailCount += p.FailCount
		infer += p.InferenceCount
		exec += p.ExecutionCount
		requestNs += float64(p.Request) * n
		queueNs += float64(p.Queue) * n
		inNs += float64(p.ComputeInput) * float64(cn)
		inferNs += float64(p.ComputeInfer) * float64(cn)
		outNs += float64(p.ComputeOutput) * float64(cn)
		computeN += cn
		if steps && p.Own != nil {
			own.add(p.Own, n, float64(cn))
		}
		for _, b := range p.Batches {
			out.Batches = addBatch(out.Batches, b)
		}
		if p.Responses != nil {
			if responses == nil {
				responses = &ServerResponses{}
			}
			responses.Add(p.Responses)
		}
	}
	switch {
	case measured == 0 && reset > 0:
		out.Available, out.Reset = true, true
		return out
	case measured == 0:
		out.Err = strings.Join(errs, "; ")
		return out
	}
	out.Available = true
	out.SuccessCount, out.CacheHitCount = success, hit
	out.InferenceCount, out.ExecutionCount = infer, exec
	if success > 0 {
		out.Request = time.Duration(requestNs / float64(success))
		out.Queue = time.Duration(queueNs / float64(success))
	}
	if computeN > 0 {
		out.ComputeInput = time.Duration(inNs / float64(computeN))
		out.ComputeInfer = time.Duration(inferNs / float64(computeN))
		out.ComputeOutput = time.Duration(outNs / float64(computeN))
	}
	out.Overhead = max(0, out.Request-out.Queue-out.Compute())
	if exec > 0 {
		out.AvgBatch = float64(infer) / float64(exec)
	}
	out.Responses = responses
	if steps {
		out.addSteps(parts, &own, computeN)
	}
	return out
}

// addSteps sets the aggregate's steps and own times, when the parts are a
// pipeline's, and decomposes it over them.
func (s *ServerStats) addSteps(parts []ServerStats, own *ownAcc, computeN int64) {
	s.Steps = aggregateSteps(parts)
	if s.Steps != nil {
		s.Own = own.times(float64(s.SuccessCount), float64(computeN))
		s.Decompose()
	}
}

// ownAcc adds pipelines' own times weighted by the counts they average
// over.
type ownAcc struct{ queueNs, inNs, inferNs, outNs float64 }

func (a *ownAcc) add(o *OwnTimes, n, computeN float64) {
	a.queueNs += float64(o.Queue) * n
	a.inNs += float64(o.ComputeInput) * computeN
	a.inferNs += float64(o.ComputeInfer) * computeN
	a.outNs += float64(o.ComputeOutput) * computeN
}

func (a *ownAcc) times(n, computeN float64) *OwnTimes {
	o := &OwnTimes{}
	if n > 0 {
		o.Queue = time.Duration(a.queueNs / n)
	}
	if computeN > 0 {
		o.ComputeInput = time.Duration(a.inNs / computeN)
		o.ComputeInfer = time.Duration(a.inferNs / computeN)
		o.ComputeOutput = time.Duration(a.outNs / computeN)
	}
	return o
}

// aggregateSteps adds the steps of the pipelines among parts (one
// pipeline's statistics on several servers) composing model by composing
// model, in the order they first appear; nil when no part has steps.
func aggregateSteps(parts []ServerStats) []ServerStats {
	var names []string
	for i := range parts {
		if !parts[i].Available || parts[i].Reset {
			continue
		}
		for _, st := range parts[i].Steps {
			if !slices.Contains(names, st.Model) {
				names = append(names, st.Model)
			}
		}
	}
	if names == nil {
		return nil
	}
	out := make([]ServerStats, len(names))
	group := make([]ServerStats, 0, len(parts))
	for k, name := range names {
		group = group[:0]
		for i := range parts {
			if !parts[i].Available || parts[i].Reset {
				continue
			}
			for _, st := range parts[i].Steps {
				if st.Model == name {
					group = append(group, st)
				}
			}
		}
		out[k] = aggregateServer(group, true)
	}
	return out
}

// addBatch adds b to counts kept by ascending size.
func addBatch(counts []BatchCount, b BatchCount) []BatchCount {
	i, found := slices.BinarySearchFunc(counts, b.Size, func(x BatchCount, size int) int { return x.Size - size })
	if found {
		counts[i].Count += b.Count
		return counts
	}
	return slices.Insert(counts, i, b)
}

// AggregateMetrics joins the metrics of several servers read in the same
// tick: every server's GPUs (each GPU keeps its Replica), the servers' CPU
// utilization averaged over those that report it and their memory added,
// and the pending requests added. It is available when any server's
// metrics were read, and unavailable with their errors when none were.
func AggregateMetrics(parts []ServerMetrics) ServerMetrics {
	var out ServerMetrics
	var errs []string
	cpus := 0
	for i := range parts {
		p := &parts[i]
		if !p.Available {
			if p.Err != "" && !slices.Contains(errs, p.Err) {
				errs = append(errs, p.Err)
			}
			continue
		}
		out.Available = true
		out.GPUs = append(out.GPUs, p.GPUs...)
		if p.HasCPU {
			cpus++
			out.HasCPU = true
			out.CPUUtilization += p.CPUUtilization
			out.CPUMemoryUsed += p.CPUMemoryUsed
			out.CPUMemoryTotal += p.CPUMemoryTotal
		}
		if p.HasPending {
			out.HasPending = true
			out.Pending += p.Pending
		}
	}
	if cpus > 0 {
		out.CPUUtilization /= float64(cpus)
	}
	if !out.Available {
		out.Err = strings.Join(errs, "; ")
	}
	return out
}

// ReplicasUp counts the replicas that are in.
func (s *Snapshot) ReplicasUp() int {
	n := 0
	for i := range s.Replicas {
		if s.Replicas[i].Up {
			n++
		}
	}
	return n
}

// GPUUtilization is the mean utilization of the replica's GPUs that
// report it, and false when none does.
func (r *Replica) GPUUtilization() (float64, bool) {
	var sum float64
	n := 0
	for _, g := range r.Metrics.GPUs {
		if g.HasUtilization {
			sum += g.Utilization
			n++
		}
	}
	if !r.Metrics.Available || n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
