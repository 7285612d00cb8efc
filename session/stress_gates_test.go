package session_test

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/sim"
)

// stressGateRepository is a simulator repository for noise tests: one
// model of 100 ms per request on sixteen CPU instances (nothing shared
// between them, no batching), so a request's latency is mostly the
// server's: the milliseconds a loaded host adds to a request, in the
// client and in the simulator's timers, are small beside it.
const stressGateRepository = `{"models": [{"name": "gate", "backend": "python", "max_batch_size": 0,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "instance_group": [{"count": 16, "kind": "KIND_CPU"}],
  "latency": {"fixed_us": 100000, "jitter": 0.1},
  "behaviour": "identity"}]}`

// TestStressRepeatedRunsWithinNoise is the gate on a loaded machine: with
// CPU hogs on every core, runs of the same load (five repeats each)
// compared with --fail-if bounds of 10% are within noise (compare's exit
// 0) in 10 tries of 10 (each of 11 runs against the next), and a run
// against the simulator made 30% slower (Slowed(1.3), eight repeats a
// side) breaks a bound (compare's exit 99).
//
// The repeats are recorded in turn, one of each run at a time, and joined
// into each run's file (merge --repeats): a shared machine's load changes
// over a minute, and recorded in turn every run sees the same changes. Runs
// recorded one after the other with --repeat 5 compare the machine's
// minutes as well as the runs; that is what this design leaves out.
func TestStressRepeatedRunsWithinNoise(t *testing.T) {
	testenv.Stress(t)
	dir := t.TempDir()
	repo, err := sim.LoadRepository(writeFile(t, dir, "repo.json", stressGateRepository))
	if err != nil {
		t.Fatal(err)
	}
	slowRepo, err := repo.Slowed(1.3)
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := startSimRepo(t, repo), startSimRepo(t, slowRepo)
	testenv.LoadHost(t, runtime.NumCPU())

	// Eleven runs of five repeats for the ten tries; the last run and the
	// slower one get eight, so that a test of eight against eight can see
	// a 30% change through this machine's noise (five against five needs
	// every repeat of one side past every repeat of the other).
	const runs = 11
	names := make([]string, 0, runs+1)
	for i := range runs {
		names = append(names, fmt.Sprintf("run%d", i))
	}
	names = append(names, "slow")
	parts := stressRecordInTurn(t, dir, names, fast, slow)
	joined := map[string]string{}
	for _, name := range names {
		joined[name] = filepath.Join(dir, name+".jsonl")
		if err := report.JoinRepeats(parts[name], joined[name], io.Discard, io.Discard); err != nil {
			t.Fatalf("merge --repeats %s: %v", name, err)
		}
	}

	// The median, not p99: on a machine this loaded a p99 measures the
	// machine's worst stalls (hundreds of ms beside 100 ms of compute),
	// which no bound of 10% can hold; the median measures the server.
	bounds := []string{"p50:+10%", "throughput:-10%"}
	failures := 0
	for i := 1; i < runs; i++ {
		out, broken := repeatCompare(t, joined[names[i-1]], joined[names[i]], false, bounds...)
		if !strings.Contains(out, "Mann-Whitney U test over the repeats' figures (5 and ") {
			t.Fatalf("try %d: not tested over the repeats:\n%s", i, out)
		}
		if broken != 0 {
			failures++
			t.Errorf("try %d: same load, %d bounds broken (exit 99):\n%s", i, broken, out)
		}
	}
	t.Logf("%d of %d tries within noise", runs-1-failures, runs-1)

	out, broken := repeatCompare(t, joined[names[runs-1]], joined["slow"], false, bounds...)
	if broken == 0 {
		t.Fatalf("30%% slower simulator: no bound broken (exit 0), want exit 99:\n%s", out)
	}
	if !strings.Contains(out, "significant (mann-whitney): FAIL") {
		t.Errorf("the failing bound is not named:\n%s", out)
	}
	if i := strings.Index(out, "--fail-if:"); i >= 0 {
		t.Logf("against the slower simulator:\n%s", out[i:])
	}
}

// stressLastLines is the last n lines of s.
func stressLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stressRecordInTurn records the repeats of the runs named, one of each
// run at a time: five of each, eight of the last two (the last against
// slow, the others against fast). It returns each run's files.
func stressRecordInTurn(t *testing.T, dir string, names []string, fast, slow *sim.Server) map[string][]string {
	t.Helper()
	const repeats, slowRepeats = 5, 8
	parts := map[string][]string{}
	for k := 1; k <= slowRepeats; k++ {
		for i, name := range names {
			if k > repeats && i < len(names)-2 {
				continue
			}
			srv := fast
			if i == len(names)-1 {
				srv = slow
			}
			c := quickConfig(srv, "gate")
			c.Concurrency, c.Tick = 16, 250*time.Millisecond
			c.Record = filepath.Join(dir, fmt.Sprintf("%s-r%d.jsonl", name, k))
			if err, _, stderr := runConfig(t, c); err != nil {
				t.Fatalf("record %s: %v: %s", c.Record, err, stressLastLines(stderr, 3))
			}
			parts[name] = append(parts[name], c.Record)
		}
	}
	return parts
}
