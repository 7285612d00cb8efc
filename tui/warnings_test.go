package tui

import (
	"strings"
	"testing"

	"github.com/tritontop/tritontop/stats"
)

func historyOf(snaps []stats.Snapshot) *history {
	h := newHistory(HistoryLength)
	for _, s := range snaps {
		h.push(s)
	}
	return h
}

func TestWarnings(t *testing.T) {
	singleCore := closedLoopRun(30)
	for i := range singleCore {
		singleCore[i].System.NumCPU, singleCore[i].System.ProcessCPU = 1, 0.95
	}
	busyButFine := closedLoopRun(30)
	for i := range busyButFine {
		busyButFine[i].System.ProcessCPU = 8 // half of 16 cores
	}
	tests := []struct {
		name  string
		snaps []stats.Snapshot
		want  []string // substrings, in order; nil: no warning
	}{
		// Ticks 60..64 went from 16 to 32 in flight: queue ×4, compute 8 ms.
		{"queue rises, compute flat", closedLoopRun(64), []string{"server saturated"}},
		// Twenty ticks at 32: the queue is long but no longer rising.
		{"steady past the knee", closedLoopRun(80), nil},
		// Ticks 20..24 doubled load below the knee: compute grew too.
		{"compute grows with load", closedLoopRun(24), nil},
		{"too few ticks", closedLoopRun(6), nil},
		{"open loop late and client bound", openLoopRun(80), []string{"late sends 3.0%", "tritontop uses 15.2 cores of 16"}},
		{"single core near full", singleCore, []string{"tritontop uses 0.9 cores of 1"}},
		{"half the cores is fine", busyButFine, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := warnings(historyOf(tt.snaps), false)
			if len(got) != len(tt.want) {
				t.Fatalf("warnings %q, want %d matching %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d is %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

// TestSharedProcessIsNotClientBound checks that with the simulator in the
// process, its CPU use is not blamed on the client; the other cues stay.
func TestSharedProcessIsNotClientBound(t *testing.T) {
	h := historyOf(openLoopRun(80))
	if got := warnings(h, false); len(got) != 2 || !strings.Contains(got[1], "tritontop uses 15.2 cores") {
		t.Fatalf("separate process: warnings %q, want late sends and client bound", got)
	}
	got := warnings(h, true)
	if len(got) != 1 || !strings.Contains(got[0], "late sends") {
		t.Errorf("shared process: warnings %q, want late sends only", got)
	}
}

func TestServerSaturatedSkipsTicksWithoutStatistics(t *testing.T) {
	snaps := closedLoopRun(64)
	// Statistics missing in alternate ticks: the comparison uses the ticks
	// that have them, reaching further back.
	for i := 40; i < len(snaps); i += 2 {
		snaps[i].Server = stats.ServerStats{Err: "unavailable"}
	}
	if !serverSaturated(historyOf(snaps)) {
		t.Error("saturation not seen through ticks without statistics")
	}
}
