package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/tritontop/tritontop/stats"
)

// pipelineRun is closedLoopRun against a pipeline, resnet50_pipeline:
// preprocess, on two CPU instances, where the requests queue, then
// resnet50 on the GPU. The pipeline's own entry holds almost nothing; its
// time is its steps' (stats.ServerStats.Decompose).
func pipelineRun(n int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		s := &out[i]
		sv := &s.Server
		req := sv.SuccessCount
		step := func(name string, q, c time.Duration, batch int) stats.ServerStats {
			execs := req / int64(batch)
			return stats.ServerStats{Available: true, Model: name, Version: "1",
				SuccessCount: req, InferenceCount: req, ExecutionCount: execs,
				Request: q + c + 50*time.Microsecond, Queue: q, ComputeInput: c / 10, ComputeInfer: c * 8 / 10, ComputeOutput: c / 10,
				AvgBatch: float64(batch), Batches: batches(batch, execs)}
		}
		pre := step("preprocess", sv.Queue, 10*time.Millisecond, 2)
		net := step("resnet50", 300*time.Microsecond, sv.ComputeInfer, int(sv.AvgBatch))
		sv.Model = "resnet50_pipeline"
		sv.Request = pre.Request + net.Request + 200*time.Microsecond
		sv.Own = &stats.OwnTimes{Queue: 2 * time.Microsecond, ComputeInfer: pre.Compute() + net.Compute()}
		sv.Steps = []stats.ServerStats{pre, net}
		sv.AvgBatch, sv.ExecutionCount, sv.Batches = 1, req, batches(1, req)
		sv.Decompose()
	}
	return out
}

// TestPipelineRows: the server pane of a pipeline has its time over its
// steps on the first line and a row per step under it, with each step's
// queue, compute and batch, on every screen size the dashboard draws, 80x24
// among them (where the numbers come before the bar and the history).
func TestPipelineRows(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := loaded(t, Options{Control: newFakeControl(32)}, pipelineRun(64), sz.w, sz.h)
			r := m.rects[focusServer]
			out := m.panes[focusServer].View()
			checkScreen(t, out, r.w, r.h)
			lines := strings.Split(ansi.Strip(out), "\n")
			if len(lines) < 5 {
				t.Fatalf("server pane of %d lines", len(lines))
			}
			if !strings.Contains(lines[0], "pipeline") {
				t.Errorf("title %q does not say the pane shows a pipeline", lines[0])
			}
			wantQueue := "queue "
			if r.w-4 < 100 {
				wantQueue = "q "
			}
			// The first line inside: the pipeline's request time; then
			// preprocess and resnet50, in that order.
			if !strings.Contains(lines[1], "request") ||
				!strings.Contains(lines[2], "├ preprocess") || !strings.Contains(lines[2], wantQueue) ||
				!strings.Contains(lines[3], "└ resnet50") {
				t.Errorf("pane:\n%s", ansi.Strip(out))
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestPipelineRowsCachedPerTick: the steps' rows are made once per tick and
// width, not at every frame.
func TestPipelineRowsCachedPerTick(t *testing.T) {
	snaps := pipelineRun(3)
	var c stepRows
	st := NewStyles(false)
	a := c.rows(st, &snaps[0], 76)
	b := c.rows(st, &snaps[0], 76)
	if &a[0] != &b[0] {
		t.Error("the same tick's rows were made again")
	}
	if d := c.rows(st, &snaps[1], 76); &d[0] == &a[0] {
		t.Error("the next tick's rows are the last tick's")
	}
	if e := c.rows(st, &snaps[1], 60); len(e) != 2 || !strings.HasPrefix(e[0], "├ preprocess  q ") {
		t.Errorf("rows at 60 cells: %q", e)
	}
}
