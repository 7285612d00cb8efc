package stats

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
)

// seqEnd is the successful last request of a sequence that took seqLat.
func seqEnd(sent, lat, seqLat time.Duration) driver.Result {
	r := ok(sent, lat)
	r.Timing = &driver.ResponseTiming{Sequence: seqLat}
	return r
}

// TestAggregatorSequences: the sequences that ended in a tick give its
// count, rate and latency, the window and the run add them up, a tick in
// which none ended has none while the window keeps them, and the tick's
// histogram recomputes its latency.
func TestAggregatorSequences(t *testing.T) {
	a := NewAggregator(time.Second, 2*time.Second)
	a.Add([]driver.Result{
		ok(0, time.Millisecond),
		seqEnd(0, time.Millisecond, 20*time.Millisecond),
		seqEnd(0, time.Millisecond, 40*time.Millisecond),
		// A failed last request ends no sequence the client can time.
		{Code: codes.InvalidArgument, Err: errors.New("refused")},
	})
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	sq := s.Tick.Sequences
	if sq == nil || sq.Ended != 2 || sq.EndedPerS != 2 || sq.Latency.Min != 20*time.Millisecond ||
		sq.Latency.Max != 40*time.Millisecond || sq.Latency.Mean != 30*time.Millisecond || sq.Latency.Count != 2 {
		t.Fatalf("tick sequences %+v", sq)
	}
	h, err := DecodeHistogram(s.SequenceHistogram)
	if err != nil || h.TotalCount() != 2 {
		t.Fatalf("sequence histogram: %v, %d values", err, h.TotalCount())
	}
	if got := LatencyFromHistogram(h); got.P50 < 19*time.Millisecond || got.P50 > 21*time.Millisecond {
		t.Errorf("histogram p50 %v, want 20ms", got.P50)
	}

	a.Add([]driver.Result{ok(time.Second, time.Millisecond)})
	var s2 Snapshot
	if err := a.Tick(time.Second, false, &s2); err != nil {
		t.Fatal(err)
	}
	if s2.Tick.Sequences != nil || s2.SequenceHistogram != "" {
		t.Errorf("a tick without sequences has %+v %q", s2.Tick.Sequences, s2.SequenceHistogram)
	}
	if w := s2.Window.Sequences; w == nil || w.Ended != 2 || w.EndedPerS != 1 || w.Latency.Max != 40*time.Millisecond {
		t.Errorf("window sequences %+v", w)
	}

	a.Add([]driver.Result{seqEnd(2*time.Second, time.Millisecond, 60*time.Millisecond)})
	var s3 Snapshot
	if err := a.Tick(time.Second, false, &s3); err != nil {
		t.Fatal(err)
	}
	// The 2 s window has dropped the first tick; the run keeps it.
	if w := s3.Window.Sequences; w == nil || w.Ended != 1 || w.Latency.Min != 60*time.Millisecond {
		t.Errorf("window sequences %+v", w)
	}
	if r := s3.Run.Sequences; r == nil || r.Ended != 3 || r.Latency.Max != 60*time.Millisecond ||
		r.Latency.Mean != 40*time.Millisecond {
		t.Errorf("run sequences %+v", r)
	}
}

// TestSnapshotWithoutSequencesReads: a snapshot written before sequences
// were measured reads with none, and one with them round-trips.
func TestSnapshotWithoutSequencesReads(t *testing.T) {
	var old Snapshot
	if err := json.Unmarshal([]byte(`{"seq":3,"load":{"mode":"concurrency","concurrency":4,"in_flight":4},
		"tick":{"requests":10,"latency":{"count":10}}}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Tick.Sequences != nil || old.Load.Sequences != 0 || old.SequenceHistogram != "" {
		t.Errorf("old snapshot read with sequences: %+v", old)
	}
	s := Snapshot{Seq: 1, Load: LoadOf(load.State{Target: load.Target{Mode: load.Concurrency, Concurrency: 4}, Sequences: 4}),
		Tick:              ClientStats{Sequences: &SequenceStats{Ended: 3, EndedPerS: 3, Latency: Latency{Count: 3, P50: time.Second}}},
		SequenceHistogram: "abc"}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Load.Sequences != 4 || back.Tick.Sequences == nil || *back.Tick.Sequences != *s.Tick.Sequences ||
		back.SequenceHistogram != "abc" {
		t.Errorf("round trip: %s", b)
	}
}
