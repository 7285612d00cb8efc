package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecretsInNoFileARunWrites runs a headless load with three credentials
// in headers (one named Authorization, a JWT under a name with no secret
// word, one under a name starting with '-') and a fourth header the user
// asks to record. It then greps every file the run made (run file, CSV,
// CPU profile), the scraped Prometheus page, the HTML report and the
// Markdown and JSON summaries, and both output streams, for each secret:
// none may appear; the recorded header must.
func TestSecretsInNoFileARunWrites(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	secrets := []string{"S3CRET-bearer-4f1d", "eyJhbGciOiJIUzI1NiJ9.S3CRET-jwt", "S3CRET-dash-77"}
	const visible = "trace-visible-5150"
	runFile, csvFile, profile := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv"), filepath.Join(dir, "cpu.pprof")
	promAddr := freePort(t)
	args := []string{"-m", "simple", "-u", srv.GRPCAddr(), "--concurrency", "2", "--duration", "2s", "--headless",
		"-H", "Authorization: Bearer " + secrets[0], "-H", "X-Jwt: " + secrets[1], "-H", "-Dash: " + secrets[2],
		"-H", "X-Trace: " + visible, "--record-headers", "X-Trace",
		"--record", runFile, "-f", csvFile, "--cpuprofile", profile,
		"--prometheus-addr", promAddr, "--prometheus-scrape-interval", "1s", "--json"}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI(args...)
		done <- result{code, stdout, stderr}
	}()
	// Scrape the worker's Prometheus endpoint while the run goes on.
	var page []byte
	for deadline := time.Now().Add(20 * time.Second); page == nil && time.Now().Before(deadline); {
		resp, err := http.Get("http://" + promAddr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte("tritontop_")) {
				page = b
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if page == nil {
		t.Fatal("the Prometheus endpoint never answered")
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.txt"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	writeFile := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("stdout.txt", r.stdout)
	writeFile("stderr.txt", r.stderr)
	if code, _, stderr := runCLI("report", "-o", filepath.Join(dir, "report.html"), runFile); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	code, md, stderr := runCLI("replay", "--summary", "--markdown", runFile)
	if code != 0 {
		code, md, stderr = runCLI("replay", "--markdown", runFile)
	}
	if code != 0 {
		t.Logf("replay --markdown: exit %d: %s", code, stderr)
	}
	writeFile("replay.md", md)

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %q", e.Name(), s)
			}
		}
	}
	for _, want := range []string{"run.jsonl", "run.csv", "cpu.pprof", "prometheus.txt", "report.html", "stdout.txt"} {
		if fi, err := os.Stat(filepath.Join(dir, want)); err != nil || fi.Size() == 0 {
			t.Errorf("%s was not written (files: %v)", want, names)
		}
	}
	run, _ := os.ReadFile(runFile)
	if !bytes.Contains(run, []byte(visible)) || !bytes.Contains(run, []byte("X-Jwt: REDACTED")) {
		t.Errorf("the run file should keep the header --record-headers names and redact the others")
	}
}

// TestSecretsRefusedWithoutEcho: a credential given where it would be
// printed (user information in a URL, a malformed header) is refused with
// exit 2 before anything runs, and the message does not hold it.
func TestSecretsRefusedWithoutEcho(t *testing.T) {
	const secret = "pw-S3CRET-91"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"user:password in -u", []string{"-u", "user:" + secret + "@triton:8001"}, "user information"},
		{"user:password with a scheme", []string{"-u", "grpc://user:" + secret + "@triton:8001"}, "user information"},
		{"http user:password", []string{"-i", "http", "-u", "http://user:" + secret + "@triton:8000"}, "user information"},
		{"password only", []string{"-u", "https://:" + secret + "@triton"}, "user information"},
		{"user only", []string{"-u", secret + "@triton:8001"}, "user information"},
		{"bad scheme and user info", []string{"-u", "ftp://u:" + secret + "@h"}, "user information"},
		{"second -u has user info", []string{"-u", "a:8001", "-u", "u:" + secret + "@b:8001"}, "user information"},
		{"metrics URL user info", []string{"--metrics-url", "http://u:" + secret + "@h:8002/metrics"}, "--metrics-url"},
		{"header without a colon", []string{"-H", "Bearer " + secret}, "KEY:VALUE"},
		{"header with an empty name", []string{"-H", ": " + secret}, "KEY:VALUE"},
		{"header value with a control character", []string{"-H", "Authorization: Bearer " + secret + "\x01"}, "control characters"},
		{"header value with a newline", []string{"-H", "X-Jwt: " + secret + "\nX-Other: 1"}, "control characters"},
		{"header name with a space", []string{"-H", "X Api: " + secret}, "cannot have"},
		{"gRPC reserved header", []string{"-H", "grpc-timeout: " + secret}, "gRPC's own"},
		{"gRPC header name with a colon-free typo", []string{"-H", "Authorization=Bearer " + secret}, "KEY:VALUE"},
		{"--record-headers names no header", []string{"-H", "X-Jwt: " + secret, "--record-headers", "X-Other"}, "no -H gives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-m", "simple", "--headless", "--duration", "1s"}, tc.args...)
			code, stdout, stderr := runCLI(args...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != 2 || !strings.Contains(first, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and a first line with %q", code, stderr, tc.want)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Fatalf("the secret is echoed: %q", stdout+stderr)
			}
		})
	}
}
