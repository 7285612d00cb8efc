package session_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritontop/tritontop/capture"
	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/trace"
)

// captureStart runs a capture (tritontop capture) in front of upstream,
// writing out, until the test stops it; it returns its address and a stop
// that ends it, waits for it, and gives its error and what it printed.
func captureStart(t *testing.T, upstream, out string) (addr string, stop func() (error, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var stdout bytes.Buffer
	var err error
	var wg sync.WaitGroup
	wg.Go(func() {
		err = capture.Run(ctx, capture.Config{Listen: "127.0.0.1:0", Upstream: upstream, Out: out,
			Ready: func(a string) { ready <- a }}, &stdout)
		close(ready)
	})
	a, ok := <-ready
	if !ok {
		cancel()
		wg.Wait()
		t.Fatalf("the capture did not start: %v", err)
	}
	var once sync.Once
	stop = func() (error, string) {
		once.Do(func() { cancel(); wg.Wait() })
		return err, stdout.String()
	}
	t.Cleanup(func() { stop() })
	return a, stop
}

// captureByModel counts a trace's requests per model and shape.
func captureByModel(tr *trace.Trace) map[string]int {
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

// captureLoad is the load a round trip captures: two models, each at its
// rate, until the simulator has served requests of them.
type captureLoad struct {
	simpleRate, identityRate int
	requests                 int64
}

// TestCaptureReplayRoundTrip: a run drives two models through a capture
// against one simulator until it has served 460 requests; the capture, replayed with Shape.Trace (--trace)
// against a fresh simulator (through a second capture, which captures the
// replay), sends the same requests per model with the same shapes, each
// counted by both simulators, with the arrival gaps of the original. The
// capture holds no tensors without Tensors (--with-tensors).
func TestCaptureReplayRoundTrip(t *testing.T) {
	t.Parallel()
	// 460 requests in about a second: as many as the quiet pass's two
	// seconds.
	diffs := captureRoundTrip(t, captureLoad{simpleRate: 300, identityRate: 160, requests: 460})
	p99 := diffs[len(diffs)*99/100]
	// On an idle host the p99 is within 2 ms (TestQuietCaptureReplayGaps);
	// a loaded test machine is held to what it can do (under the race
	// detector, less).
	limit := 250 * time.Millisecond
	if testenv.Race {
		limit = time.Second
	}
	if p99 > limit {
		t.Errorf("arrival gaps differ by %v at p99", p99)
	}
}

// captureRoundTrip is TestCaptureReplayRoundTrip's run: it checks the
// counts and shapes and returns, sorted, how much each arrival gap of the
// replay differs from the capture's.
func captureRoundTrip(t *testing.T, l captureLoad) []time.Duration {
	t.Helper()
	dir := t.TempDir()
	simA, simB := startSim(t), startSim(t)
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl")
	loadFile := writeFile(t, dir, "load.yaml", "models:\n  - model: simple\n    rate: "+strconv.Itoa(l.simpleRate)+
		"\n  - model: identity\n    rate: "+strconv.Itoa(l.identityRate)+"\n    shape: {INPUT0: [24]}\n")
	addrA, stopA := captureStart(t, simA.GRPCAddr(), first)
	c := captureRunConfig(addrA, simA)
	c.LoadFile = loadFile
	served := func() int64 { return traceServed(t, simA, "simple") + traceServed(t, simA, "identity") }
	if err, _, stderr := seqRunUntil(t, c, func() bool { return served() >= l.requests }); err != nil {
		t.Fatalf("the load through the capture: %v\n%s", err, stderr)
	}
	if err, out := stopA(); err != nil || !strings.Contains(out, "inference requests written") {
		t.Fatalf("capture: %v: %s", err, out)
	}
	raw, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(`"data"`)) {
		t.Error("a capture without Tensors holds tensor data")
	}
	capA, err := trace.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	countsA := captureByModel(capA)
	if n := served(); n != int64(len(capA.Requests)) || n < 300 {
		t.Fatalf("simulator A served %d, the capture has %d requests", n, len(capA.Requests))
	}

	addrB, stopB := captureStart(t, simB.GRPCAddr(), second)
	c = captureRunConfig(addrB, simB)
	c.Shape.Trace = first
	runOK(t, c)
	if err, out := stopB(); err != nil {
		t.Fatalf("second capture: %v: %s", err, out)
	}
	capB, err := trace.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	countsB := captureByModel(capB)
	for k, n := range countsA {
		if countsB[k] != n {
			t.Errorf("%s: %d captured, %d replayed", k, n, countsB[k])
		}
	}
	if len(countsA) != 2 || len(countsB) != len(countsA) {
		t.Errorf("captured %v, replayed %v", countsA, countsB)
	}
	for _, m := range []string{"simple", "identity"} {
		if a, b := traceServed(t, simA, m), traceServed(t, simB, m); a != b {
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

// captureRunConfig is a headless run through a capture at addr in front of
// srv, whose metrics it reads directly (a capture forwards inference, not
// metrics).
func captureRunConfig(addr string, srv *sim.Server) session.Config {
	c := session.Defaults()
	c.URL, c.MetricsURLs = addr, []string{"http://" + srv.MetricsAddr() + "/metrics"}
	c.Tick, c.Headless = quickTick, true
	return c
}
