package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// snapshotLines counts the tick lines written so far to a run file.
func snapshotLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte(`"type":"snapshot"`))
}

// waitSnapshots waits until the run file holds n ticks.
func waitSnapshots(t *testing.T, path string, n int, capture func() string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if snapshotLines(path) >= n {
			return
		}
	}
	t.Fatalf("the run file never held %d ticks:\n%s", n, capture())
}

// TestPausedThroughputInTmux pauses a dashboard run with p for a third of
// its length: the summary's throughput is over the time load was applied,
// so it agrees with Little's law (requests in flight over average latency)
// and with requests over the unpaused time, and the paused time is stated.
func TestPausedThroughputInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (CI installs it)")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	bin := buildBinary(t)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	const conc = 8
	tmux, capture, exit := tmuxRun(t, bin, "paused", "demo", "--concurrency", "8", "--tick", "500ms",
		"--duration", "9s", "--record", file)
	waitSnapshots(t, file, 6, capture)
	tmux("send-keys", "-t", "demo", "p")
	waitSnapshots(t, file, 12, capture)
	tmux("send-keys", "-t", "demo", "p")
	waitSnapshots(t, file, 18, capture)
	// The run ends by itself after --duration; q then only reads the status.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if run, err := record.ReadAll(file); err == nil && run.Summary != nil {
			break
		}
	}
	if code := exit(); code != "0" {
		t.Fatalf("demo exited with %s:\n%s", code, capture())
	}
	run, err := record.ReadAll(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := run.Summary
	if sum == nil {
		t.Fatal("the run file has no summary")
	}
	share := sum.Paused.Seconds() / sum.Duration.Seconds()
	if share < 0.2 || share > 0.5 {
		t.Fatalf("paused %v of %v (%.0f%%), want about a third: the pause was not recorded", sum.Paused, sum.Duration, 100*share)
	}
	c := sum.Client
	little := conc / c.Latency.Mean.Seconds()
	if d := math.Abs(c.RequestsPerS-little) / little; d > 0.10 {
		t.Errorf("throughput %.1f/s, Little's law %d / %v = %.1f/s: %.1f%% apart", c.RequestsPerS, conc, c.Latency.Mean, little, 100*d)
	}
	unpaused := (sum.Duration - sum.Paused).Seconds()
	perUnpaused := float64(c.Requests) / unpaused
	t.Logf("paused %v of %v; %.1f req/s, Little's law %.1f, requests / unpaused %.1f, over the whole run %.1f",
		sum.Paused, sum.Duration, c.RequestsPerS, little, perUnpaused, float64(c.Requests)/sum.Duration.Seconds())
	if d := math.Abs(c.RequestsPerS-perUnpaused) / perUnpaused; d > 0.02 {
		t.Errorf("throughput %.1f/s, requests / unpaused time %d / %.2fs = %.1f/s: %.1f%% apart", c.RequestsPerS, c.Requests, unpaused, perUnpaused, 100*d)
	}
	// Each tick's rate is over its own unpaused part, and the ticks'
	// pauses add up to the summary's.
	var paused time.Duration
	for _, s := range run.Snapshots {
		paused += s.Paused
		if s.Tick.Duration != s.Interval-s.Paused {
			t.Errorf("tick %d: duration %v, want interval %v less paused %v", s.Seq, s.Tick.Duration, s.Interval, s.Paused)
		}
	}
	if paused != sum.Paused {
		t.Errorf("ticks paused %v in all, summary says %v", paused, sum.Paused)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, *sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "paused ") {
		t.Errorf("the text summary does not state the paused time:\n%s", text.String())
	}
}
