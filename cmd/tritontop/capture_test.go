package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritontop/tritontop/trace"
)

// startCapture runs tritontop capture in front of upstream until the test
// stops it, and returns its address and a stop that waits for it and gives
// its exit code and output.
func startCapture(t *testing.T, upstream, out string, extra ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var stdout, stderr bytes.Buffer
	var code int
	var wg sync.WaitGroup
	wg.Go(func() {
		args := append([]string{"--listen", "127.0.0.1:0", "--upstream", upstream, "-o", out}, extra...)
		code = captureUntil(ctx, args, &stdout, &stderr, func(a string) { ready <- a })
		close(ready)
	})
	a, ok := <-ready
	if !ok {
		cancel()
		wg.Wait()
		t.Fatalf("capture did not start: exit %d: %s", code, stderr.String())
	}
	var once sync.Once
	stop = func() (int, string) {
		once.Do(func() { cancel(); wg.Wait() })
		return code, stdout.String() + stderr.String()
	}
	t.Cleanup(func() { stop() })
	return a, stop
}

// byModel counts a trace's requests per model and shape.
func byModel(tr *trace.Trace) map[string]int {
	out := map[string]int{}
	for _, r := range tr.Requests {
		var shapes []string
		for _, in := range r.Inputs {
			shapes = append(shapes, fmt.Sprintf("%s%v", in.Name, in.Shape))
		}
		out[r.Model+" "+strings.Join(shapes, " ")]++
	}
	return out
}

// TestCaptureReplayRoundTrip: tritontop drives two models through the
// capture proxy against one simulator; the capture, replayed with --trace
// against a fresh simulator (through a second proxy, which captures the
// replay), sends the same requests per model with the same shapes, each
// counted by both simulators, with the arrival gaps of the original. The
// capture holds no tensors without --with-tensors.
func TestCaptureReplayRoundTrip(t *testing.T) {
	diffs := captureReplayRoundTrip(t)
	p99 := diffs[len(diffs)*99/100]
	// On an idle host the p99 is within 2 ms (TestQuietCaptureReplayGaps);
	// a loaded test machine is held to what it can do (under the race
	// detector, less).
	limit := 250 * time.Millisecond
	if raceEnabled {
		limit = time.Second
	}
	if p99 > limit {
		t.Errorf("arrival gaps differ by %v at p99", p99)
	}
}

// captureReplayRoundTrip is TestCaptureReplayRoundTrip's run: it checks
// the counts and shapes and returns, sorted, how much each arrival gap of
// the replay differs from the capture's.
func captureReplayRoundTrip(t *testing.T) []time.Duration {
	t.Helper()
	dir := t.TempDir()
	simA, simB := startSim(t), startSim(t)
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl")
	loadFile := filepath.Join(dir, "load.yaml")
	if err := os.WriteFile(loadFile, []byte("models:\n  - model: simple\n    rate: 150\n  - model: identity\n    rate: 80\n    shape: {INPUT0: [24]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addrA, stopA := startCapture(t, simA.GRPCAddr(), first)
	code, _, stderr := runCLI("-u", addrA, "--load-file", loadFile, "--duration", "2s")
	if code != 0 {
		t.Fatalf("load through the proxy: exit %d: %s", code, stderr)
	}
	if code, out := stopA(); code != 0 || !strings.Contains(out, "inference requests written") {
		t.Fatalf("capture: exit %d: %s", code, out)
	}
	raw, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(`"data"`)) {
		t.Error("a capture without --with-tensors holds tensor data")
	}
	capA, err := trace.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	countsA := byModel(capA)
	if n := simCount(t, simA, "simple") + simCount(t, simA, "identity"); n != int64(len(capA.Requests)) || n < 300 {
		t.Fatalf("simulator A served %d, the capture has %d requests", n, len(capA.Requests))
	}

	addrB, stopB := startCapture(t, simB.GRPCAddr(), second)
	code, _, stderr = runCLI("-u", addrB, "--trace", first, "--headless")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if code, out := stopB(); code != 0 {
		t.Fatalf("second capture: exit %d: %s", code, out)
	}
	capB, err := trace.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	countsB := byModel(capB)
	for k, n := range countsA {
		if countsB[k] != n {
			t.Errorf("%s: %d captured, %d replayed", k, n, countsB[k])
		}
	}
	if len(countsA) != 2 || len(countsB) != len(countsA) {
		t.Errorf("captured %v, replayed %v", countsA, countsB)
	}
	for _, m := range []string{"simple", "identity"} {
		if a, b := simCount(t, simA, m), simCount(t, simB, m); a != b {
			t.Errorf("%s: simulator A served %d, B %d", m, a, b)
		}
	}
	// Arrival gaps, request by request, against the original's.
	var diffs []time.Duration
	for i := 1; i < len(capA.Requests) && i < len(capB.Requests); i++ {
		ga := capA.Requests[i].At - capA.Requests[i-1].At
		gb := capB.Requests[i].At - capB.Requests[i-1].At
		diffs = append(diffs, (gb - ga).Abs())
	}
	slices.Sort(diffs)
	if len(diffs) == 0 {
		t.Fatalf("the replay's capture has %d requests: no arrival gaps to compare", len(capB.Requests))
	}
	p50, p99 := diffs[len(diffs)/2], diffs[len(diffs)*99/100]
	t.Logf("%d requests; arrival gap difference replay vs capture: p50 %v p99 %v max %v", len(diffs)+1, p50, p99, diffs[len(diffs)-1])
	return diffs
}

// TestCaptureWithTensors: with --with-tensors each input's contents are in
// the capture, as many bytes as it says.
func TestCaptureWithTensors(t *testing.T) {
	dir := t.TempDir()
	sim := startSim(t)
	out := filepath.Join(dir, "t.jsonl")
	addr, stop := startCapture(t, sim.GRPCAddr(), out, "--with-tensors")
	if code, _, stderr := runCLI("-m", "simple", "-u", addr, "--request-rate", "50", "--duration", "1s", "--headless"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	stop()
	tr, err := trace.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Header.Tensors || len(tr.Requests) < 20 {
		t.Fatalf("header %+v, %d requests", tr.Header, len(tr.Requests))
	}
	for _, r := range tr.Requests {
		for _, in := range r.Inputs {
			if int64(len(in.Data)) != in.Bytes || in.Bytes != 64 {
				t.Fatalf("input %s: %d bytes of data, %d said", in.Name, len(in.Data), in.Bytes)
			}
		}
	}
}

// TestCaptureBadInput: missing or bad flags are one line and exit 2, and
// an existing output file is never overwritten.
func TestCaptureBadInput(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(existing, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "x"}, "no --upstream"},
		{[]string{"--upstream", "127.0.0.1:1"}, "no -o FILE"},
		{[]string{"--upstream", "127.0.0.1:1", "-o", existing, "--listen", "127.0.0.1:0"}, "exists: a capture never overwrites"},
		{[]string{"--upstream", "127.0.0.1:1", "-o", "y", "--listen", "nowhere:abc"}, "cannot listen on nowhere:abc"},
	} {
		code, _, stderr := runCLI(append([]string{"capture"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
}
