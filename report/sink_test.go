package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// closingSink records what it gets and fails its Close when told to.
type closingSink struct {
	seqs []int
	sum  *record.Summary
	fail error
}

func (c *closingSink) Add(s stats.Snapshot) { c.seqs = append(c.seqs, s.Seq) }
func (c *closingSink) Close(sum record.Summary) error {
	c.sum = &sum
	return c.fail
}

func TestOutputsFanOutAndClose(t *testing.T) {
	run := steppedRun(t)
	var order []string
	a := &closingSink{}
	b := &closingSink{fail: errors.New("disk full")}
	plain := SinkFunc(func(s stats.Snapshot) { order = append(order, "plain") })
	o := NewOutputs(run.Header, a, nil, plain, b)
	for _, s := range run.Snapshots {
		o.Add(s)
	}
	if len(a.seqs) != 5 || len(b.seqs) != 5 || len(order) != 5 {
		t.Fatalf("sinks got %v, %v and %d ticks, want 5 each", a.seqs, b.seqs, len(order))
	}
	sum, err := o.Close()
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close error %v, want the failing closer's", err)
	}
	want := Summarize(run.Header, run.Snapshots)
	if a.sum == nil || a.sum.Client.Requests != want.Client.Requests || len(a.sum.Steps) != 3 {
		t.Errorf("closer got summary %+v", a.sum)
	}
	if sum.Client.Requests != want.Client.Requests || o.Summary().Ticks != 5 {
		t.Errorf("Close summary %+v", sum.Client)
	}
	a.sum = nil
	if _, err := o.Close(); err != nil || a.sum != nil {
		t.Errorf("a second Close closed again (%v)", err)
	}
}

func TestProgressLine(t *testing.T) {
	s := steppedRun(t).Snapshots[0]
	s.Metrics = stats.ServerMetrics{Available: true, GPUs: []stats.GPU{
		{UUID: "GPU-a", Utilization: 0.84, HasUtilization: true},
		{UUID: "GPU-b", MemoryUsed: 1, HasMemory: true},
		{UUID: "GPU-c", Utilization: 0.83, HasUtilization: true},
	}}
	var b bytes.Buffer
	p := NewProgress(&b, 500*time.Millisecond, stats.DiagnoseOptions{})
	p.Add(s)
	line := b.String()
	for _, want := range []string{"1.0s", "concurrency 1", "100.0 infer/s", "p50 1.00 ms", "p99 1.00 ms (from send)",
		"errors 0", "queue 0.10 ms", "compute 0.77 ms", "batch 1.0", "gpu0 84%", "gpu2 83%"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "gpu1") {
		t.Errorf("progress line %q shows a GPU that reported no utilization", line)
	}

	// Open loop: latency from the schedule; a sliver tick gets no line.
	b.Reset()
	sched := s.Tick.Latency
	sched.P99 = 9 * time.Millisecond
	s.Tick.Scheduled = &sched
	s.Load = stats.Load{Mode: load.Rate, Rate: 200, Distribution: load.Constant}
	p.Add(s)
	if line := b.String(); !strings.Contains(line, "rate 200/s") || !strings.Contains(line, "p99 9.00 ms (from sched)") {
		t.Errorf("open-loop progress line %q", line)
	}
	// A paused tick (a stepped run waiting for a level's requests) says so.
	b.Reset()
	s.Load.Paused, s.Load.InFlight = true, 12
	p.Add(s)
	if line := b.String(); !strings.Contains(line, "paused, 12 in flight") {
		t.Errorf("paused progress line %q", line)
	}
	// A tick paused for all but a sliver gives no rate over the sliver.
	b.Reset()
	s.Paused = s.Interval - 10*time.Millisecond
	p.Add(s)
	if line := b.String(); !strings.Contains(line, "  - infer/s") || strings.Contains(line, "100.0 infer/s") {
		t.Errorf("a tick paused for all but 10 ms: %q", line)
	}
	b.Reset()
	s.Interval, s.Paused = 10*time.Millisecond, 0
	p.Add(s)
	if b.Len() != 0 {
		t.Errorf("a 10 ms tick got a line: %q", b.String())
	}
}

// TestStepLineTimeLeft: a step's headless line says how long the rest of
// the run should take at the pace of the steps so far, and the last step's
// says nothing of it.
func TestStepLineTimeLeft(t *testing.T) {
	b0 := NewStepBuilder(stats.Load{})
	for _, s := range steppedRun(t).Snapshots[:2] {
		b0.Add(s)
	}
	st := b0.Step()
	var b bytes.Buffer
	WriteStepLine(&b, 2, 8, 30*time.Second, st)
	if line := b.String(); !strings.HasPrefix(line, "step 2/8  concurrency 1") || !strings.Contains(line, "about 01:30 left") {
		t.Errorf("step line %q, want step 2/8 and 6 × 15 s = 01:30 left", line)
	}
	b.Reset()
	WriteStepLine(&b, 8, 8, 2*time.Minute, st)
	if line := b.String(); strings.Contains(line, "left") {
		t.Errorf("last step line %q says a time left", line)
	}
}
