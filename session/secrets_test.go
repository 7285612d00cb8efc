package session_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// secretsScrape reads the run's Prometheus page while it runs.
func secretsScrape(t *testing.T, r *workersRun) []byte {
	t.Helper()
	url := "http://" + workersPromAddr(t, r) + "/metrics"
	var page []byte
	eventually(t, 20*time.Second, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte("tritontop_")) {
			page = b
		}
		return page != nil
	})
	if page == nil {
		t.Fatal("the Prometheus endpoint never answered")
	}
	return page
}

// TestSecretsInNoFileARunWrites runs a headless load with three credentials
// in headers (one named Authorization, a JWT under a name with no secret
// word, one under a name starting with '-') and a fourth header the user
// asks to record. It then greps every file the run made (run file, CSV,
// CPU profile), the scraped Prometheus page, the HTML report and the
// Markdown and JSON summaries, and both output streams, for each secret:
// none may appear; the recorded header must.
//
// Not parallel: a process has one CPU profile at a time, and parallel
// tests of the package might want theirs.
func TestSecretsInNoFileARunWrites(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	secrets := []string{"S3CRET-bearer-4f1d", "eyJhbGciOiJIUzI1NiJ9.S3CRET-jwt", "S3CRET-dash-77"}
	const visible = "trace-visible-5150"
	runFile, csvFile, profile := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv"), filepath.Join(dir, "cpu.pprof")
	c := quickConfig(srv, "simple")
	c.Concurrency, c.JSON = 2, true
	c.Headers = []string{"Authorization: Bearer " + secrets[0], "X-Jwt: " + secrets[1], "-Dash: " + secrets[2], "X-Trace: " + visible}
	c.Secrets.RecordHeaders = []string{"X-Trace"}
	c.Record, c.CSV, c.CPUProfile = runFile, csvFile, profile
	// The command line, as tritontop passes it, is kept in the run file's
	// header, redacted.
	c.Args = []string{"-m", "simple", "-u", srv.GRPCAddr(), "--concurrency", "2", "--duration", "1s", "--headless",
		"-H", c.Headers[0], "-H", c.Headers[1], "-H", c.Headers[2], "-H", c.Headers[3], "--record-headers", "X-Trace",
		"--record", runFile, "-f", csvFile, "--cpuprofile", profile,
		"--prometheus-addr", "127.0.0.1:0", "--prometheus-scrape-interval", "1m", "--json"}
	// It serves until the test has scraped it and the run is over.
	c.Workers.PrometheusAddr, c.Workers.ScrapeInterval = "127.0.0.1:0", time.Minute
	r := workersStart(t, c)
	// Scrape the Prometheus endpoint while the run goes on.
	writeFile(t, dir, "prometheus.txt", string(secretsScrape(t, r)))
	if !eventually(t, time.Minute, func() bool {
		b, _ := os.ReadFile(runFile)
		return bytes.Contains(b, []byte(`{"type":"summary"`))
	}) {
		t.Fatal("the run file has no summary line after a minute")
	}
	r.stop() // the endpoint's linger
	if err := r.wait(t); err != nil {
		t.Fatalf("run: %v: %s", err, r.stderr.String())
	}
	writeFile(t, dir, "stdout.txt", r.stdout.String())
	writeFile(t, dir, "stderr.txt", r.stderr.String())
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, []report.HTMLRun{{Label: "run", File: runFile, Run: run}}, report.HTMLOptions{}); err != nil {
		t.Fatalf("report: %v", err)
	}
	writeFile(t, dir, "report.html", page.String())
	var md bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: runFile, Markdown: true}, &md, io.Discard); err != nil {
		t.Logf("replay --markdown: %v", err)
	}
	writeFile(t, dir, "replay.md", md.String())

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
	for _, want := range []string{"run.jsonl", "run.csv", "cpu.pprof", "prometheus.txt", "report.html", "stdout.txt", "replay.md"} {
		if fi, err := os.Stat(filepath.Join(dir, want)); err != nil || fi.Size() == 0 {
			t.Errorf("%s was not written (files: %v)", want, names)
		}
	}
	raw, _ := os.ReadFile(runFile)
	if !bytes.Contains(raw, []byte(visible)) || !bytes.Contains(raw, []byte("X-Jwt: REDACTED")) {
		t.Errorf("the run file should keep the header --record-headers names and redact the others")
	}
}

// TestSecretsRefusedWithoutEcho: a credential given where it would be
// printed (user information in a URL, a malformed header) is refused as a
// usage error (exit 2) before anything runs, and neither the message nor
// the run's output holds it.
func TestSecretsRefusedWithoutEcho(t *testing.T) {
	t.Parallel()
	const secret = "pw-S3CRET-91"
	for _, tc := range []struct {
		name string
		set  func(c *session.Config)
		want string
	}{
		{"user:password in -u", func(c *session.Config) { c.URLs = []string{"user:" + secret + "@triton:8001"} }, "user information"},
		{"user:password with a scheme", func(c *session.Config) { c.URLs = []string{"grpc://user:" + secret + "@triton:8001"} }, "user information"},
		{"http user:password", func(c *session.Config) {
			c.Protocol, c.URLs = "http", []string{"http://user:" + secret + "@triton:8000"}
		}, "user information"},
		{"password only", func(c *session.Config) { c.URLs = []string{"https://:" + secret + "@triton"} }, "user information"},
		{"user only", func(c *session.Config) { c.URLs = []string{secret + "@triton:8001"} }, "user information"},
		{"bad scheme and user info", func(c *session.Config) { c.URLs = []string{"ftp://u:" + secret + "@h"} }, "user information"},
		{"second -u has user info", func(c *session.Config) { c.URLs = []string{"a:8001", "u:" + secret + "@b:8001"} }, "user information"},
		{"metrics URL user info", func(c *session.Config) { c.MetricsURLs = []string{"http://u:" + secret + "@h:8002/metrics"} }, "--metrics-url"},
		{"header without a colon", func(c *session.Config) { c.Headers = []string{"Bearer " + secret} }, "KEY:VALUE"},
		{"header with an empty name", func(c *session.Config) { c.Headers = []string{": " + secret} }, "KEY:VALUE"},
		{"header value with a control character", func(c *session.Config) { c.Headers = []string{"Authorization: Bearer " + secret + "\x01"} }, "control characters"},
		{"header value with a newline", func(c *session.Config) { c.Headers = []string{"X-Jwt: " + secret + "\nX-Other: 1"} }, "control characters"},
		{"header name with a space", func(c *session.Config) { c.Headers = []string{"X Api: " + secret} }, "cannot have"},
		{"gRPC reserved header", func(c *session.Config) { c.Headers = []string{"grpc-timeout: " + secret} }, "gRPC's own"},
		{"gRPC header name with a colon-free typo", func(c *session.Config) { c.Headers = []string{"Authorization=Bearer " + secret} }, "KEY:VALUE"},
		{"--record-headers names no header", func(c *session.Config) {
			c.Headers, c.Secrets.RecordHeaders = []string{"X-Jwt: " + secret}, []string{"X-Other"}
		}, "no -H gives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := session.Defaults()
			c.Model, c.Headless, c.Duration = "simple", true, time.Second
			tc.set(&c)
			err, stdout, stderr := runConfig(t, c)
			wantRefused(t, err, tc.want)
			if err != nil && strings.Contains(err.Error()+stdout+stderr, secret) {
				t.Fatalf("the secret is echoed: %q", err.Error()+stdout+stderr)
			}
		})
	}
}
