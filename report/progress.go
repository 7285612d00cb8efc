package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Progress is the headless run's one line per tick, a Sink: the load, the
// tick's throughput and latency (from the schedule in open loop, from the
// send in closed loop, and the line says which), errors, how many replicas
// are in (a run over several), the server's queue and compute time and
// batch size, each GPU's utilization by index, and in a run over several
// models each model's load, throughput, p99 and queue time.
type Progress struct {
	// Retry is the run's retry policy: with one, every line says how many
	// tries its tick retried (none too, and why none could be).
	Retry *record.RetryPolicy

	w      io.Writer
	min    time.Duration
	opts   stats.DiagnoseOptions
	b      strings.Builder
	recent []stats.Snapshot
}

// NewProgress writes progress lines to w. Ticks shorter than minTick (the
// last tick of a run is often a sliver whose rates are noise) get no line;
// the summary has the whole run. Each line ends with what limits the load,
// stats.Diagnose's first two verdicts, for as long as they hold.
func NewProgress(w io.Writer, minTick time.Duration, o stats.DiagnoseOptions) *Progress {
	return &Progress{w: w, min: minTick, opts: o}
}

// Add writes the tick's line.
func (p *Progress) Add(s stats.Snapshot) {
	p.recent = keepForDiagnosis(p.recent, s)
	if s.Interval < p.min {
		return
	}
	b := &p.b
	b.Reset()
	lat, from := s.Tick.Latency, "send"
	if s.Tick.Scheduled != nil {
		lat, from = *s.Tick.Scheduled, "sched"
	}
	p50, p99 := "-", "-"
	if lat.Count > 0 {
		p50, p99 = ms(lat.P50), ms(lat.P99)
	}
	rate := strconv.FormatFloat(s.Tick.InferPerS, 'f', 1, 64)
	if s.Paused > 0 && s.Interval-s.Paused < p.min {
		// Paused for all but a sliver: a rate over the sliver is noise.
		rate = "-"
	}
	fmt.Fprintf(b, "%7.1fs  %-16s  %9s infer/s  p50 %s  p99 %s (from %s)  errors %d",
		s.Elapsed.Seconds(), s.Load.String(), rate, p50, p99, from, s.Tick.Errors)
	switch {
	case s.Tick.Retries > 0 || p.Retry != nil && s.Tick.Errors == 0:
		// Sends the server served on top of the requests counted.
		b.WriteString("  retries " + strconv.FormatInt(s.Tick.Retries, 10))
	case p.Retry != nil:
		b.WriteString("  retries 0" + retriedCodes(s.Tick.ErrorsByCode, p.Retry))
	}
	writePlanned(b, s.Load)
	if s.Load.Paused {
		// A pause by key, or a stepped run waiting for one level's requests
		// to finish before the next: the throughput is the ones finishing.
		fmt.Fprintf(b, "  paused, %d in flight", s.Load.InFlight)
	}
	if n := len(s.Replicas); n > 0 {
		fmt.Fprintf(b, "  replicas %d/%d up", s.ReplicasUp(), n)
		for i := range s.Replicas {
			if !s.Replicas[i].Up {
				b.WriteString(" (" + s.Replicas[i].URL + " out)")
			}
		}
	}
	switch {
	case s.Server.Available && s.Server.SuccessCount > 0:
		fmt.Fprintf(b, "  queue %s  compute %s  batch %s", ms(s.Server.Queue), ms(s.Server.Compute()), batchCell(s.Server))
	case s.Server.Available:
		// Triton times successful requests only.
		b.WriteString("  queue -  compute -  batch -")
	}
	for i, g := range s.Metrics.GPUs {
		if g.HasUtilization {
			b.WriteString("  gpu" + strconv.Itoa(i) + " " + strconv.FormatFloat(100*g.Utilization, 'f', 0, 64) + "%")
		}
	}
	for i := range s.Models {
		writeModelProgress(b, &s.Models[i])
	}
	fs := stats.Diagnose(p.recent, p.opts)
	spans := DiagnosisSpans(fs, p.recent, false)
	for i, f := range fs {
		if i == 2 {
			break
		}
		b.WriteString("  ⚠ " + f.Message)
		if sp := findingSpan(spans, i); sp != "" {
			b.WriteString(" · " + sp)
		}
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
}

// writeModelProgress is one model's part of a tick's line in a run over
// several models: "│ resnet50 concurrency 8: 812.0 infer/s p99 9.31 ms
// queue 1.20 ms", and its errors when it had any.
func writeModelProgress(b *strings.Builder, m *stats.Model) {
	lat := m.Tick.Latency
	if m.Tick.Scheduled != nil {
		lat = *m.Tick.Scheduled
	}
	fmt.Fprintf(b, "  │ %s %s: %.1f infer/s p99 %s", m.Name, m.Load.String(), m.Tick.InferPerS, ms(lat.P99))
	if m.Server.Available && !m.Server.Reset {
		b.WriteString(" queue " + ms(m.Server.Queue))
	}
	if m.Tick.Errors > 0 {
		b.WriteString(" errors " + strconv.FormatInt(m.Tick.Errors, 10))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// WriteStepLine writes the headless line of a measured step: its place in
// the run, its load, throughput, latency, Triton's queue and compute, and
// how it was measured (stable after how many windows, or not; the SLO).
// The step is the i-th of n so far; elapsed is the run's time until it
// ended, and the line ends with the time the rest of the run should take
// at that pace (the steps so far on average), while steps remain.
func WriteStepLine(w io.Writer, i, n int, elapsed time.Duration, st record.Step) {
	WriteLabelledStepLine(w, fmt.Sprintf("step %d/%d", i, n), i, n, elapsed, st)
}

// WriteLabelledStepLine is WriteStepLine with the step named by label (a
// search's own words, "probe 1 of at most 6"); i of at most n still tells
// the time left.
func WriteLabelledStepLine(w io.Writer, label string, i, n int, elapsed time.Duration, st record.Step) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-16s  %9.1f infer/s", label, st.Load.String(), st.Client.InferPerS)
	l, from := st.Client.Latency, "send"
	if st.Client.Scheduled != nil && st.Client.Scheduled.Count > 0 {
		l, from = *st.Client.Scheduled, "sched"
	}
	if l.Count > 0 {
		fmt.Fprintf(&b, "  p50 %s  p99 %s (from %s)", ms(l.P50), ms(l.P99), from)
	}
	if st.Server.Available {
		fmt.Fprintf(&b, "  queue %s  compute %s  batch %.1f", ms(st.Server.Queue), ms(st.Server.Compute()), st.Server.AvgBatch)
	}
	if m := st.Measurement; m != nil {
		switch {
		case m.Interrupted:
			b.WriteString("  interrupted")
		case m.Fixed && m.Stable:
			b.WriteString("  stable")
		case m.Fixed:
			b.WriteString("  not stable")
		case m.Stable && m.UnsteadyLatency:
			fmt.Fprintf(&b, "  stable throughput after %d windows, latency unsteady", m.Trials)
		case m.Stable:
			fmt.Fprintf(&b, "  stable after %d windows", m.Trials)
		default:
			fmt.Fprintf(&b, "  UNSTABLE after %d windows", m.Trials)
		}
		if m.SLO != nil {
			if m.SLO.Pass {
				b.WriteString("  SLO pass")
			} else {
				b.WriteString("  SLO fail")
			}
		}
	}
	if i > 0 && n > i && elapsed > 0 {
		left := elapsed / time.Duration(i) * time.Duration(n-i)
		b.WriteString("  about " + clock(left) + " left")
	}
	if len(st.Diagnosis) > 0 {
		// Read over the step's last ticks.
		b.WriteString("  ⚠ " + st.Diagnosis[0].Message + " · " + StepDiagnosisSpan)
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}

// retriedCodes names the codes of a tick's errors that the retry policy
// does not retry: " (INTERNAL not in --retry-codes)".
func retriedCodes(errs []stats.ErrorCount, p *record.RetryPolicy) string {
	var not []string
	for _, e := range errs {
		if !slices.Contains(p.Codes, e.Code) {
			not = append(not, e.Code)
		}
	}
	if len(not) == 0 {
		return ""
	}
	return " (" + strings.Join(not, ", ") + " not in --retry-codes)"
}
