package report

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// lateServer is n successes of 2 ms each, as one tick's statistics.
func lateServer(model string, n int64) stats.ServerStats {
	return stats.ServerStats{Available: true, Model: model, SuccessCount: n, InferenceCount: n, ExecutionCount: n,
		Request: 2 * time.Millisecond, Queue: time.Millisecond, ComputeInfer: time.Millisecond}
}

// TestSummaryCountsLateReadsOfModelsAndReplicas: a late statistics read
// carried apart by a model's entry and a replica's (Snapshot.Models[i],
// Replicas[i].ServerLate) counts in that model's and that replica's
// summary, and in the run's, as a late read of one model on one server
// counts in the run's.
func TestSummaryCountsLateReadsOfModelsAndReplicas(t *testing.T) {
	conc := stats.Load{Mode: load.Concurrency, Concurrency: 2}
	tickOf := func(seq int, a, b *stats.ServerStats, lateA *stats.ServerStats) stats.Snapshot {
		s := stats.Snapshot{Seq: seq, Interval: time.Second, Elapsed: time.Duration(seq) * time.Second, Load: conc}
		s.Tick = stats.ClientStats{Duration: time.Second}
		s.Models = []stats.Model{{Name: "a", Load: conc, Tick: s.Tick}, {Name: "b", Load: conc, Tick: s.Tick}}
		s.Replicas = []stats.Replica{{URL: "x:8001", Up: true}, {URL: "y:8001", Up: true}}
		if a != nil {
			s.Models[0].Server, s.Replicas[0].Server = *a, *a
		} else {
			s.Models[0].Server.Err, s.Replicas[0].Server.Err = "late", "late"
		}
		s.Models[1].Server, s.Replicas[1].Server = *b, *b
		parts := []stats.ServerStats{s.Models[0].Server, *b}
		s.Server = stats.AggregateServer(parts)
		if lateA != nil {
			s.Models[0].ServerLate, s.Models[0].ServerLateSeq = lateA, seq-1
			s.Replicas[0].ServerLate, s.Replicas[0].ServerLateSeq = lateA, seq-1
			s.ServerLate, s.ServerLateSeq = lateA, seq-1
		}
		return s
	}
	a1, a3, late := lateServer("a", 100), lateServer("a", 120), lateServer("a", 90)
	b1, b2, b3 := lateServer("b", 50), lateServer("b", 60), lateServer("b", 70)
	z := NewSummarizer(record.Header{Model: record.ModelInfo{Name: "a"}})
	z.Add(tickOf(1, &a1, &b1, nil))
	z.Add(tickOf(2, nil, &b2, nil))
	z.Add(tickOf(3, &a3, &b3, &late))
	sum := z.Summary()
	if got, want := sum.Server.SuccessCount, int64(100+90+120+50+60+70); got != want {
		t.Errorf("run's server successes = %d, want %d", got, want)
	}
	if len(sum.Models) != 2 || len(sum.Replicas) != 2 {
		t.Fatalf("%d models, %d replicas", len(sum.Models), len(sum.Replicas))
	}
	if got := sum.Models[0].Server.SuccessCount; got != 310 {
		t.Errorf("model a's server successes = %d, want 310 (with its late read of 90)", got)
	}
	if got := sum.Replicas[0].Server.SuccessCount; got != 310 {
		t.Errorf("replica x's server successes = %d, want 310 (with its late read of 90)", got)
	}
	if got := sum.Models[1].Server.SuccessCount; got != 180 {
		t.Errorf("model b's server successes = %d, want 180", got)
	}
}
