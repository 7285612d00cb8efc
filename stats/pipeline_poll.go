package stats

import (
	"strconv"

	"github.com/tritontop/tritontop/triton/pb"
)

// stepNode is a composing model as a poller follows it: the version an
// unversioned step resolved to last, kept for the reads in which none of
// its versions served a request.
type stepNode struct {
	Composing
	last  string
	steps []stepNode
}

func stepNodes(cs []Composing) []stepNode {
	if len(cs) == 0 {
		return nil
	}
	out := make([]stepNode, len(cs))
	for i, c := range cs {
		out[i] = stepNode{Composing: c, steps: stepNodes(c.Steps)}
	}
	return out
}

// SetComposing makes p read the statistics of the model's composing models
// with its own, every model's at once (an empty model name: perf_analyzer
// asks so for a pipeline), and report each one's deltas in
// ServerStats.Steps with the pipeline's time decomposed over them
// (ServerStats.Decompose). Call it before the first read.
func (p *ServerPoller) SetComposing(cs []Composing) {
	p.steps = stepNodes(cs)
	p.names = nil
	if len(cs) > 0 {
		p.names = composingNames(cs, nil)
	}
}

// keepComposing is the entries of the composing models among all: the
// baseline of the next read's steps.
func (p *ServerPoller) keepComposing(all []*pb.ModelStatistics) []*pb.ModelStatistics {
	var out []*pb.ModelStatistics
	for _, st := range all {
		if p.names[st.GetName()] {
			out = append(out, st)
		}
	}
	return out
}

// addSteps sets s.Steps, each composing model's deltas between the
// readings prev and cur, and decomposes s over them. A step whose entry is
// missing, whose version changed or whose counters went back makes the
// whole tick a Reset: the pipeline's time cannot be split over its steps.
func addSteps(s *ServerStats, nodes []stepNode, prev, cur []*pb.ModelStatistics) {
	s.Steps = make([]ServerStats, len(nodes))
	reset := false
	for i := range nodes {
		st := stepDelta(&nodes[i], prev, cur)
		reset = reset || st.Reset || !st.Available
		s.Steps[i] = st
	}
	if reset {
		*s = ServerStats{Available: true, Reset: true, Model: s.Model, Version: s.Version, Steps: s.Steps}
		return
	}
	s.Own = &OwnTimes{Queue: s.Queue, ComputeInput: s.ComputeInput, ComputeInfer: s.ComputeInfer, ComputeOutput: s.ComputeOutput}
	s.Decompose()
}

// stepDelta is one composing model's deltas, with its own steps when it
// is an ensemble.
func stepDelta(n *stepNode, prev, cur []*pb.ModelStatistics) ServerStats {
	v := resolveVersion(n, prev, cur)
	before, after := findStats(prev, n.Name, v), findStats(cur, n.Name, v)
	switch {
	case after == nil:
		return ServerStats{Model: n.Name, Version: v, Err: "no statistics for composing model " + strconv.Quote(n.Name)}
	case before == nil:
		// A version loaded since the last read.
		return ServerStats{Available: true, Reset: true, Model: n.Name, Version: v}
	}
	s := ServerDelta(before, after)
	if !s.Reset && len(n.steps) > 0 {
		addSteps(&s, n.steps, prev, cur)
	}
	return s
}

// resolveVersion is the version of a composing model to read: the one its
// step names, or, unversioned, perf_analyzer's choice: the highest version
// whose queue count grew since the last read. When none grew (no request
// reached it), the version chosen last, if still there, else the highest.
func resolveVersion(n *stepNode, prev, cur []*pb.ModelStatistics) string {
	if n.Version != "" {
		return n.Version
	}
	grown, grownN := "", int64(-1)
	highest, highestN := "", int64(-1)
	lastThere := false
	for _, st := range cur {
		if st.GetName() != n.Name {
			continue
		}
		v := st.GetVersion()
		num, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			num = -1
		}
		if highest == "" || num > highestN {
			highest, highestN = v, num
		}
		lastThere = lastThere || v == n.last
		var before uint64
		if b := findStats(prev, n.Name, v); b != nil {
			before = b.GetInferenceStats().GetQueue().GetCount()
		}
		if st.GetInferenceStats().GetQueue().GetCount() > before && (grown == "" || num > grownN) {
			grown, grownN = v, num
		}
	}
	switch {
	case grown != "":
		n.last = grown
	case lastThere:
	default:
		n.last = highest
	}
	return n.last
}

// findStats is the entry of model at version among all, nil when absent.
func findStats(all []*pb.ModelStatistics, model, version string) *pb.ModelStatistics {
	for _, st := range all {
		if st.GetName() == model && st.GetVersion() == version {
			return st
		}
	}
	return nil
}
