package tui

import (
	"slices"
	"testing"
	"time"

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

// BenchmarkViewModels draws the whole 120x40 screen of a run over two
// models from a full history, all of them shown ("all") and one ("one"):
// the frame of BenchmarkView with the models pane.
func BenchmarkViewModels(b *testing.B) {
	for _, c := range []struct {
		name    string
		presses int
	}{{"all", 0}, {"one", 1}} {
		b.Run(c.name, func(b *testing.B) {
			m := loaded(b, Options{Models: modelControls(), Header: modelsHeader}, modelsRun(HistoryLength), 120, 40)
			for range c.presses {
				m.selectModel(m.board.ui.model + 1)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
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

// BenchmarkDrainModels is BenchmarkDrain for a run over two models, one
// of them shown: each snapshot goes to the raw history and, as the model
// shown sees it, to the panes'.
func BenchmarkDrainModels(b *testing.B) {
	snaps := modelsRun(10)
	m := New(Options{Models: modelControls()})
	m.selectModel(1)
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

// llmHistory is testdata/llm.jsonl's ticks before the drain, repeated to
// fill the dashboard's history.
func llmHistory(b *testing.B) ([]stats.Snapshot, HeaderInfo) {
	rec, info := llmRunning(b)
	snaps := make([]stats.Snapshot, HistoryLength)
	for i := range snaps {
		s := rec[i%len(rec)]
		s.Seq = i + 1
		s.Elapsed = time.Duration(i+1) * s.Interval
		snaps[i] = s
	}
	return snaps, info
}

// BenchmarkViewStreaming draws the whole 120x40 screen of a decoupled
// model from a full history, the work of one frame: with the streaming
// pane and the server's response line ("streaming"), and from the same
// history stripped of its streaming statistics, so that the latency pane
// draws it ("latency"): the same data both ways.
func BenchmarkViewStreaming(b *testing.B) {
	snaps, info := llmHistory(b)
	plain := slices.Clone(snaps)
	for i := range plain {
		s := &plain[i]
		s.Tick.Streaming, s.Window.Streaming, s.Run.Streaming, s.Server.Responses = nil, nil, nil, nil
	}
	plainInfo := info
	plainInfo.Decoupled = false
	for _, c := range []struct {
		name  string
		snaps []stats.Snapshot
		info  HeaderInfo
	}{{"streaming", snaps, info}, {"latency", plain, plainInfo}} {
		b.Run(c.name, func(b *testing.B) {
			m := loaded(b, Options{Control: newFakeControl(14), Header: c.info}, c.snaps, 120, 40)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkLatencySlot draws the pane in the latency pane's place at
// 120x40 both ways from the same decoupled model's full history: the
// latency pane a model that is not decoupled gets, and the streaming pane.
func BenchmarkLatencySlot(b *testing.B) {
	snaps, info := llmHistory(b)
	m := loaded(b, Options{Control: newFakeControl(14), Header: info}, snaps, 120, 40)
	slot := m.panes[focusLatency].(*latencySlot)
	for _, p := range []struct {
		name string
		pane pane
	}{{"latency", &slot.latency}, {"streaming", &slot.stream}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.pane.View()
			}
		})
	}
}
