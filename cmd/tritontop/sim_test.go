package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testcerts"
	"github.com/tritontop/tritontop/internal/testproc"

	"github.com/tritontop/tritontop/triton"
)

// TestSimCommandServesAndStopsOnSignals builds the real binary, runs
// `tritontop sim` on free ports, talks to it, and stops it: once with
// SIGINT in plaintext, once with SIGTERM serving gRPC over mutual TLS.
func TestSimCommandServesAndStopsOnSignals(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	t.Run("SIGINT", func(t *testing.T) {
		cmd, addrs, stderr := startSimCommand(t, bin)
		for _, proto := range []string{"grpc", "http"} {
			addr := addrs["gRPC"]
			if proto == "http" {
				addr = addrs["HTTP"]
			}
			checkLive(t, addr, triton.Options{Protocol: proto})
		}
		stopSimCommand(t, cmd, syscall.SIGINT, stderr)
	})
	t.Run("example repository, explicit model control", func(t *testing.T) {
		cmd, addrs, stderr := startSimCommand(t, bin, "--model-repository", "examples",
			"--model-control-mode", "explicit", "--load-model", "simple_sequence", "--load-model", "simple_string")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for _, proto := range []string{"grpc", "http"} {
			addr := addrs["gRPC"]
			if proto == "http" {
				addr = addrs["HTTP"]
			}
			c, err := triton.Dial(ctx, addr, triton.Options{Protocol: proto})
			if err != nil {
				t.Fatal(err)
			}
			all, err := c.RepositoryIndex(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			ready, err := c.RepositoryIndex(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			var names []string
			for _, m := range ready {
				names = append(names, m.GetName())
			}
			if len(all) != 8 || strings.Join(names, ",") != "simple_sequence,simple_string" {
				t.Errorf("%s: %d models, ready %v; want 8 and simple_sequence,simple_string", proto, len(all), names)
			}
		}
		stopSimCommand(t, cmd, syscall.SIGINT, stderr)
	})
	t.Run("SIGTERM", func(t *testing.T) {
		certs := testcerts.New(t)
		cmd, addrs, stderr := startSimCommand(t, bin, "--grpc-use-ssl-mutual",
			"--grpc-server-cert", certs.ServerCert, "--grpc-server-key", certs.ServerKey, "--grpc-root-cert", certs.CA)
		checkLive(t, addrs["gRPC"], triton.Options{TLS: &triton.TLSOptions{
			CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey,
		}})
		checkLive(t, addrs["HTTP"], triton.Options{Protocol: "http"})
		stopSimCommand(t, cmd, syscall.SIGTERM, stderr)
	})
}

// TestSimPrintsItsMemoryBudget: tritontop sim says its memory budget at
// start, with where it comes from and what a request past it gets: the
// one --memory-budget (or an old name) gives, or the default and how it
// was derived.
func TestSimPrintsItsMemoryBudget(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--memory-budget", "64MiB"}, []string{"64.0 MiB (67108864 bytes) for requests at once, gRPC and HTTP (--memory-budget)",
			"past it gRPC answers RESOURCE_EXHAUSTED, HTTP 503"}},
		{[]string{"--grpc-budget", "134217728"}, []string{"128.0 MiB (134217728 bytes)", "(--memory-budget)"}},
		{nil, []string{"(the default: half of ", "once 256.0 MiB is set aside; --memory-budget sets it)", "HTTP 503"}},
	} {
		t.Run(strings.Join(append([]string{"sim"}, tc.args...), " "), func(t *testing.T) {
			cmd, out, stderr := startSimCommand(t, bin, tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(out["budget"], w) {
					t.Errorf("budget line %q lacks %q", out["budget"], w)
				}
			}
			stopSimCommand(t, cmd, syscall.SIGINT, stderr)
		})
	}
}

// startSimCommand starts `tritontop sim` on free ports and returns it once
// it says it is ready, with the addresses it printed.
func startSimCommand(t *testing.T, bin string, args ...string) (*exec.Cmd, map[string]string, *strings.Builder) {
	t.Helper()
	cmd := testproc.Command(bin, append([]string{"sim", "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}

	addrs := map[string]string{}
	lines := bufio.NewScanner(stdout)
	ready := false
	for !ready && lines.Scan() {
		line := lines.Text()
		if line == "simulated Triton (tritontop simulator) ready" {
			ready = true
			break
		}
		if f := strings.Fields(line); len(f) == 2 {
			addrs[f[0]] = f[1]
		}
		if b, ok := strings.CutPrefix(line, "budget "); ok {
			addrs["budget"] = strings.TrimSpace(b)
		}
	}
	if !ready || addrs["gRPC"] == "" || addrs["HTTP"] == "" || addrs["metrics"] == "" || addrs["budget"] == "" {
		t.Fatalf("startup output: %v (ready %v); stderr: %s", addrs, ready, stderr.String())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return cmd, addrs, stderr
}

// checkLive dials addr and asks whether the server is live.
func checkLive(t *testing.T, addr string, opts triton.Options) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := triton.Dial(ctx, addr, opts)
	if err != nil {
		t.Fatalf("Dial %s: %v", addr, err)
	}
	live, err := c.ServerLive(ctx)
	c.Close()
	if err != nil || !live {
		t.Fatalf("%s ServerLive = %v, %v", addr, live, err)
	}
}

// stopSimCommand sends sig and wants a clean exit: status 0, nothing on
// stderr, within a bound well above the simulator's drain timeout.
func stopSimCommand(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, stderr *strings.Builder) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || stderr.Len() != 0 {
			t.Fatalf("exit after %v: %v; stderr: %s", sig, err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("tritontop sim did not stop within 15 s of %v", sig)
	}
}

// TestSimCommandBadFlags: each bad flag of `tritontop sim` is exit 2 and
// one line.
func TestSimCommandBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--grpc-port", "70000"},
		{"--error-rate", "2"},
		{"--stall-after", "1s"},
		{"extra"},
		{"--model-control-mode", "sometimes"},
		{"--load-model", "simple"},
		{"--model-repository", "examples", "--model-control-mode", "explicit", "--load-model", "resnet"},
		{"--http-max-input-size", "0"},
		{"--http-max-input-size", "-1"},
		{"--http-max-input-size", "4294967296"},
		{"--http-max-buffered-bytes", "-5"},
		{"--http-max-input-size", "1000", "--http-max-buffered-bytes", "999"},
		{"--grpc-max-input-size", "0"},
		{"--grpc-max-input-size", "2147483648"},
		{"--grpc-budget", "-1"},
		{"--grpc-max-input-size", "1000", "--grpc-budget", "999"},
		{"--grpc-budget", "1000"},
		{"--gpus", "100000"},
		{"--gpus", "65"},
		{"--stall-for", "1s"},
	} {
		var out, errOut strings.Builder
		code := runSim(args, &out, &errOut)
		msg := errOut.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "tritontop sim: ") {
			t.Errorf("runSim(%q) = %d, stderr %q; want 2 and one line", args, code, msg)
		}
	}
	var out, errOut strings.Builder
	if code := runSim([]string{"--model-repository", filepath.Join(t.TempDir(), "missing.json"), "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "missing.json") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("missing repository: code %d, stderr %q", code, errOut.String())
	}
}

// TestSimTLSFlags: bad TLS flags of `tritontop sim` get one line; mistakes
// in the flags themselves exit 2, files that cannot be used exit 1, like
// the simulator's other flags and its --model-repository file.
func TestSimTLSFlags(t *testing.T) {
	t.Parallel()
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

// TestSimAllowClientShmFlag: client shared memory is off unless
// --allow-client-shm (tritonserver's flag, which takes =true) turns it on.
func TestSimAllowClientShmFlag(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--allow-client-shm"}, true}, {[]string{"--allow-client-shm=true"}, true}, {[]string{"--allow-client-shm=false"}, false}} {
		var o simOptions
		var out, errOut strings.Builder
		if code, done := parseSimFlags(&o, tt.args, &out, &errOut); done {
			t.Fatalf("%q: exit %d: %s", tt.args, code, errOut.String())
		}
		cfg, code := o.simConfig(&errOut)
		if cfg == nil {
			t.Fatalf("%q: exit %d: %s", tt.args, code, errOut.String())
		}
		if cfg.Engine.AllowClientShm != tt.want {
			t.Errorf("%q: AllowClientShm %t, want %t", tt.args, cfg.Engine.AllowClientShm, tt.want)
		}
	}
}
