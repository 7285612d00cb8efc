package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testcerts"

	"github.com/tritontop/tritontop/sim"
)

// startTLSSim starts the simulator with gRPC over TLS configured by
// `tritontop sim` TLS flags, so that the flags and the file loading are
// what the test exercises.
func startTLSSim(t *testing.T, tlsFlags ...string) *sim.Server {
	t.Helper()
	var o simOptions
	if err := newSimFlags(&o).Parse(tlsFlags); err != nil {
		t.Fatal(err)
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	conf, err := o.grpcTLS()
	if err != nil {
		t.Fatal(err)
	}
	if conf == nil {
		t.Fatalf("flags %q give no TLS configuration", tlsFlags)
	}
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 500 * time.Millisecond},
		GRPCTLS:    conf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

var requestCount = regexp.MustCompile(`Request count: (\d+)`)

// wantRun checks a successful headless run: exit 0 and requests counted
// in the summary and answered by the server.
func wantRun(t *testing.T, srv *sim.Server, code int, stdout, stderr string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := requestCount.FindStringSubmatch(stdout)
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

// wantOneLineFailure checks a run that failed to connect: exit 1 and one
// "tritontop: " line holding every want, nothing on stdout.
func wantOneLineFailure(t *testing.T, code int, stdout, stderr string, want ...string) {
	t.Helper()
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr: %s", code, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tritontop: ") {
		t.Errorf("stderr is not one \"tritontop: \" line: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("error %q does not mention %q", stderr, w)
		}
	}
	if stdout != "" {
		t.Errorf("stdout not empty on error: %q", stdout)
	}
}

func TestLoadOverTLS(t *testing.T) {
	certs := testcerts.New(t)
	srv := startTLSSim(t, "--grpc-use-ssl", "--grpc-server-cert", certs.ServerCert, "--grpc-server-key", certs.ServerKey)
	metrics := "http://" + srv.MetricsAddr() + "/metrics"

	code, stdout, stderr := runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--ssl-ca", certs.CA,
		"--metrics-url", metrics, "--duration", "2s", "--headless")
	wantRun(t, srv, code, stdout, stderr)

	code, stdout, stderr = runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--ssl",
		"--metrics-url", metrics, "--duration", "2s", "--headless", "--connect-timeout", "3s")
	wantOneLineFailure(t, code, stdout, stderr, srv.GRPCAddr(), "unknown authority", "--ssl-ca")

	code, stdout, stderr = runCLI("-m", "simple", "-u", srv.GRPCAddr(),
		"--metrics-url", metrics, "--duration", "2s", "--headless", "--connect-timeout", "3s")
	wantOneLineFailure(t, code, stdout, stderr, srv.GRPCAddr(), "serves TLS", "--ssl")
}

func TestLoadOverMutualTLS(t *testing.T) {
	certs := testcerts.New(t)
	srv := startTLSSim(t, "--grpc-use-ssl-mutual", "--grpc-server-cert", certs.ServerCert,
		"--grpc-server-key", certs.ServerKey, "--grpc-root-cert", certs.CA)
	metrics := "http://" + srv.MetricsAddr() + "/metrics"

	code, stdout, stderr := runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--ssl-ca", certs.CA,
		"--ssl-cert", certs.ClientCert, "--ssl-key", certs.ClientKey,
		"--metrics-url", metrics, "--duration", "1s", "--headless")
	wantRun(t, srv, code, stdout, stderr)

	code, stdout, stderr = runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--ssl-ca", certs.CA,
		"--metrics-url", metrics, "--duration", "1s", "--headless", "--connect-timeout", "3s")
	wantOneLineFailure(t, code, stdout, stderr, srv.GRPCAddr(), "requires a client certificate", "--ssl-cert")

	// A client certificate from a CA the server was not given is refused.
	other := testcerts.New(t)
	code, stdout, stderr = runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--ssl-ca", certs.CA,
		"--ssl-cert", other.ClientCert, "--ssl-key", other.ClientKey,
		"--metrics-url", metrics, "--duration", "1s", "--headless", "--connect-timeout", "3s")
	wantOneLineFailure(t, code, stdout, stderr, srv.GRPCAddr(), "refused the client certificate")
}

// TestSimTLSFlags: bad TLS flags of `tritontop sim` get one line; mistakes
// in the flags themselves exit 2, files that cannot be used exit 1, like
// the simulator's other flags and its --model-repository file.
func TestSimTLSFlags(t *testing.T) {
	certs := testcerts.New(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ssl := func(more ...string) []string {
		return append([]string{"--grpc-use-ssl", "--grpc-server-cert", certs.ServerCert, "--grpc-server-key", certs.ServerKey}, more...)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"ssl without files", []string{"--grpc-use-ssl"}, 2, []string{"--grpc-server-cert", "--grpc-server-key"}},
		{"ssl without key", []string{"--grpc-use-ssl", "--grpc-server-cert", certs.ServerCert}, 2, []string{"--grpc-server-key"}},
		{"files without ssl", []string{"--grpc-server-cert", certs.ServerCert, "--grpc-server-key", certs.ServerKey}, 2, []string{"--grpc-use-ssl"}},
		{"mutual without root", []string{"--grpc-use-ssl-mutual", "--grpc-server-cert", certs.ServerCert, "--grpc-server-key", certs.ServerKey}, 2,
			[]string{"--grpc-root-cert"}},
		{"boolean value apart", []string{"--grpc-use-ssl", "true"}, 2, []string{"--grpc-use-ssl=true"}},
		{"missing cert file", []string{"--grpc-use-ssl", "--grpc-server-cert", missing, "--grpc-server-key", certs.ServerKey}, 1,
			[]string{"--grpc-server-cert", "missing.pem"}},
		{"missing key file", []string{"--grpc-use-ssl", "--grpc-server-cert", certs.ServerCert, "--grpc-server-key", missing}, 1,
			[]string{"--grpc-server-key", "missing.pem"}},
		{"key of another certificate", []string{"--grpc-use-ssl", "--grpc-server-cert", certs.ServerCert, "--grpc-server-key", certs.ClientKey}, 1,
			[]string{"does not match"}},
		{"cert not PEM", []string{"--grpc-use-ssl", "--grpc-server-cert", notPEM, "--grpc-server-key", certs.ServerKey}, 1,
			[]string{"--grpc-server-cert", "PEM"}},
		{"missing root", ssl("--grpc-use-ssl-mutual", "--grpc-root-cert", missing), 1, []string{"--grpc-root-cert", "missing.pem"}},
		{"root not PEM", ssl("--grpc-use-ssl-mutual", "--grpc-root-cert", notPEM), 1, []string{"--grpc-root-cert", "not.pem", "no PEM certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := slices.Concat(tt.args, []string{"--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"})
			var out, errOut strings.Builder
			done := make(chan int, 1)
			// A case that wrongly starts the server would serve until a
			// signal; the timeout turns that into a failure.
			go func() { done <- runSim(args, &out, &errOut) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("runSim(%q) did not return: it started serving", args)
			}
			msg := errOut.String()
			if code != tt.code || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "tritontop sim: ") {
				t.Errorf("runSim(%q) = %d, stderr %q; want %d and one line", args, code, msg, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "panic") || out.Len() != 0 {
				t.Errorf("stdout %q, stderr %q", out.String(), msg)
			}
		})
	}
}
