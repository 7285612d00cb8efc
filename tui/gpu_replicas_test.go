package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// fourGPURun is replicaRun with two GPUs on each replica.
func fourGPURun(n int) []stats.Snapshot {
	out := replicaRun(n, 0)
	for i := range out {
		s := &out[i]
		a, b := s.Metrics.GPUs[0], s.Metrics.GPUs[1]
		a2, b2 := a, b
		a2.UUID, b2.UUID = a.UUID+"-2", b.UUID+"-2"
		a2.Utilization, b2.Utilization = 0.31, 0.27
		s.Metrics.GPUs = []stats.GPU{a, a2, b, b2}
		s.Replicas[0].Metrics.GPUs = s.Metrics.GPUs[:2]
		s.Replicas[1].Metrics.GPUs = s.Metrics.GPUs[2:]
	}
	return out
}

// With two replicas of two GPUs each, the GPU pane names each GPU by its
// replica and its index there, and the GPUs it has no row for are counted
// in a "+N more" line: shown and counted add up to the four.
func TestGPUPaneReplicaLabelsAndMore(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}, {200, 60}} {
		m := loaded(t, Options{Control: newFakeControl(32)}, fourGPURun(64), size[0], size[1])
		checkScreen(t, m.Render(), size[0], size[1])
		gpu := stripANSI(m.panes[focusGPU].View())
		shown := 0
		for _, want := range []string{"10.0.0.1:8001/0", "10.0.0.1:8001/1", "10.0.0.2:8001/0", "10.0.0.2:8001/1"} {
			if strings.Contains(gpu, want) {
				shown++
			}
		}
		more := 0
		if sub := regexp.MustCompile(`\+([0-9]+) more GPUs`).FindStringSubmatch(gpu); sub != nil {
			more, _ = strconv.Atoi(sub[1])
		}
		if shown == 0 || shown+more != 4 {
			t.Errorf("%dx%d: %d GPUs named by replica and %d more, want 4 in all:\n%s", size[0], size[1], shown, more, gpu)
		}
	}
}

func stripANSI(s string) string { return xansi.Strip(s) }
