package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// TestStreamingPaneFromSchedule: in open loop the streaming pane's time to
// first response and request latency are from the schedule, and its title
// says so; in closed loop it says they are from the send.
func TestStreamingPaneFromSchedule(t *testing.T) {
	snaps, info := llmRunning(t)
	sched := stats.Latency{Count: 5, Mean: 800 * time.Millisecond, P50: 777 * time.Millisecond, P90: 790 * time.Millisecond,
		P95: 795 * time.Millisecond, P99: 799 * time.Millisecond}
	latency := sched
	latency.P50 = 1234 * time.Millisecond
	for i := range snaps {
		for _, cs := range []*stats.ClientStats{&snaps[i].Tick, &snaps[i].Window, &snaps[i].Run} {
			if cs.Streaming == nil {
				continue
			}
			sc := *cs.Streaming
			sc.TTFTScheduled = &sched
			cs.Streaming = &sc
			l := latency
			cs.Scheduled = &l
		}
	}
	out := ansi.Strip(loaded(t, Options{Control: newFakeControl(14), Header: info}, snaps, 120, 40).Render())
	if !strings.Contains(out, "Streaming · last 10 s · from schedule") {
		t.Errorf("the pane's title does not say its times are from the schedule:\n%s", out)
	}
	ttft, req := lineWith(out, "│ ttft "), lineWith(out, "│ request ")
	if !strings.Contains(ttft, "777") || !strings.Contains(req, "1234") && !strings.Contains(req, "1.23") {
		t.Errorf("open loop: ttft row %q, request row %q; want 777 ms and 1234 ms from the schedule", ttft, req)
	}
	closed, _ := llmRunning(t)
	if out := ansi.Strip(loaded(t, Options{Control: newFakeControl(14), Header: info}, closed, 120, 40).Render()); !strings.Contains(out, "Streaming · last 10 s · from send") ||
		strings.Contains(lineWith(out, "│ ttft "), "777") {
		t.Errorf("closed loop: the pane:\n%s", out)
	}
}
