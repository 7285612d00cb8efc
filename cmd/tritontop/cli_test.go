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
// ports, the way the command's tests meet a server.
func startSim(t *testing.T) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 100 * time.Millisecond},
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

// TestExitCodes: every subcommand maps what went wrong to its exit code, 2
// for bad input (a flag its parser refuses, or a setting the library
// refuses), 1 for a failed run, 99 for a verdict, 0 otherwise, and says it
// in one line (a flag's error with a hint line after), never a stack
// trace. What each setting means is tested where it lives (session,
// report, sim); this is the command line around it.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "run.jsonl")
	notARun := filepath.Join(dir, "notarun.jsonl")
	os.WriteFile(notARun, []byte("hello\n"), 0o644)
	m := []string{"-m", "simple", "-u", srv.GRPCAddr(), "--tick", "100ms"}
	with := func(extra ...string) []string { return append(append([]string{}, m...), extra...) }
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"a run", with("--duration", "300ms", "--record", run), 0, nil},
		{"version", []string{"version"}, 0, []string{"tritontop"}},
		// The flag package's refusals, with the hint line.
		{"unknown flag", with("--bogus"), 2, []string{"-bogus"}},
		{"unexpected argument", with("extra"), 2, []string{"extra", "flags go before it"}},
		{"concurrency NaN", with("--concurrency", "NaN"), 2, []string{"NaN", "-concurrency"}},
		{"a refused perf_analyzer flag", with("--service-kind", "openai"), 2, []string{"--service-kind openai is not supported"}},
		{"a refused perf_analyzer value", with("--request-count", "5"), 2, []string{"--request-count is not supported", "--duration"}},
		// A setting the session refuses, before any connection.
		{"no model", []string{"-u", srv.GRPCAddr()}, 2, []string{"-m MODEL"}},
		{"concurrency 0", with("--concurrency", "0"), 2, []string{"--concurrency 0", "1 to 16384"}},
		{"unknown model lists models", []string{"-m", "nosuch", "-u", srv.GRPCAddr()}, 2, []string{"nosuch", "resnet50", "simple"}},
		// A run that fails.
		{"unreachable URL", []string{"-m", "simple", "-u", "127.0.0.1:1", "--connect-timeout", "200ms"}, 1, []string{"127.0.0.1:1"}},
		// A verdict.
		{"threshold breached", with("--duration", "300ms", "--threshold", "p99<1us"), 99, []string{"p99"}},
		// The other subcommands.
		{"demo concurrency 0", []string{"demo", "--concurrency", "0"}, 2, []string{"--concurrency 0"}},
		{"demo GPU rate negative", []string{"demo", "--demo-gpu-rate", "-5"}, 2, []string{"--demo-gpu-rate", "auto or full"}},
		{"plan without SLO", []string{"plan", "--demo", "--target-rate", "100"}, 2, []string{"--slo"}},
		{"plan without a model", []string{"plan", "--slo", "p99:100ms", "--target-rate", "100"}, 2, []string{"-m MODEL"}},
		{"sim bad port", []string{"sim", "--grpc-port", "99999"}, 2, []string{"99999"}},
		{"sim unknown flag", []string{"sim", "--bogus"}, 2, []string{"-bogus"}},
		{"sim --cpuprofile exists", []string{"sim", "--cpuprofile", notARun, "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"}, 2, []string{"already exists"}},
		{"replay two files", []string{"replay", notARun, notARun}, 2, []string{"one run file"}},
		{"replay not a run file", []string{"replay", notARun}, 2, []string{"notarun.jsonl"}},
		{"replay flags after the file", []string{"replay", notARun, "--speed", "-1"}, 2, []string{"--speed"}},
		{"report without -o", []string{"report", notARun}, 2, []string{"-o"}},
		{"report bad flag", []string{"report", notARun, "--nope"}, 2, []string{"nope"}},
		{"compare one file", []string{"compare", notARun}, 2, []string{"two"}},
		{"merge without -o", []string{"merge", notARun, notARun}, 2, []string{"-o FILE"}},
		{"capture without upstream", []string{"capture", "-o", filepath.Join(dir, "t.jsonl")}, 2, []string{"--upstream"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(c.args...)
			if code != c.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, c.code, stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in output: %s", stderr)
			}
			if c.code == 0 {
				for _, w := range c.want {
					if !strings.Contains(stdout, w) {
						t.Errorf("stdout %q lacks %q", stdout, w)
					}
				}
				return
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if c.code == 2 && (len(lines) > 2 || len(lines) == 2 && !strings.HasSuffix(lines[1], " -h for help")) {
				t.Errorf("stderr is not one line and a hint:\n%s", stderr)
			}
			last := lines[len(lines)-1]
			if c.code == 2 && len(lines) == 2 {
				last = lines[0]
			}
			if prefix, _, _ := strings.Cut(last, ": "); prefix != "tritontop" && !strings.HasPrefix(prefix, "tritontop ") {
				t.Errorf("error line %q does not start with tritontop's name", last)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("error line %q does not mention %q", last, w)
				}
			}
			if c.code == 2 && stdout != "" {
				t.Errorf("stdout not empty on a refusal: %q", stdout)
			}
		})
	}
}

// TestHelpListsLoadFlags: `tritontop -h` (what the README points to) lists
// the load flags, with exit code 0.
func TestHelpListsLoadFlags(t *testing.T) {
	t.Parallel()
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
