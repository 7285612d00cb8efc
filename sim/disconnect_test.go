package sim

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tritontop/tritontop/triton/pb"
)

// TestClientDisconnectLeavesNothingBehind gives up on requests stuck in a
// stalled queue over unary gRPC, a gRPC stream and HTTP: each is counted
// once as a CANCELED failure, leaves the queue, and once the server is
// closed no goroutine of it is left.
func TestClientDisconnectLeavesNothingBehind(t *testing.T) {
	baseline := runtime.NumGoroutine()
	s, err := Start(context.Background(), Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: testRepository(), Engine: EngineOptions{MetricsInterval: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Engine().SetFaults(Faults{StallUntil: time.Now().Add(time.Hour)})

	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := pb.NewGRPCInferenceServiceClient(conn)
	ctx, cancel := context.WithCancel(context.Background())
	unary := make(chan error, 1)
	go func() { _, err := client.ModelInfer(ctx, simpleRequest(1)); unary <- err }()
	stream, err := client.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(simpleRequest(1)); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	httpDone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+s.HTTPAddr()+"/v2/models/nobatch/infer",
			bytes.NewReader([]byte(`{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}]}`)))
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		httpDone <- err
	}()

	pending := func() uint64 {
		var n uint64
		for _, m := range s.Engine().Metrics().Models {
			n += m.Pending
		}
		return n
	}
	waitFor(t, "3 queued requests", func() bool { return pending() == 3 })
	cancel()
	<-unary
	<-httpDone
	waitFor(t, "the queue to empty", func() bool { return pending() == 0 })
	var canceled uint64
	for _, m := range s.Engine().Metrics().Models {
		canceled += m.FailureByReason["CANCELED"]
	}
	if canceled != 3 {
		t.Errorf("%d CANCELED failures, want 3 (one per abandoned request)", canceled)
	}

	_ = conn.Close()
	tr.CloseIdleConnections()
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > drainTimeout {
		t.Errorf("Close took %v with nothing in flight", d)
	}
	waitFor(t, "the server's goroutines to end", func() bool { return runtime.NumGoroutine() <= baseline+2 })
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("timed out waiting for %s; goroutines:\n%s", what, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
