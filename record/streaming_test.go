package record

import (
	"reflect"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/stats"
)

// TestStreamingRoundTrip writes a decoupled model's snapshot, with its
// streaming statistics, their histograms and Triton's response
// statistics, and reads back the same, histograms still decoding to the
// same distributions.
func TestStreamingRoundTrip(t *testing.T) {
	a := stats.NewAggregator(time.Second, time.Second)
	a.Add([]driver.Result{{Decoupled: true, Sent: 0, Done: 50 * time.Millisecond, Responses: 3, Inferences: 1,
		Timing: &driver.ResponseTiming{First: 30 * time.Millisecond, Gaps: []time.Duration{8 * time.Millisecond, 12 * time.Millisecond}}}})
	s := stats.Snapshot{Seq: 1, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Interval: time.Second, Elapsed: time.Second,
		Server: stats.ServerStats{Available: true, SuccessCount: 1,
			Responses: &stats.ServerResponses{Success: 3, Empty: 1, ComputeInfer: time.Millisecond, ComputeInferCount: 4}}}
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	run, err := ReadAll(writeRun(t, []stats.Snapshot{s}, true))
	if err != nil {
		t.Fatal(err)
	}
	got := run.Snapshots[0]
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("snapshot differs after round trip:\n got %+v\nwant %+v", got, s)
	}
	h, err := stats.DecodeHistogram(got.ITLHistogram)
	if err != nil || stats.LatencyFromHistogram(h).Count != 2 {
		t.Errorf("ITL histogram: %v, %v", h, err)
	}
	// A file of an older version, without any of it, reads as before: the
	// frozen schema-1 file has no streaming fields.
	old, err := ReadAll("testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range old.Snapshots {
		if s.Tick.Streaming != nil || s.Run.Streaming != nil || s.Server.Responses != nil || s.TTFTHistogram != "" {
			t.Errorf("tick %d of the schema-1 file has streaming fields", s.Seq)
		}
	}
}
