package capture

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// proxied starts the simulator and a capture proxy in front of it, and
// returns the simulator, the proxy's address, the proxy, the trace's
// buffer and its writer.
func proxied(t *testing.T, tensors bool) (*sim.Server, string, *GRPCProxy, *bytes.Buffer, *trace.Writer) {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewGRPCProxy(Options{Upstream: srv.GRPCAddr(), Trace: w, Tensors: tensors})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(p.Stop)
	return srv, l.Addr().String(), p, &buf, w
}

// TestProxyForwardsEveryCall: metadata, unary and streaming inference, a
// server error and a method Triton does not have all come back through the
// proxy as they come from the server itself; the inference requests are
// recorded with their shapes and parameters, without tensors.
func TestProxyForwardsEveryCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, addr, p, buf, w := proxied(t, false)
	direct, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	via, err := triton.Dial(ctx, addr, triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer via.Close()

	md1, err := direct.ModelMetadata(ctx, "simple", "")
	if err != nil {
		t.Fatal(err)
	}
	md2, err := via.ModelMetadata(ctx, "simple", "")
	if err != nil || !proto.Equal(md1, md2) {
		t.Fatalf("metadata through the proxy %v, %v; direct %v", md2, err, md1)
	}
	cfg, err := via.ModelConfig(ctx, "simple", "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md2, cfg, triton.InputOptions{Parameters: map[string]any{"priority": int64(2)}})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := direct.Infer(ctx, reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	r2, err := via.Infer(ctx, reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if a, b := r1.Outputs[0].Data, r2.Outputs[0].Data; !bytes.Equal(a, b) {
		t.Errorf("outputs differ through the proxy")
	}
	// A server error: its code and message pass through.
	bad := *reqs[0]
	bad.Model = "nosuchmodel"
	_, e1 := direct.Infer(ctx, &bad)
	_, e2 := via.Infer(ctx, &bad)
	if e1 == nil || status.Code(e1) != status.Code(e2) || status.Convert(e1).Message() != status.Convert(e2).Message() {
		t.Errorf("error through the proxy %v, direct %v", e2, e1)
	}
	// A method Triton does not have.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Invoke(ctx, "/inference.GRPCInferenceService/NoSuchMethod", &pb.ServerLiveRequest{}, &pb.ServerLiveResponse{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("an unknown method through the proxy: %v, want Unimplemented from the server", err)
	}
	// A streamed, decoupled request: every response comes back.
	llmMD, err := via.ModelMetadata(ctx, "llm", "")
	if err != nil {
		t.Fatal(err)
	}
	llmCfg, err := via.ModelConfig(ctx, "llm", "")
	if err != nil {
		t.Fatal(err)
	}
	llmReqs, err := triton.BuildRequests(llmMD, llmCfg, triton.InputOptions{Streaming: true, Parameters: map[string]any{"max_tokens": int64(5)}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := via.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := via.Prepare(llmReqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(prep, "s1"); err != nil {
		t.Fatal(err)
	}
	responses := 0
	for {
		resp, err := st.Recv()
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		responses++
		if resp.Final {
			break
		}
	}
	st.CloseSend()
	if responses < 2 {
		t.Errorf("%d responses to a streamed LLM request", responses)
	}

	p.Stop()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, r := range tr.Requests {
		models = append(models, r.Model)
	}
	if strings.Join(models, ",") != "simple,nosuchmodel,llm" {
		t.Fatalf("recorded %v", models)
	}
	r := tr.Requests[0]
	if r.Inputs[0].Name != "INPUT0" || r.Inputs[0].Shape[1] != 16 || r.Inputs[0].Bytes != 64 || r.Inputs[0].Data != nil ||
		r.Parameters["priority"] != int64(2) || r.RequestBytes == 0 || r.ResponseBytes == 0 {
		t.Errorf("recorded %+v", r)
	}
	if !tr.Requests[2].Stream {
		t.Errorf("stream request %+v", tr.Requests[2])
	}
	if s := p.Stats(); s.Recorded != 3 || s.Calls < 7 {
		t.Errorf("stats %+v", s)
	}
}
