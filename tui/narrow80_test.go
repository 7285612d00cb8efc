package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// At 80x24, with the demo's server times (parts from 0.4 µs to 7 ms), the
// server pane keeps every part, the request total and its unit, and the
// latency pane's avg line is whole, its span named.
func TestServerAndLatencyAt80x24KeepUnitsAndTotal(t *testing.T) {
	var snaps []stats.Snapshot
	for i := 1; i <= 12; i++ {
		// request, queue, input, infer, output in µs; overhead 0.431 µs.
		s := statstest.Tick(t, i, 8, 700, 11400, [5]int64{0, 2140, 64, 6710, 74})
		sv := &s.Server
		sv.Overhead = 431 * time.Nanosecond
		sv.Request = sv.Queue + sv.Compute() + sv.Overhead
		s.WindowLength = 10 * time.Second
		s.Window = s.Tick
		snaps = append(snaps, s)
	}
	snaps = statstest.WithRun(snaps)
	sv := snaps[len(snaps)-1].Server
	m := loaded(t, Options{Control: newFakeControl(8)}, snaps, 80, 24)
	lines := screenLines(m)
	checkScreen(t, m.Render(), 80, 24)
	screen := strings.Join(lines, "\n")
	got := regexp.MustCompile(`▓ queue ([0-9.]+) ▒ in ([0-9.]+) █ infer ([0-9.]+) ▒ out ([0-9.]+) ░ ovh ([0-9.]+) = request ([0-9.]+) ms`).FindStringSubmatch(screen)
	if got == nil {
		t.Fatalf("no whole server legend at 80x24:\n%s", screen)
	}
	for i, d := range []time.Duration{sv.Queue, sv.ComputeInput, sv.ComputeInfer, sv.ComputeOutput, sv.Overhead, sv.Request} {
		if !near(got[i+1], float64(d)/1e6) {
			t.Errorf("legend part %d shows %s ms, the statistics say %v", i, got[i+1], d)
		}
	}
	avg := regexp.MustCompile(`│ avg +[0-9.]+[^│]*Triton [0-9.]+%, out[a-z]* [0-9.]+%[^│]*│`).FindString(screen)
	if avg == "" || strings.Contains(avg, "…") || !strings.Contains(avg, " 5 s") {
		t.Errorf("avg line cut or without its span at 80x24: %q\n%s", avg, screen)
	}
}

// The server pane's batch size is the tick's, from Triton's counts
// (inferences per execution); a streaming tick that ended requests but ran
// no execution shows it missing, never as batch 0.0.
func TestServerPaneBatchOfTheTick(t *testing.T) {
	snaps := spanRun(t)
	last := &snaps[len(snaps)-1]
	last.Server.InferenceCount, last.Server.ExecutionCount = 160, 100
	last.Server.AvgBatch = float64(last.Server.InferenceCount) / float64(last.Server.ExecutionCount)
	m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 120, 40)
	if got := regexp.MustCompile(`batch avg (\S+)`).FindStringSubmatch(strings.Join(screenLines(m), "\n")); got == nil || !near(got[1], 1.6) {
		t.Errorf("batch avg %q, want 1.6 (160 inferences in 100 executions)", got)
	}
	last.Server.ExecutionCount, last.Server.AvgBatch = 0, 0
	m = loaded(t, Options{Control: newFakeControl(4)}, snaps, 120, 40)
	if got := regexp.MustCompile(`batch avg (\S+)`).FindStringSubmatch(strings.Join(screenLines(m), "\n")); got == nil || got[1] != "-" {
		t.Errorf("batch avg %q without an execution, want -", got)
	}
}
