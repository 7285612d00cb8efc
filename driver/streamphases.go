package driver

import "time"

// streamPhases times the client's own part of a request sent over a stream
// (gRPC ModelStreamInfer, a text endpoint's server-sent events), as
// perf_analyzer times its streaming requests: Client Send from the send's
// start to the request handed to the stream's transport (gRPC: SendMsg
// returned; a text endpoint: the request written), Client Recv from the
// final response's arrival (its message read off the stream, before
// decoding) to the request's end. A decoupled model's earlier responses
// arrive while the server still works on the request: their receipt
// overlaps the server's time and is not in Client Recv, so that send,
// receive and the server's request time still add up to at most the
// latency. The worker owns it; nothing is allocated.
type streamPhases struct {
	// start, sent and arrived are on the run's clock (run.now); sent and
	// arrived are 0 until known.
	start, sent, arrived time.Duration
}

// reply takes the instants the receiver saw for the request's reply.
func (p *streamPhases) reply(rep *streamReply) {
	if rep.sent > 0 {
		p.sent = rep.sent
	}
	p.arrived = rep.arrived
}

// fill sets a successful request's ClientSend and ClientRecv once its Done
// is set (a decoupled model's is the receiver's clock at the final
// response, just after its arrival).
func (p *streamPhases) fill(res *Result) {
	if p.sent > p.start {
		res.ClientSend = nsU32(p.sent - p.start)
	}
	if p.arrived > 0 && res.Done >= p.arrived {
		res.ClientRecv = nsU32(res.Done - p.arrived)
	}
}

// since is t on the run's clock, 0 for the zero time.
func (r *run) since(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return max(t.Sub(r.start), 1)
}
