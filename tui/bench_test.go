package tui

import (
	"testing"

	"github.com/tritontop/tritontop/stats"
)

// BenchmarkView draws the whole 120x40 screen from a full history, the
// work of one frame.
func BenchmarkView(b *testing.B) {
	m := loaded(b, Options{Control: newFakeControl(32)}, closedLoopRun(HistoryLength), 120, 40)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkDrain takes one frame's snapshots (ten) into the history.
func BenchmarkDrain(b *testing.B) {
	snaps := closedLoopRun(10)
	m := New(Options{Control: newFakeControl(32)})
	ch := make(chan stats.Snapshot, len(snaps))
	m.opts.Snapshots = ch
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range snaps {
			ch <- s
		}
		m.drain()
	}
}
