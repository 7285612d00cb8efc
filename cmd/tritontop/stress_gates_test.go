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
// 20 ms per request on eight CPU instances (nothing shared between them, no
// batching), so a request's latency is mostly the server's and the
// client's CPU on a loaded host matters little.
const gateRepository = `{"models": [{"name": "gate", "backend": "python", "max_batch_size": 0,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "instance_group": [{"count": 8, "kind": "KIND_CPU"}],
  "latency": {"fixed_us": 20000, "jitter": 0.1},
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
// with CPU hogs on every core, runs of the same load (--repeat 5 each)
// compared with --fail-if bounds of 10% are within noise and exit 0 in 10
// tries of 10 (each run against the next of 11 runs), and a run against the
// simulator made 30% slower (--slowdown 1.3) fails with exit 99.
func TestStressRepeatedRunsWithinNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs for about two minutes")
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

	record := func(name, addr string) string {
		path := filepath.Join(dir, name+".jsonl")
		code, _, stderr := runBinary(t, bin, "-m", "gate", "-u", addr, "--concurrency", "8", "--duration", "1s",
			"--tick", "250ms", "--repeat", "5", "--repeat-pause", "200ms", "--headless", "--record", path)
		if code != exitOK {
			t.Fatalf("record %s: exit %d: %s", name, code, lastLines(stderr, 3))
		}
		return path
	}
	bounds := []string{"--fail-if", "p99:+10%", "--fail-if", "throughput:-10%"}
	compare := func(a, b string) (int, string) {
		code, stdout, stderr := runBinary(t, bin, append([]string{"compare", a, b}, bounds...)...)
		return code, stdout + stderr
	}

	runs := []string{record("run0", fast)}
	failures := 0
	for i := 1; i <= 10; i++ {
		runs = append(runs, record(fmt.Sprintf("run%d", i), fast))
		code, out := compare(runs[i-1], runs[i])
		if !strings.Contains(out, "Mann-Whitney U test over the repeats' figures (5 and 5 repeats)") {
			t.Fatalf("try %d: not tested over the repeats:\n%s", i, out)
		}
		if code != exitOK {
			failures++
			t.Errorf("try %d: same load, exit %d:\n%s", i, code, out)
		}
	}
	t.Logf("%d of 10 tries within noise", 10-failures)

	slowRun := record("slow", slow)
	code, out := compare(runs[len(runs)-1], slowRun)
	if code != exitSLO {
		t.Fatalf("30%% slower simulator: exit %d, want %d:\n%s", code, exitSLO, out)
	}
	if !strings.Contains(out, "significant (mann-whitney): FAIL") {
		t.Errorf("the failing bound is not named:\n%s", out)
	}
}
