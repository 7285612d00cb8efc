package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// seqRun is a stateful model's run made by the real aggregator at
// concurrency 4: sequences ending after 100 and 300 ms in the first tick,
// none in the second, one after 200 ms in the third.
func seqRun(t *testing.T) *record.Run {
	a := stats.NewAggregator(time.Second, 10*time.Second)
	var snaps []stats.Snapshot
	for i, lats := range [][]time.Duration{{100 * msec, 300 * msec}, nil, {200 * msec}} {
		batch := []driver.Result{{Done: msec, Inferences: 1}}
		for _, l := range lats {
			batch = append(batch, driver.Result{Done: 2 * msec, Inferences: 1, Timing: &driver.ResponseTiming{Sequence: l}})
		}
		a.Add(batch)
		s := stats.Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second,
			Load: stats.Load{Mode: load.Concurrency, Concurrency: 4, InFlight: 4, Sequences: 4}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	return &record.Run{Header: testHeader(), Snapshots: snaps}
}

// TestStepBuilderSequences: a step adds up its ticks' sequences, their
// latency merged exactly from the ticks' histograms.
func TestStepBuilderSequences(t *testing.T) {
	b := NewStepBuilder(stats.Load{})
	for _, s := range seqRun(t).Snapshots {
		b.Add(s)
	}
	st := b.Step()
	sq := st.Client.Sequences
	if st.Approximate || sq == nil {
		t.Fatalf("step = %+v", st)
	}
	if sq.Ended != 3 || sq.EndedPerS != 1 || sq.Latency.Count != 3 || sq.Latency.Min != 100*msec ||
		sq.Latency.Max != 300*msec || sq.Latency.Mean != 200*msec || sq.Latency.P50 < 199*msec || sq.Latency.P50 > 201*msec {
		t.Errorf("step sequences = %+v", sq)
	}
}

// TestWriteTextSequences: the summary of a stateful model's run counts its
// sequences and gives their latency in perf_analyzer's words.
func TestWriteTextSequences(t *testing.T) {
	run := seqRun(t)
	var b bytes.Buffer
	if err := WriteText(&b, Summarize(run.Header, run.Snapshots)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Sequence count: 3 (1 seq/sec)\n",
		"Avg sequence latency: 200000 usec\n",
		"p50 sequence latency: 200",
		"p99 sequence latency: 300",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	// Other models' summaries have no such lines.
	var other bytes.Buffer
	if err := WriteText(&other, Summarize(levelRun(t).Header, levelRun(t).Snapshots)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(other.String(), "equence") {
		t.Errorf("a run without sequences mentions them:\n%s", other.String())
	}
}
