package gate

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// BenchmarkWatcherAdd is --abort-on-fail's cost per tick (on the
// collector's goroutine, once a tick, never per request) with four
// thresholds.
func BenchmarkWatcherAdd(b *testing.B) {
	ts, err := ParseAll([]string{"p99<100ms", "errors<1%", "throughput>10", "queue<5ms"})
	if err != nil {
		b.Fatal(err)
	}
	w := NewWatcher(Gates{Run: ts}, 10, func(record.ThresholdResult) {})
	s := stats.Snapshot{
		Window: stats.ClientStats{Duration: time.Second, Requests: 100, Successes: 100, InferPerS: 100,
			Latency: stats.Latency{Count: 100, P99: 20 * time.Millisecond}},
		Server: stats.ServerStats{Available: true, SuccessCount: 100, Queue: time.Millisecond},
	}
	b.ReportAllocs()
	for b.Loop() {
		w.Add(s)
	}
}
