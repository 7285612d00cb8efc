package sim

import (
	"context"
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testcerts"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// startTLSSim starts the simulator with gRPC over TLS.
func startTLSSim(t *testing.T, conf *tls.Config) *Server {
	t.Helper()
	s, err := Start(context.Background(), Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: testRepository(), Engine: EngineOptions{MetricsInterval: 100 * time.Millisecond},
		GRPCTLS: conf,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// grpcCall connects with the given credentials, a generated client rather
// than the project's, and makes one ModelInfer on the add/sub model.
func grpcCall(t *testing.T, s *Server, creds credentials.TransportCredentials) (*pb.ModelInferResponse, error) {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return pb.NewGRPCInferenceServiceClient(conn).ModelInfer(ctx, simpleRequest(1))
}

func checkSimpleResponse(t *testing.T, resp *pb.ModelInferResponse) {
	t.Helper()
	if len(resp.GetRawOutputContents()) != 2 {
		t.Fatalf("%d raw outputs, want 2", len(resp.GetRawOutputContents()))
	}
	sum := triton.Int32s(resp.GetRawOutputContents()[0])
	a, b := seq(16, 0), seq(16, 100)
	for i := range a {
		if sum[i] != a[i]+b[i] {
			t.Fatalf("OUTPUT0[%d] = %d, want %d", i, sum[i], a[i]+b[i])
		}
	}
}

func TestGRPCOverTLS(t *testing.T) {
	certs := testcerts.New(t)
	s := startTLSSim(t, certs.ServerTLS(t, false))

	resp, err := grpcCall(t, s, credentials.NewTLS(&tls.Config{RootCAs: certs.Pool(t)}))
	if err != nil {
		t.Fatalf("infer over TLS: %v", err)
	}
	checkSimpleResponse(t, resp)

	// The TLS listener does not fall back to plaintext.
	if _, err := grpcCall(t, s, insecure.NewCredentials()); status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext client on the TLS port: %v, want UNAVAILABLE", err)
	}
	// A client that does not trust the server's CA refuses it.
	other := testcerts.New(t)
	if _, err := grpcCall(t, s, credentials.NewTLS(&tls.Config{RootCAs: other.Pool(t)})); status.Code(err) != codes.Unavailable {
		t.Errorf("client trusting another CA: %v, want UNAVAILABLE", err)
	}

	// Like Triton, HTTP/REST and metrics stay plaintext.
	for _, url := range []string{"http://" + s.HTTPAddr() + "/v2/health/live", "http://" + s.MetricsAddr() + "/metrics"} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", url, resp.Status)
		}
	}
}

func TestGRPCOverMutualTLS(t *testing.T) {
	certs := testcerts.New(t)
	s := startTLSSim(t, certs.ServerTLS(t, true))
	roots := certs.Pool(t)

	client, err := tls.LoadX509KeyPair(certs.ClientCert, certs.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := grpcCall(t, s, credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client}}))
	if err != nil {
		t.Fatalf("infer with a client certificate: %v", err)
	}
	checkSimpleResponse(t, resp)

	if _, err := grpcCall(t, s, credentials.NewTLS(&tls.Config{RootCAs: roots})); status.Code(err) != codes.Unavailable {
		t.Errorf("no client certificate: %v, want UNAVAILABLE", err)
	}
	// A certificate from a CA the server was not told to trust is refused.
	other := testcerts.New(t)
	stranger, err := tls.LoadX509KeyPair(other.ClientCert, other.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := grpcCall(t, s, credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{stranger}})); status.Code(err) != codes.Unavailable {
		t.Errorf("client certificate from another CA: %v, want UNAVAILABLE", err)
	}
}
