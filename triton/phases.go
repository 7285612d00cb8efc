package triton

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// Phases times the client's own part of a unary request, perf_analyzer's
// "Client Send" and "Client Recv": Send from the call to the request
// encoded and handed to the transport (gRPC) or written (HTTP), Recv from
// the response's arrival to it being read and decoded. A Send whose
// context carries a Phases (WithPhases) fills it; one Phases serves one
// request at a time (a worker's), and is reused without allocating.
type Phases struct {
	Send, Recv time.Duration

	// call is the gRPC request wrapper whose encoding marks the end of the
	// send; reply is the reply whose decoding marks the start of the
	// receive.
	call timedCall
	// The instants the transport reports (HTTP's trace hooks may run on
	// its own goroutines), in ns since start.
	start    time.Time
	sentAt   atomic.Int64
	arriveAt atomic.Int64
}

type phasesKey struct{}

// WithPhases returns a context under which Send times its phases into ph.
// Make it once per worker and send every request under it (or a context
// derived from it): nothing is allocated per request.
func WithPhases(ctx context.Context, ph *Phases) context.Context {
	ph.call.ph = ph
	ctx = context.WithValue(ctx, phasesKey{}, ph)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { ph.mark(&ph.sentAt) },
		GotFirstResponseByte: func() { ph.mark(&ph.arriveAt) },
	})
}

// phasesOf is the Phases a request's context carries, nil for none.
func phasesOf(ctx context.Context) *Phases {
	ph, _ := ctx.Value(phasesKey{}).(*Phases)
	return ph
}

// begin starts timing a request.
func (ph *Phases) begin() {
	ph.Send, ph.Recv = 0, 0
	ph.sentAt.Store(0)
	ph.arriveAt.Store(0)
	ph.start = time.Now()
}

// mark notes an instant of the request under way.
func (ph *Phases) mark(at *atomic.Int64) { at.Store(int64(time.Since(ph.start)) + 1) }

// finish sets Send and Recv from the instants marked, the request having
// ended now; a phase whose instant was not seen stays 0.
func (ph *Phases) finish() {
	end := time.Since(ph.start)
	sent, arrived := time.Duration(ph.sentAt.Load()-1), time.Duration(ph.arriveAt.Load()-1)
	if sent >= 0 {
		ph.Send = sent
	}
	if arrived >= 0 && arrived <= end {
		ph.Recv = end - arrived
	}
}

// timedCall is a prepared gRPC request sent under Phases: the codec marks
// the end of the send when it encodes it.
type timedCall struct {
	p  *grpcPrepared
	ph *Phases
}
