package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tritontop/tritontop/stats"
)

// replicaRun is closedLoopRun served by two replicas, each with one of its
// two GPUs: 10.0.0.1 takes 60 % of the requests, 10.0.0.2 the rest, until
// tick downFrom (0: never), from which 10.0.0.2 is out and 10.0.0.1 takes
// everything with a longer queue.
func replicaRun(n, downFrom int) []stats.Snapshot {
	out := closedLoopRun(n)
	const a, b = "10.0.0.1:8001", "10.0.0.2:8001"
	for i := range out {
		s := &out[i]
		down := downFrom > 0 && s.Seq >= downFrom
		share := 0.6
		if down {
			share = 1
		}
		split := func(c stats.ClientStats, f float64) stats.ClientStats {
			c.Requests = int64(float64(c.Requests) * f)
			c.Successes, c.Inferences = c.Requests, c.Requests
			c.RequestsPerS, c.InferPerS = c.RequestsPerS*f, c.InferPerS*f
			c.Latency.Count = c.Requests
			return c
		}
		gpus := s.Metrics.GPUs
		gpus[0].Replica, gpus[1].Replica = a, b
		ra := stats.Replica{URL: a, Up: true, Tick: split(s.Tick, share), Server: s.Server,
			Metrics: stats.ServerMetrics{Available: true, GPUs: gpus[:1]}}
		rb := stats.Replica{URL: b, Up: !down, Tick: split(s.Tick, 1-share), Server: s.Server,
			Metrics: stats.ServerMetrics{Available: true, GPUs: gpus[1:]}}
		ra.Server.SuccessCount, rb.Server.SuccessCount = ra.Tick.Successes, rb.Tick.Successes
		rb.Tick.Latency.P99 = ra.Tick.Latency.P99 * 3 / 2
		if down {
			ra.Server.Queue = s.Server.Queue * 2
			rb.Tick = stats.ClientStats{Duration: time.Second}
			rb.Server = stats.ServerStats{Model: "resnet50", Err: "connection refused"}
			rb.Metrics = stats.ServerMetrics{Err: "connection refused"}
			s.Metrics.GPUs = gpus[:1]
		}
		s.Replicas = []stats.Replica{ra, rb}
	}
	return out
}

// TestReplicasScreen: a run over two replicas gets a row per replica under
// the panes; a replica taken out says down, and the title says how many
// are in.
func TestReplicasScreen(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	for _, c := range []struct {
		name     string
		downFrom int
	}{{"replicas", 0}, {"replicadown", 60}} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				m := loaded(t, Options{Control: newFakeControl(32), Header: HeaderInfo{Server: "2 replicas, least outstanding",
					Protocol: "gRPC", Model: "resnet50", MaxBatch: 32, DynamicBatching: true}}, replicaRun(64, c.downFrom), sz.w, sz.h)
				out := m.Render()
				checkScreen(t, out, sz.w, sz.h)
				golden.RequireEqual(t, out)
				plain := ansi.Strip(out)
				rowB := lineWith(plain, "10.0.0.2:8001 ") // the GPU pane names "10.0.0.2:8001/0"
				switch {
				case c.downFrom == 0 && (!strings.Contains(plain, "Replicas · 2 of 2 in") || !strings.Contains(rowB, " up ")):
					t.Errorf("both replicas in, but:\n%s", plain)
				case c.downFrom > 0 && (!strings.Contains(plain, "Replicas · 1 of 2 in") || !strings.Contains(rowB, " down ")):
					t.Errorf("replica 2 out, but its row is %q:\n%s", rowB, plain)
				}
			})
		}
	}
}

// lineWith is the first line of s holding sub, "" without one.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestReplicaGoesDownLive: fed live, the row of a replica turns from up to
// down when the ticks say it was taken out.
func TestReplicaGoesDownLive(t *testing.T) {
	snaps := replicaRun(12, 8)
	ch := make(chan stats.Snapshot, 16)
	for _, s := range snaps[:7] {
		ch <- s
	}
	tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Control: newFakeControl(32), Header: header, FPS: 50}),
		teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("2 of 2 in")) },
		teatest.WithDuration(flowTimeout))
	for _, s := range snaps[7:] {
		ch <- s
	}
	// The renderer redraws only the cells that changed: the state.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("down")) },
		teatest.WithDuration(flowTimeout))
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(flowTimeout))
	m := tm.FinalModel(t).(Model)
	out := ansi.Strip(m.Render())
	if row := lineWith(out, "10.0.0.2:8001 "); !strings.Contains(row, "down") || !strings.Contains(out, "Replicas · 1 of 2 in") {
		t.Errorf("the replica taken out shows %q:\n%s", row, out)
	}
}
