package tui

import (
	"strings"
	"testing"
)

// TestHeaderSaysNoResponsesDuringAStall: requests in flight and none
// finished in a tick is a stall, not "running"; the header says so.
func TestHeaderSaysNoResponsesDuringAStall(t *testing.T) {
	snaps := closedLoopRun(12)
	last := &snaps[len(snaps)-1]
	last.Tick.Requests, last.Tick.Successes, last.Tick.Inferences = 0, 0, 0
	last.Tick.RequestsPerS, last.Tick.InferPerS = 0, 0
	m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 120, 40)
	header := strings.SplitN(m.Render(), "\n", 3)[:2]
	got := strings.Join(header, "\n")
	if !strings.Contains(got, "no responses") || strings.Contains(got, "running") {
		t.Errorf("header during a stall:\n%s", got)
	}
	m = loaded(t, Options{Control: newFakeControl(4)}, closedLoopRun(12), 120, 40)
	if got := strings.Join(strings.SplitN(m.Render(), "\n", 3)[:2], "\n"); !strings.Contains(got, "running") {
		t.Errorf("header of a healthy run:\n%s", got)
	}
}

// TestNarrowHeaderKeepsTransportAndRecording: at 80 columns the transport
// and the recording badge stay on the first line; the model's batching is
// what gets abbreviated.
func TestNarrowHeaderKeepsTransportAndRecording(t *testing.T) {
	h := header
	h.Recording = "run.jsonl"
	h.Simulated = true
	m := loaded(t, Options{Control: newFakeControl(4), Header: h, NoColor: true}, closedLoopRun(12), 80, 24)
	line1 := strings.SplitN(m.Render(), "\n", 2)[0]
	for _, want := range []string{"gRPC", "rec run.jsonl", "SIMULATED"} {
		if !strings.Contains(line1, want) {
			t.Errorf("80-column header lacks %q: %q", want, line1)
		}
	}
}
