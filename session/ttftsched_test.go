package session_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// TestOpenLoopTTFTFromScheduleEndToEnd runs an open loop over the chat
// endpoint, streaming, and holds what it shows to the run file: the CSV's
// time to first response from the schedule is the one recomputed from the
// run file's per-tick histograms, never below the one from the send
// (every request's first token comes after both its schedule and its
// send), and the HTML report's step table gives the same numbers.
func TestOpenLoopTTFTFromScheduleEndToEnd(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	c := endpointConfig(srv, "llm", "chat")
	c.Streaming, c.Endpoint.InputTokensMean, c.Endpoint.OutputTokensMean = true, 32, 6
	c.RequestRate = 16
	c.Record, c.CSV = filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	runOK(t, c)
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatal(err)
	}
	// Recompute from the ticks under load: their histograms merged.
	sched, _ := stats.DecodeHistogram("")
	send, _ := stats.DecodeHistogram("")
	for _, s := range run.Snapshots {
		if s.Load.Drain {
			continue
		}
		for _, m := range []struct {
			into *hdrhistogram.Histogram
			enc  string
		}{{sched, s.TTFTScheduledHistogram}, {send, s.TTFTHistogram}} {
			h, err := stats.DecodeHistogram(m.enc)
			if err != nil {
				t.Fatal(err)
			}
			m.into.Merge(h)
		}
	}
	want, fromSend := stats.LatencyFromHistogram(sched), stats.LatencyFromHistogram(send)
	if want.Count == 0 || want.Count != fromSend.Count {
		t.Fatalf("run file: %d first tokens timed from the schedule, %d from the send", want.Count, fromSend.Count)
	}
	b, err := os.ReadFile(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	cell := func(name string) time.Duration {
		for i, h := range head {
			if h == name {
				v, err := strconv.ParseInt(row[i], 10, 64)
				if err != nil {
					t.Fatalf("CSV %s = %q", name, row[i])
				}
				return time.Duration(v) * time.Microsecond
			}
		}
		t.Fatalf("CSV has no column %q: %s", name, lines[0])
		return 0
	}
	for _, tc := range []struct {
		name       string
		want, send time.Duration
	}{
		{"p50 Time To First Response From Schedule", want.P50, fromSend.P50},
		{"p99 Time To First Response From Schedule", want.P99, fromSend.P99},
	} {
		got := cell(tc.name)
		if d := got - tc.want; d > tc.want/100 || -d > tc.want/100 {
			t.Errorf("CSV %s = %v; recomputed from the run file: %v", tc.name, got, tc.want)
		}
		if got < tc.send-tc.send/100 {
			t.Errorf("CSV %s = %v, below the same from the send (%v)", tc.name, got, tc.send)
		}
	}
	t.Logf("%d first tokens; TTFT from the schedule p50 %v p99 %v; from the send p50 %v p99 %v", want.Count, want.P50, want.P99, fromSend.P50, fromSend.P99)

	// The HTML report (tritontop report) of the run file.
	read, err := report.ReadRun(c.Record, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, []report.HTMLRun{{Label: "run", File: c.Record, Run: read}}, report.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "time to first response from the schedule: avg ") {
		t.Errorf("the HTML step table does not give the time to first response from the schedule")
	}
}
