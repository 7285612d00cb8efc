package session_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testcerts"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// tlsSim starts the simulator serving gRPC over TLS with the server
// certificate of certs; with mutual, clients must show a certificate that
// certs' CA signed (what tritontop sim --grpc-use-ssl-mutual sets up).
func tlsSim(t *testing.T, certs testcerts.Certs, mutual bool) *sim.Server {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mutual {
		pem, err := os.ReadFile(certs.CA)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("%s holds no PEM certificate", certs.CA)
		}
		conf.ClientAuth, conf.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
	srv, err := sim.Start(t.Context(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 100 * time.Millisecond},
		GRPCTLS:    conf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

var tlsRequestCount = regexp.MustCompile(`Request count: (\d+)`)

// tlsWantRun runs c and checks a successful run: requests counted in the
// summary and answered by the server.
func tlsWantRun(t *testing.T, srv *sim.Server, c session.Config) {
	t.Helper()
	stdout, _ := runOK(t, c)
	m := tlsRequestCount.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("summary has no request count:\n%s", stdout)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Errorf("summary counts no requests:\n%s", stdout)
	}
	st, err := srv.Engine().ModelStatistics("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	var served uint64
	for _, s := range st.GetModelStats() {
		served += s.GetInferenceStats().GetSuccess().GetCount()
	}
	if served == 0 {
		t.Error("the server answered no inference")
	}
}

// tlsWantFailure runs c and checks a run that failed to connect: a failed
// run (exit 1) whose error holds every want, nothing else said on stderr
// (the command line prints the error as its one line) and nothing on
// stdout.
func tlsWantFailure(t *testing.T, c session.Config, want ...string) {
	t.Helper()
	c.ConnectTimeout = 3 * time.Second
	err, stdout, stderr := runConfig(t, c)
	if code := exitCode(err); code != 1 {
		t.Fatalf("%v: exit %d, want 1; stderr: %s", err, code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr besides the error: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if stdout != "" {
		t.Errorf("stdout not empty on error: %q", stdout)
	}
}

// TestLoadOverTLS: a run trusts the server's CA with --ssl-ca; without it,
// or without --ssl, the run fails with an error that says which flag is
// missing.
func TestLoadOverTLS(t *testing.T) {
	t.Parallel()
	certs := testcerts.New(t)
	srv := tlsSim(t, certs, false)

	c := quickConfig(srv, "simple")
	c.SSLCA = certs.CA
	tlsWantRun(t, srv, c)

	c = quickConfig(srv, "simple")
	c.SSL = true
	tlsWantFailure(t, c, srv.GRPCAddr(), "unknown authority", "--ssl-ca")

	c = quickConfig(srv, "simple")
	tlsWantFailure(t, c, srv.GRPCAddr(), "serves TLS", "--ssl")
}

// TestLoadOverMutualTLS: a run shows its client certificate with
// --ssl-cert and --ssl-key; without one, or with one of another CA, the
// run fails with an error that says so.
func TestLoadOverMutualTLS(t *testing.T) {
	t.Parallel()
	certs := testcerts.New(t)
	srv := tlsSim(t, certs, true)

	c := quickConfig(srv, "simple")
	c.SSLCA, c.SSLCert, c.SSLKey = certs.CA, certs.ClientCert, certs.ClientKey
	tlsWantRun(t, srv, c)

	c = quickConfig(srv, "simple")
	c.SSLCA = certs.CA
	tlsWantFailure(t, c, srv.GRPCAddr(), "requires a client certificate", "--ssl-cert")

	// A client certificate from a CA the server was not given is refused.
	other := testcerts.New(t)
	c = quickConfig(srv, "simple")
	c.SSLCA, c.SSLCert, c.SSLKey = certs.CA, other.ClientCert, other.ClientKey
	tlsWantFailure(t, c, srv.GRPCAddr(), "refused the client certificate")
}
