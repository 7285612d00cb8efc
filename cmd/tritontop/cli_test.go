package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// startSim starts the simulator with its demo models on free loopback
// ports, the way every CLI test meets a server.
func startSim(t *testing.T) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// runCLI runs tritontop in-process and returns its exit code and output.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestBadInput: each kind of bad input gets one clear line and exit code 2
// (usage) or 1 (run failed), never a panic, and nothing is left half done.
func TestBadInput(t *testing.T) {
	srv := startSim(t)
	grpcURL, httpURL := srv.GRPCAddr(), srv.HTTPAddr()
	dir := t.TempDir()
	missingInput := filepath.Join(dir, "missing.json")
	os.WriteFile(missingInput, []byte(`{"data":[{"INPUT0":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`), 0o644)
	shortInput := filepath.Join(dir, "short.json")
	os.WriteFile(shortInput, []byte(`{"data":[{"INPUT0":[1,2,3],"INPUT1":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`), 0o644)

	cases := []struct {
		name string
		args []string
		code int
		want []string // all must appear in the error line
	}{
		{"no model", []string{"-u", grpcURL}, 2, []string{"-m MODEL"}},
		{"unknown model lists models", []string{"-m", "nosuch", "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"nosuch", "resnet50", "simple", "identity"}},
		{"unknown model over HTTP", []string{"-m", "nosuch", "-i", "http", "-u", httpURL, "--duration", "1s"}, 2,
			[]string{"nosuch", "resnet50"}},
		{"bad shape says expected dims", []string{"-m", "bert", "-u", grpcURL, "--shape", "input_ids:a,b", "--duration", "1s"}, 2,
			[]string{"input_ids"}},
		{"variable dims need --shape", []string{"-m", "bert", "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"--shape"}},
		{"batch above max_batch_size", []string{"-m", "simple", "-u", grpcURL, "-b", "16", "--duration", "1s"}, 2,
			[]string{"16", "max_batch_size 8"}},
		{"input JSON missing an input", []string{"-m", "simple", "-u", grpcURL, "--input-data", missingInput, "--duration", "1s"}, 2,
			[]string{"INPUT1"}},
		{"input JSON wrong element count", []string{"-m", "simple", "-u", grpcURL, "--input-data", shortInput, "--duration", "1s"}, 2,
			[]string{"INPUT0", "16"}},
		{"unreachable URL", []string{"-m", "simple", "-u", "127.0.0.1:1", "--connect-timeout", "1s"}, 1,
			[]string{"127.0.0.1:1"}},
		{"unknown protocol", []string{"-m", "simple", "-i", "udp"}, 2, []string{"grpc or http"}},
		{"rate and concurrency", []string{"-m", "simple", "--concurrency", "2", "--request-rate", "5"}, 2, []string{"not both"}},
		{"bad distribution", []string{"-m", "simple", "--request-rate", "5", "--request-distribution", "gamma"}, 2, []string{"constant or poisson"}},
		{"bad header", []string{"-m", "simple", "-H", "novalue"}, 2, []string{"KEY:VALUE"}},
		{"bad range", []string{"-m", "simple", "--concurrency-range", "4:2"}, 2, []string{"END is below START"}},
		{"missing TLS CA file", []string{"-m", "simple", "-u", grpcURL, "--ssl-ca", filepath.Join(dir, "ca.pem")}, 2, []string{"--ssl-ca", "ca.pem"}},
		{"replay missing file", []string{"replay", filepath.Join(dir, "nope.jsonl")}, 2, []string{"nope.jsonl"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runCLI(c.args...)
			if code != c.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, c.code, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "tritontop: ") {
				t.Errorf("error line %q does not start with \"tritontop: \"", last)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("error line %q does not mention %q", last, w)
				}
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in output: %s", stderr)
			}
			if stdout != "" && c.code != 0 {
				t.Errorf("stdout not empty on error: %q", stdout)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestHelpListsLoadFlags: `tritontop -h` (what the README points to) lists
// the load flags, with exit code 0.
func TestHelpListsLoadFlags(t *testing.T) {
	code, stdout, _ := runCLI("-h")
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{"tritontop demo", "-concurrency", "-request-rate", "-record", "-max-inflight"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
