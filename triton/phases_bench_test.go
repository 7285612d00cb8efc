package triton

import (
	"context"
	"testing"
)

// BenchmarkGRPCSendTimed is BenchmarkGRPCSend with the client's send and
// receive timed (WithPhases), as the driver sends every unary request:
// compare the two in one run for the cost of Client Send and Client Recv.
func BenchmarkGRPCSendTimed(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	p := mustPrepare(b, c, simpleRequest(1))
	var ph Phases
	ctx := WithPhases(context.Background(), &ph)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	if ph.Send <= 0 {
		b.Fatalf("send not timed: send %v, recv %v", ph.Send, ph.Recv)
	}
}

// BenchmarkHTTPSendTimed is BenchmarkHTTPSend with the phases timed.
func BenchmarkHTTPSendTimed(b *testing.B) {
	s := startHTTPServer(b)
	c := dialHTTP(b, s.URL, Options{})
	p := mustPrepare(b, c, simpleRequest(1))
	var ph Phases
	ctx := WithPhases(context.Background(), &ph)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	if ph.Send <= 0 || ph.Recv <= 0 {
		b.Fatalf("phases not timed: send %v, recv %v", ph.Send, ph.Recv)
	}
}
