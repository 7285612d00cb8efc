package triton_test

import (
	"context"
	"crypto/tls"
	"github.com/tritontop/tritontop/internal/testcerts"
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// startTLSSim starts the simulator with its demo models and gRPC over TLS.
func startTLSSim(t *testing.T, conf *tls.Config) *sim.Server {
	t.Helper()
	s, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 500 * time.Millisecond},
		GRPCTLS:    conf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dialTLS dials with a short timeout; TLS failures are immediate, so a
// long wait would only hide a hang.
func dialTLS(url string, o *triton.TLSOptions) (triton.Client, error) {
	return triton.Dial(context.Background(), url, triton.Options{TLS: o, ConnectTimeout: 5 * time.Second})
}

// inferSimple sends one request to the add/sub model and checks the sums
// and differences.
func inferSimple(t *testing.T, c triton.Client) {
	t.Helper()
	a, b := make([]int32, 16), make([]int32, 16)
	for i := range a {
		a[i], b[i] = int32(i), int32(3*i-20)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Infer(ctx, &triton.InferRequest{
		Model: "simple",
		Inputs: []triton.Tensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Data: triton.PutInt32s(a)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Data: triton.PutInt32s(b)},
		},
	})
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	sum, ok0 := resp.Output("OUTPUT0")
	diff, ok1 := resp.Output("OUTPUT1")
	if !ok0 || !ok1 {
		t.Fatalf("outputs %+v", resp.Outputs)
	}
	gotSum, gotDiff := triton.Int32s(sum.Data), triton.Int32s(diff.Data)
	if len(gotSum) != 16 || len(gotDiff) != 16 {
		t.Fatalf("output lengths %d, %d; want 16", len(gotSum), len(gotDiff))
	}
	for i := range a {
		if gotSum[i] != a[i]+b[i] || gotDiff[i] != a[i]-b[i] {
			t.Fatalf("element %d: %d, %d; want %d, %d", i, gotSum[i], gotDiff[i], a[i]+b[i], a[i]-b[i])
		}
	}
}

// wantDialError checks that Dial failed with one line holding every want.
func wantDialError(t *testing.T, what string, c triton.Client, err error, want ...string) {
	t.Helper()
	if err == nil {
		c.Close()
		t.Errorf("%s: Dial succeeded, want an error", what)
		return
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: error spans lines: %q", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q does not mention %q", what, msg, w)
		}
	}
}

func TestDialGRPCOverTLS(t *testing.T) {
	certs := testcerts.New(t)
	s := startTLSSim(t, certs.ServerTLS(t, false))

	for _, url := range []string{s.GRPCAddr(), "grpcs://" + s.GRPCAddr()} {
		c, err := dialTLS(url, &triton.TLSOptions{CAFile: certs.CA})
		if err != nil {
			t.Fatalf("Dial %s with the CA: %v", url, err)
		}
		inferSimple(t, c)
		c.Close()
	}

	// The test CA is in no system pool, so the default roots refuse the
	// server, whether TLS comes from the options or the grpcs:// scheme.
	c, err := dialTLS(s.GRPCAddr(), &triton.TLSOptions{})
	wantDialError(t, "system roots", c, err, s.GRPCAddr(), "certificate is signed by an unknown authority", "--ssl-ca")
	c, err = dialTLS("grpcs://"+s.GRPCAddr(), nil)
	wantDialError(t, "grpcs:// with system roots", c, err, s.GRPCAddr(), "unknown authority")

	// A CA that did not sign the server's certificate is no better.
	c, err = dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: testcerts.New(t).CA})
	wantDialError(t, "another CA", c, err, s.GRPCAddr(), "unknown authority")

	// The certificate names 127.0.0.1 and localhost, nothing else.
	c, err = dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: certs.CA, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("Dial with ServerName localhost: %v", err)
	}
	c.Close()
	c, err = dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: certs.CA, ServerName: "triton.example"})
	wantDialError(t, "wrong server name", c, err, s.GRPCAddr(), "triton.example", "name or address the certificate lists")

	// A plaintext client is told that the port speaks TLS.
	c, err = triton.Dial(context.Background(), s.GRPCAddr(), triton.Options{ConnectTimeout: 5 * time.Second})
	wantDialError(t, "plaintext client", c, err, s.GRPCAddr(), "serves TLS on this port")

	// Skipping verification is the user's explicit choice.
	c, err = dialTLS(s.GRPCAddr(), &triton.TLSOptions{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("Dial with InsecureSkipVerify: %v", err)
	}
	c.Close()
}

// TestDialTLSToPlaintextServer: TLS towards a port that does not speak it
// says so, for both protocols.
func TestDialTLSToPlaintextServer(t *testing.T) {
	certs := testcerts.New(t)
	s := startTLSSim(t, nil)
	for _, url := range []string{"grpcs://" + s.GRPCAddr(), "https://" + s.HTTPAddr()} {
		c, err := dialTLS(url, &triton.TLSOptions{CAFile: certs.CA})
		wantDialError(t, url, c, err, "does not speak TLS")
	}
}

func TestDialGRPCOverMutualTLS(t *testing.T) {
	certs := testcerts.New(t)
	s := startTLSSim(t, certs.ServerTLS(t, true))

	c, err := dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey})
	if err != nil {
		t.Fatalf("Dial with a client certificate: %v", err)
	}
	inferSimple(t, c)
	c.Close()

	c, err = dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: certs.CA})
	wantDialError(t, "no client certificate", c, err, s.GRPCAddr(), "requires a client certificate", "--ssl-cert")

	other := testcerts.New(t)
	c, err = dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: certs.CA, CertFile: other.ClientCert, KeyFile: other.ClientKey})
	wantDialError(t, "client certificate from another CA", c, err, s.GRPCAddr(), "refused the client certificate", "signed by a CA the server trusts")
}

// TestDialHTTPS puts the simulator's HTTP/REST endpoint behind a TLS
// reverse proxy, the usual way to serve Triton's HTTP over TLS.
func TestDialHTTPS(t *testing.T) {
	certs := testcerts.New(t)
	s := startTLSSim(t, nil)
	backend, err := url.Parse("http://" + s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	for _, mutual := range []bool{false, true} {
		proxy := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(backend))
		proxy.TLS = certs.ServerTLS(t, mutual)
		// Refused handshakes are the point here, not news for the log.
		proxy.Config.ErrorLog = log.New(io.Discard, "", 0)
		proxy.StartTLS()
		t.Cleanup(proxy.Close)
		addr, ok := strings.CutPrefix(proxy.URL, "https://")
		if !ok {
			t.Fatalf("proxy URL %s", proxy.URL)
		}

		opts := &triton.TLSOptions{CAFile: certs.CA}
		if mutual {
			opts.CertFile, opts.KeyFile = certs.ClientCert, certs.ClientKey
		}
		c, err := dialTLS(proxy.URL, opts)
		if err != nil {
			t.Fatalf("Dial %s (mutual %v): %v", proxy.URL, mutual, err)
		}
		inferSimple(t, c)
		c.Close()

		c, err = dialTLS(proxy.URL, nil)
		wantDialError(t, "https:// with system roots", c, err, addr, "unknown authority")
		if mutual {
			c, err = dialTLS(proxy.URL, &triton.TLSOptions{CAFile: certs.CA})
			wantDialError(t, "https:// without a client certificate", c, err, addr, "requires a client certificate")
		}
	}
}

func TestDialRefusesBadTLSFiles(t *testing.T) {
	certs := testcerts.New(t)
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name string
		opts triton.TLSOptions
		want []string
	}{
		{"cert without key", triton.TLSOptions{CertFile: certs.ClientCert}, []string{"cert file and a key file"}},
		{"key without cert", triton.TLSOptions{KeyFile: certs.ClientKey}, []string{"cert file and a key file"}},
		{"key of another certificate", triton.TLSOptions{CertFile: certs.ClientCert, KeyFile: certs.ServerKey},
			[]string{"client certificate", "does not match"}},
		{"missing CA file", triton.TLSOptions{CAFile: missing}, []string{"CA file", "missing.pem"}},
		{"CA file without PEM", triton.TLSOptions{CAFile: notPEM}, []string{"not.pem", "no PEM certificate"}},
		{"missing cert file", triton.TLSOptions{CertFile: missing, KeyFile: certs.ClientKey}, []string{"missing.pem"}},
	}
	// Nothing listens on port 1: the files must be refused before any
	// connection is tried, or the error would be "connection refused".
	for _, tt := range tests {
		for _, url := range []string{"127.0.0.1:1", "https://127.0.0.1:1"} {
			c, err := dialTLS(url, &tt.opts)
			wantDialError(t, tt.name+" "+url, c, err, tt.want...)
			if err != nil && strings.Contains(err.Error(), "refused") {
				t.Errorf("%s %s: the files were not checked before dialing: %v", tt.name, url, err)
			}
		}
	}
}

// TestDialOptionalClientCertificate: a server that asks for a client
// certificate but does not require one is not mistaken for mutual TLS.
func TestDialOptionalClientCertificate(t *testing.T) {
	certs := testcerts.New(t)
	conf := certs.ServerTLS(t, true)
	conf.ClientAuth = tls.VerifyClientCertIfGiven
	s := startTLSSim(t, conf)
	c, err := dialTLS(s.GRPCAddr(), &triton.TLSOptions{CAFile: certs.CA})
	if err != nil {
		t.Fatalf("Dial without a client certificate: %v", err)
	}
	inferSimple(t, c)
	c.Close()
}
