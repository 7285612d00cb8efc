package triton

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/triton/pb"
)

// The gRPC benchmarks talk to a test server in a child process, so that
// allocs/op count the client only. The HTTP ones share the process with
// their server; compare Send with Infer there, not absolute numbers.

// TestHelperGRPCServer is the child process: it serves until its stdin
// closes. Run directly, it skips.
func TestHelperGRPCServer(t *testing.T) {
	if os.Getenv("TRITON_TEST_GRPC_SERVER") != "1" {
		t.Skip("helper process for benchmarks")
	}
	s := startGRPCServerQuiet(t, true)
	fmt.Println(s.addr)
	io.Copy(io.Discard, os.Stdin)
}

// grpcServerProcess starts TestHelperGRPCServer in a child process and
// returns its address.
func grpcServerProcess(b *testing.B) string {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := testproc.Command(exe, "-test.run=^TestHelperGRPCServer$")
	cmd.Env = append(os.Environ(), "TRITON_TEST_GRPC_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("helper server: %v", err)
	}
	return strings.TrimSpace(line)
}

func BenchmarkGRPCSend(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	p := mustPrepare(b, c, simpleRequest(1))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGRPCInferUnmarshal(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	req := simpleRequest(1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Infer(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// sinkRequest is a 1 MiB FP32 request, where encoding cost shows.
func sinkRequest() *InferRequest {
	return &InferRequest{Model: "sink", Inputs: []Tensor{{Name: "X", Datatype: "FP32", Shape: []int64{1, 262144}, Data: make([]byte, 1<<20)}}}
}

func BenchmarkGRPCSendLarge(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	p := mustPrepare(b, c, sinkRequest())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGRPCInferLarge(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	req := sinkRequest()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Infer(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGRPCSendParallel(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{Connections: 2})
	p := mustPrepare(b, c, simpleRequest(1))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkStreamSendRecv(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	p := mustPrepare(b, c, simpleRequest(1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := c.OpenStream(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Send(p, "id"); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHTTPSend(b *testing.B) {
	s := startHTTPServer(b)
	c := dialHTTP(b, s.URL, Options{})
	p := mustPrepare(b, c, simpleRequest(1))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHTTPInfer(b *testing.B) {
	s := startHTTPServer(b)
	c := dialHTTP(b, s.URL, Options{})
	req := simpleRequest(1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Infer(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamReplyParse(b *testing.B) {
	req, err := buildModelInferRequest(simpleRequest(1))
	if err != nil {
		b.Fatal(err)
	}
	resp, err := (&grpcTestServer{}).infer(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Id = "request-12345"
	msg := mustMarshal(b, &pb.ModelStreamInferResponse{InferResponse: resp})
	var r streamReply
	b.ReportAllocs()
	for b.Loop() {
		if err := r.parse(msg); err != nil || r.id != "request-12345" {
			b.Fatal(r.id, err)
		}
	}
}

// BenchmarkStreamReplyParseToken is the parse of a decoupled model's token
// response: one BYTES output and triton_final_response false.
func BenchmarkStreamReplyParseToken(b *testing.B) {
	resp := &pb.ModelInferResponse{ModelName: "llm", ModelVersion: "1", Id: "3-12345",
		Outputs:           []*pb.ModelInferResponse_InferOutputTensor{{Name: "text_output", Datatype: "BYTES", Shape: []int64{1}}},
		RawOutputContents: [][]byte{{5, 0, 0, 0, 't', 'o', 'k', 'e', 'n'}},
		Parameters:        map[string]*pb.InferParameter{"triton_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: false}}},
	}
	msg := mustMarshal(b, &pb.ModelStreamInferResponse{InferResponse: resp})
	var r streamReply
	b.ReportAllocs()
	for b.Loop() {
		if err := r.parse(msg); err != nil || r.final || !r.outputs {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkGRPCSendSequence is BenchmarkGRPCSend for a request in the
// middle of a sequence: the prepared bytes and the sequence's parameter
// entries go out as two buffers.
func BenchmarkGRPCSendSequence(b *testing.B) {
	c := dialGRPC(b, grpcServerProcess(b), Options{})
	seq, err := c.PrepareSequence(mustPrepare(b, c, simpleRequest(1)), 42)
	if err != nil {
		b.Fatal(err)
	}
	p := seq.Request(false, false)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPSendSequence is BenchmarkHTTPSend for a request in the
// middle of a sequence: a body in two parts.
func BenchmarkHTTPSendSequence(b *testing.B) {
	s := startHTTPServer(b)
	c := dialHTTP(b, s.URL, Options{})
	seq, err := c.PrepareSequence(mustPrepare(b, c, simpleRequest(1)), 42)
	if err != nil {
		b.Fatal(err)
	}
	p := seq.Request(false, false)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareSequence is what starting a sequence costs: its four
// requests' parameters encoded once, over gRPC and HTTP.
func BenchmarkPrepareSequence(b *testing.B) {
	for _, c := range []Client{&grpcClient{}, &httpClient{base: "http://h:8000", header: map[string][]string{}}} {
		p := mustPrepare(b, c, simpleRequest(1))
		name := "gRPC"
		if _, ok := c.(*httpClient); ok {
			name = "HTTP"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			id := uint64(0)
			for b.Loop() {
				id++
				if _, err := c.PrepareSequence(p, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
