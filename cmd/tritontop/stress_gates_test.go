package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// gateRepository is a simulator repository for noise tests: one model of
// 100 ms per request on sixteen CPU instances (nothing shared between
// them, no batching), so a request's latency is mostly the server's: the
// milliseconds a loaded host adds to a request, in the client and in the
// simulator's timers, are small beside it.
const gateRepository = `{"models": [{"name": "gate", "backend": "python", "max_batch_size": 0,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "instance_group": [{"count": 16, "kind": "KIND_CPU"}],
  "latency": {"fixed_us": 100000, "jitter": 0.1},
  "behaviour": "identity"}]}`

// startCPUHogs starts n busy-looping processes, killed when the test
// ends: the loaded CI runner a gate must hold on.
func startCPUHogs(t *testing.T, n int) {
	t.Helper()
	for range n {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatalf("start a CPU hog: %v", err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
}

// TestStressRepeatedRunsWithinNoise is the gate on a loaded 2-core machine:
// with CPU hogs on every core, runs of the same load (five repeats each)
// compared with --fail-if bounds of 10% are within noise and exit 0 in 10
// tries of 10 (each of 11 runs against the next), and a run against the
// simulator made 30% slower (--slowdown 1.3, eight repeats a side) fails
// with exit 99.
//
// The repeats are recorded in turn, one of each run at a time, and joined
// into each run's file (merge --repeats): a shared machine's load changes
// over a minute, and recorded in turn every run sees the same changes. Runs
// recorded one after the other with --repeat 5 compare the machine's
// minutes as well as the runs; that is what this design leaves out.
func TestStressRepeatedRunsWithinNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs for about a minute and a half")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo.json")
	if err := os.WriteFile(repo, []byte(gateRepository), 0o644); err != nil {
		t.Fatal(err)
	}
	fast, _ := startSimProcess(t, bin, nil, "--model-repository", repo)
	slow, _ := startSimProcess(t, bin, nil, "--model-repository", repo, "--slowdown", "1.3")
	startCPUHogs(t, runtime.NumCPU())

	// Eleven runs of five repeats for the ten tries; the last run and the
	// slower one get eight, so that a test of eight against eight can see
	// a 30% change through this machine's noise (five against five needs
	// every repeat of one side past every repeat of the other).
	const runs, repeats, slowRepeats = 11, 5, 8
	names := make([]string, 0, runs+1)
	for i := range runs {
		names = append(names, fmt.Sprintf("run%d", i))
	}
	names = append(names, "slow")
	parts := map[string][]string{}
	for k := 1; k <= slowRepeats; k++ {
		for i, name := range names {
			if k > repeats && i < runs-1 {
				continue
			}
			addr := fast
			if name == "slow" {
				addr = slow
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-r%d.jsonl", name, k))
			code, _, stderr := runBinary(t, bin, "-m", "gate", "-u", addr, "--concurrency", "16", "--duration", "1s",
				"--tick", "250ms", "--headless", "--record", path)
			if code != exitOK {
				t.Fatalf("record %s: exit %d: %s", path, code, lastLines(stderr, 3))
			}
			parts[name] = append(parts[name], path)
		}
	}
	joined := map[string]string{}
	for _, name := range names {
		joined[name] = filepath.Join(dir, name+".jsonl")
		if code, _, stderr := runBinary(t, bin, append([]string{"merge", "--repeats", "-o", joined[name]}, parts[name]...)...); code != exitOK {
			t.Fatalf("merge --repeats %s: exit %d: %s", name, code, stderr)
		}
	}

	// The median, not p99: on a machine this loaded a p99 measures the
	// machine's worst stalls (hundreds of ms beside 100 ms of compute),
	// which no bound of 10% can hold; the median measures the server.
	bounds := []string{"--fail-if", "p50:+10%", "--fail-if", "throughput:-10%"}
	compare := func(a, b string) (int, string) {
		code, stdout, stderr := runBinary(t, bin, append([]string{"compare", joined[a], joined[b]}, bounds...)...)
		return code, stdout + stderr
	}
	failures := 0
	for i := 1; i < runs; i++ {
		code, out := compare(names[i-1], names[i])
		if !strings.Contains(out, "Mann-Whitney U test over the repeats' figures (5 and ") {
			t.Fatalf("try %d: not tested over the repeats:\n%s", i, out)
		}
		if code != exitOK {
			failures++
			t.Errorf("try %d: same load, exit %d:\n%s", i, code, out)
		}
	}
	t.Logf("%d of %d tries within noise", runs-1-failures, runs-1)

	code, out := compare(names[runs-1], "slow")
	if code != exitSLO {
		t.Fatalf("30%% slower simulator: exit %d, want %d:\n%s", code, exitSLO, out)
	}
	if !strings.Contains(out, "significant (mann-whitney): FAIL") {
		t.Errorf("the failing bound is not named:\n%s", out)
	}
	t.Logf("against the slower simulator:\n%s", out[strings.Index(out, "--fail-if:"):])
}
