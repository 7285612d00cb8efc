package stats

import (
	"time"

	"github.com/tritontop/tritontop/triton/pb"
)

// ServerResponses is Triton's own account of a decoupled model's responses
// over a span: the deltas of its response_stats, which the backend reports
// per response index ("0" for every request's first response, "1" for its
// second, ...). It is the server side of the client's StreamingStats.
type ServerResponses struct {
	// Success, Fail, Empty and Cancel count the responses by outcome; an
	// empty response is a final flag the model sent without outputs.
	Success int64 `json:"success_count"`
	Fail    int64 `json:"fail_count,omitempty"`
	Empty   int64 `json:"empty_count,omitempty"`
	Cancel  int64 `json:"cancel_count,omitempty"`
	// ComputeInfer is the average time the model took to produce a
	// response, over the ComputeInferCount responses that Triton timed
	// (success, failed and empty ones); ComputeOutput the average time to
	// hand its outputs over, over ComputeOutputCount.
	ComputeInfer       time.Duration `json:"compute_infer_ns"`
	ComputeOutput      time.Duration `json:"compute_output_ns"`
	ComputeInferCount  int64         `json:"compute_infer_count"`
	ComputeOutputCount int64         `json:"compute_output_count"`
	// FirstComputeInfer is ComputeInfer over first responses (index 0,
	// FirstCount of them): the server's share of the time to first token.
	// LaterComputeInfer is over the others (LaterCount): the server's time
	// per further token.
	FirstComputeInfer time.Duration `json:"first_compute_infer_ns"`
	FirstCount        int64         `json:"first_count"`
	LaterComputeInfer time.Duration `json:"later_compute_infer_ns"`
	LaterCount        int64         `json:"later_count"`
}

// responseDeltas computes a span's ServerResponses from two readings of
// response_stats. It returns nil, true when the model reports none, and
// false when the readings are not one history (an index gone, a counter
// gone backwards).
func responseDeltas(prev, cur map[string]*pb.InferResponseStatistics) (*ServerResponses, bool) {
	if len(cur) == 0 {
		return nil, len(prev) == 0
	}
	for k := range prev {
		if _, ok := cur[k]; !ok {
			return nil, false
		}
	}
	r := &ServerResponses{}
	var inferNs, outNs, firstNs, laterNs uint64
	for k, c := range cur {
		p := prev[k] // nil for an index new in this span: all zero
		var d [6]counter
		pairs := [6][2]*pb.StatisticDuration{
			{p.GetComputeInfer(), c.GetComputeInfer()},
			{p.GetComputeOutput(), c.GetComputeOutput()},
			{p.GetSuccess(), c.GetSuccess()},
			{p.GetFail(), c.GetFail()},
			{p.GetEmptyResponse(), c.GetEmptyResponse()},
			{p.GetCancel(), c.GetCancel()},
		}
		for i, pc := range pairs {
			var ok bool
			if d[i], ok = deltaOf(durationOf(pc[0]), durationOf(pc[1])); !ok {
				return nil, false
			}
		}
		infer, out := d[0], d[1]
		r.Success += int64(d[2].count)
		r.Fail += int64(d[3].count)
		r.Empty += int64(d[4].count)
		r.Cancel += int64(d[5].count)
		r.ComputeInferCount += int64(infer.count)
		r.ComputeOutputCount += int64(out.count)
		inferNs += infer.ns
		outNs += out.ns
		if k == "0" {
			r.FirstCount += int64(infer.count)
			firstNs += infer.ns
		} else {
			r.LaterCount += int64(infer.count)
			laterNs += infer.ns
		}
	}
	r.ComputeInfer = average(inferNs, uint64(r.ComputeInferCount))
	r.ComputeOutput = average(outNs, uint64(r.ComputeOutputCount))
	r.FirstComputeInfer = average(firstNs, uint64(r.FirstCount))
	r.LaterComputeInfer = average(laterNs, uint64(r.LaterCount))
	return r, true
}

// Add adds o to r, the averages weighted by their counts.
func (r *ServerResponses) Add(o *ServerResponses) {
	weigh := func(a time.Duration, an int64, b time.Duration, bn int64) time.Duration {
		if an+bn == 0 {
			return 0
		}
		return time.Duration((float64(a)*float64(an) + float64(b)*float64(bn)) / float64(an+bn))
	}
	r.ComputeInfer = weigh(r.ComputeInfer, r.ComputeInferCount, o.ComputeInfer, o.ComputeInferCount)
	r.ComputeOutput = weigh(r.ComputeOutput, r.ComputeOutputCount, o.ComputeOutput, o.ComputeOutputCount)
	r.FirstComputeInfer = weigh(r.FirstComputeInfer, r.FirstCount, o.FirstComputeInfer, o.FirstCount)
	r.LaterComputeInfer = weigh(r.LaterComputeInfer, r.LaterCount, o.LaterComputeInfer, o.LaterCount)
	r.Success += o.Success
	r.Fail += o.Fail
	r.Empty += o.Empty
	r.Cancel += o.Cancel
	r.ComputeInferCount += o.ComputeInferCount
	r.ComputeOutputCount += o.ComputeOutputCount
	r.FirstCount += o.FirstCount
	r.LaterCount += o.LaterCount
}

// progressed reports whether the model sent responses in the span: a
// decoupled model's requests may take many ticks, and one that keeps
// answering is working, not stalled, though none of them ended.
func (r *ServerResponses) progressed() bool {
	return r != nil && r.Success+r.Empty+r.Fail > 0
}
