package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/tritontop/tritontop/promexport"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/stats"
)

// workersBuffer is a buffer written by a run and read by the test
// meanwhile.
type workersBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *workersBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *workersBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// workersRun is a run going on in the background.
type workersRun struct {
	stdout, stderr workersBuffer
	done           chan error
	stop           context.CancelFunc // a stop signal's effect
}

// workersStart runs c in the background as session.Run, within a minute;
// the test's end stops it and waits for it.
func workersStart(t *testing.T, c session.Config) *workersRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	r := &workersRun{done: make(chan error, 1), stop: cancel}
	go func() { r.done <- session.Run(ctx, c, &r.stdout, &r.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			r.done <- err
		case <-time.After(time.Minute):
			t.Error("a run did not end a minute after its stop")
		}
	})
	return r
}

// wait is the run's error, once it ended.
func (r *workersRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(time.Minute):
		t.Fatalf("the run did not end within a minute; stderr:\n%s", r.stderr.String())
		return nil
	}
}

// workersPromLine is the line a run with --prometheus-addr says where it
// serves.
var workersPromLine = regexp.MustCompile(`serving Prometheus metrics at http://(\S+)` + regexp.QuoteMeta(promexport.MetricsPath))

// workersPromAddr waits for the run to say where it serves its metrics.
func workersPromAddr(t *testing.T, r *workersRun) string {
	t.Helper()
	var addr string
	if !eventually(t, 30*time.Second, func() bool {
		m := workersPromLine.FindStringSubmatch(r.stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("the run never said where it serves its metrics:\n%s", r.stderr.String())
	}
	return addr
}

// workersScrapeAfterRun waits until a run file has its summary line (the
// run is over and the endpoint lingers) and scrapes url with Prometheus'
// parser.
func workersScrapeAfterRun(t *testing.T, runFile, url string) map[string]*dto.MetricFamily {
	t.Helper()
	if !eventually(t, time.Minute, func() bool {
		b, _ := os.ReadFile(runFile)
		return bytes.Contains(b, []byte(`{"type":"summary"`))
	}) {
		t.Fatal("the run file has no summary line after a minute")
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scraping the run after its end: %v", err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the run's metrics do not parse: %v", err)
	}
	return fams
}

func workersDecodeHist(t *testing.T, s string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := stats.DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// workersWriteRun writes a merged run as tritontop merge -o does: the
// header, each tick, each step after its last tick, the summary.
func workersWriteRun(t *testing.T, path string, run *record.Run, sum record.Summary) {
	t.Helper()
	w, err := record.Create(path, run.Header)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, s := range run.Snapshots {
		if err := w.WriteSnapshot(s); err != nil {
			t.Fatal(err)
		}
		for next < len(run.Steps) && run.Steps[next].LastSeq <= s.Seq {
			if err := w.WriteStep(run.Steps[next]); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	for _, st := range run.Steps[next:] {
		if err := w.WriteStep(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(sum); err != nil {
		t.Fatal(err)
	}
}

// TestWorkersMerge is a distributed run in one process: three headless
// workers against one simulator, each a third of a fixed-step concurrency
// range, all waiting for the same start; then their run files merged as
// tritontop merge does (record.Merge, report.Summarize). The merged file's
// tick histograms are the workers' tick histograms merged, its percentiles
// those of one histogram holding every result; it replays and reports like
// any run; and the Prometheus endpoint of a worker says what its run file
// says.
func TestWorkersMerge(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
	files := make([]string, 3)
	workers := make([]*workersRun, 3)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i))
		c := quickConfig(srv, "simple")
		// Merge refuses ticks that end more than a tick apart, and a
		// collector held up past a boundary (by a slow statistics read on a
		// busy host, with -race) makes one tick of two: ticks of 500 ms,
		// as before the move, not 100.
		c.Duration, c.Tick = 0, 500*time.Millisecond
		c.Workers = session.WorkersConfig{Count: 3, Index: i, StartAt: start.Format(time.RFC3339Nano)}
		c.ConcurrencyRange, c.StepDuration, c.Record = "3:6:3", 3*c.Tick, files[i]
		if i == 0 {
			// It serves until the test has scraped it.
			c.Workers.PrometheusAddr, c.Workers.ScrapeInterval = "127.0.0.1:0", time.Minute
		}
		workers[i] = workersStart(t, c)
	}
	// Worker 0's endpoint still serves once its run file is complete.
	addr := workersPromAddr(t, workers[0])
	fams := workersScrapeAfterRun(t, files[0], "http://"+addr+promexport.MetricsPath)
	workers[0].stop()
	runs := make([]*record.Run, 3)
	for i, f := range files {
		runs[i] = workersCheckWorker(t, workers[i], i, f, start)
	}
	workersCheckPrometheus(t, fams, runs[0])

	// Given in any order.
	merged, err := record.Merge([]*record.Run{runs[2], runs[0], runs[1]}, []string{files[2], files[0], files[1]})
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if m := merged.Header.Merged; m == nil || len(m.Workers) != 3 || m.Count != 3 {
		t.Fatalf("merged header: %+v, want 3 of 3 workers", m)
	}
	path := filepath.Join(dir, "all.jsonl")
	workersWriteRun(t, path, merged, report.Summarize(merged.Header, merged.Snapshots, merged.Steps...))
	all, err := record.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if all.Summary == nil || all.Header.Merged == nil || all.Header.Load.Concurrency != 3 {
		t.Fatalf("merged file: summary %v, header %+v", all.Summary != nil, all.Header)
	}
	want, requests := workersCheckMerged(t, all, runs)
	workersCheckReplay(t, path, all, want, requests)

	// The same files again, or with one missing, say so.
	if _, err := record.Merge([]*record.Run{runs[0], runs[0], runs[1]}, []string{files[0], files[0], files[1]}); err == nil ||
		!strings.Contains(err.Error(), "are both worker 0 of 3") {
		t.Errorf("the same worker twice: %v", err)
	}
	part, err := record.Merge([]*record.Run{runs[0], runs[2]}, []string{files[0], files[2]})
	if err != nil {
		t.Fatalf("a missing worker: %v", err)
	}
	if m := part.Header.Merged; m == nil || !slices.Equal(m.Workers, []int{0, 2}) || m.Count != 3 {
		t.Errorf("a missing worker: merged %+v, want workers 0 and 2 of 3", m)
	}
}

// workersCheckWorker checks worker i's run, ended, and its file f: it
// waited for the shared start, its header says which worker of how many
// it is and the whole load, and its ticks begin at the start.
func workersCheckWorker(t *testing.T, w *workersRun, i int, f string, start time.Time) *record.Run {
	t.Helper()
	if err := w.wait(t); err != nil {
		t.Fatalf("worker %d: %v\n%s", i, err, w.stderr.String())
	}
	if stderr := w.stderr.String(); !strings.Contains(stderr, fmt.Sprintf("worker %d of 3 waits until", i)) {
		t.Errorf("worker %d did not say that it waits: %s", i, stderr)
	}
	run, err := record.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	h := run.Header
	if h.Worker == nil || h.Worker.Index != i || h.Worker.Count != 3 || h.Worker.Load.Concurrency != 3 || h.Load.Concurrency != 1 {
		t.Errorf("worker %d's header: worker %+v, load %+v", i, h.Worker, h.Load)
	}
	if !h.StartTime.Equal(start) {
		t.Errorf("worker %d started at %v, not at --start-at %v", i, h.StartTime, start)
	}
	if len(run.Steps) != 2 || len(run.Snapshots) < 6 {
		t.Fatalf("worker %d: %d steps, %d ticks", i, len(run.Steps), len(run.Snapshots))
	}
	// Ticks begin at the shared start.
	if first := run.Snapshots[0]; first.Time.Add(-first.Interval).Sub(start).Abs() > 50*time.Millisecond {
		t.Errorf("worker %d's first tick began at %v, %v after --start-at", i, first.Time.Add(-first.Interval), first.Time.Add(-first.Interval).Sub(start))
	}
	return run
}

// workersCheckReplay checks that the merged file replays and reports like
// any other.
func workersCheckReplay(t *testing.T, path string, all *record.Run, want stats.Latency, requests int64) {
	t.Helper()
	var replayed bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: path, JSON: true}, &replayed, io.Discard); err != nil {
		t.Fatalf("replay: %v", err)
	}
	var sum record.Summary
	if err := json.Unmarshal(replayed.Bytes(), &sum); err != nil {
		t.Fatalf("replay --json: %v", err)
	}
	if sum.Client.Requests != requests || len(sum.Steps) != 2 || sum.Client.Latency.P99 != want.P99 {
		t.Errorf("replayed summary: %d requests, %d steps, p99 %v", sum.Client.Requests, len(sum.Steps), sum.Client.Latency.P99)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, []report.HTMLRun{{Label: "all", File: path, Run: all}}, report.HTMLOptions{}); err != nil ||
		!bytes.Contains(page.Bytes(), []byte("<svg")) {
		t.Errorf("report: %v", err)
	}
}

// workersCheckMerged checks a merged run against its workers' runs: tick
// by tick, the merged histogram is the workers' merged; over the run, the
// percentiles are those of one histogram of every result; steps merge by
// index at the whole load's levels, and Triton's numbers are one worker's,
// not three times them. It returns the latency of every result and the
// workers' requests.
func workersCheckMerged(t *testing.T, all *record.Run, runs []*record.Run) (stats.Latency, int64) {
	t.Helper()
	whole := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	var minLat, maxLat time.Duration
	var requests int64
	for k, s := range all.Snapshots {
		want := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
		for _, r := range runs {
			if k < len(r.Snapshots) {
				want.Merge(workersDecodeHist(t, r.Snapshots[k].Histogram))
				requests += r.Snapshots[k].Tick.Requests
			}
		}
		if !workersDecodeHist(t, s.Histogram).Equals(want) {
			t.Errorf("tick %d: the merged histogram is not the workers' histograms merged", s.Seq)
		}
		whole.Merge(want)
	}
	for i, r := range runs {
		l := r.Snapshots[len(r.Snapshots)-1].Run.Latency
		if i == 0 || l.Min < minLat {
			minLat = l.Min
		}
		maxLat = max(maxLat, l.Max)
	}
	want := stats.LatencyFromHistogram(whole)
	want.Min, want.Max = minLat, maxLat
	want.Clamp()
	last := all.Snapshots[len(all.Snapshots)-1]
	for _, got := range []stats.Latency{last.Run.Latency, all.Summary.Client.Latency} {
		if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max || got.P50 != want.P50 ||
			got.P90 != want.P90 || got.P95 != want.P95 || got.P99 != want.P99 || got.P999 != want.P999 {
			t.Errorf("merged run latency %+v, want that of one histogram of every result %+v", got, want)
		}
	}
	if last.Run.Requests != requests || all.Summary.Client.Requests != requests {
		t.Errorf("merged run counts %d and %d requests, the workers %d", last.Run.Requests, all.Summary.Client.Requests, requests)
	}
	if len(all.Steps) != 2 || len(all.Summary.Steps) != 2 {
		t.Fatalf("%d merged steps, %d in the summary", len(all.Steps), len(all.Summary.Steps))
	}
	for i, st := range all.Summary.Steps {
		var req int64
		for _, r := range runs {
			req += r.Steps[i].Client.Requests
		}
		if st.Load.Concurrency != 3*(i+1) || st.Measurement == nil || st.Measurement.Index != i || st.Client.Requests != req || st.Approximate {
			t.Errorf("step %d: load %v, measurement %+v, %d requests (workers %d), approximate %v", i, st.Load, st.Measurement, st.Client.Requests, req, st.Approximate)
		}
		if st.Server.SuccessCount > 0 && st.Server.SuccessCount > st.Client.Successes*3/2 {
			t.Errorf("step %d: Triton counted %d successes for %d sent: server numbers were summed", i, st.Server.SuccessCount, st.Client.Successes)
		}
	}
	for k, s := range all.Snapshots {
		if w := runs[0].Snapshots[k].Server; w.Available && s.Server.SuccessCount != w.SuccessCount {
			t.Errorf("tick %d: server success count %d, worker 0 read %d", s.Seq, s.Server.SuccessCount, w.SuccessCount)
		}
	}
	return want, requests
}

// workersCheckPrometheus compares a worker's scrape with its run file.
func workersCheckPrometheus(t *testing.T, fams map[string]*dto.MetricFamily, run *record.Run) {
	t.Helper()
	total := run.Snapshots[len(run.Snapshots)-1].Run
	one := func(name string) *dto.Metric {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Fatalf("%s: %v", name, f)
		}
		m := f.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["model"] != "simple" || labels["worker"] != "0" {
			t.Errorf("%s labels %v, want model simple and worker 0", name, labels)
		}
		return m
	}
	for _, c := range []struct {
		name string
		want int64
	}{
		{promexport.MetricRequests, total.Requests},
		{promexport.MetricSuccesses, total.Successes},
		{promexport.MetricInferences, total.Inferences},
		{promexport.MetricBytesSent, total.BytesSent},
		{promexport.MetricBytesReceived, total.BytesReceived},
	} {
		if got := one(c.name).GetCounter().GetValue(); got != float64(c.want) {
			t.Errorf("%s = %v, the run file says %d", c.name, got, c.want)
		}
	}
	if got := one(promexport.MetricLatency).GetHistogram().GetSampleCount(); got != uint64(total.Latency.Count) {
		t.Errorf("%s count = %d, the run file says %d", promexport.MetricLatency, got, total.Latency.Count)
	}
	if total.Requests == 0 {
		t.Error("the worker counted no requests")
	}
}

// TestStartAt: a worker waits for --start-at and says so; a stop while it
// waits (the context that SIGINT cancels) ends it as a failed run (exit 1)
// with no run file (one with no tick would be refused by replay); a start
// in the past starts at once with a note.
func TestStartAt(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	runFile := filepath.Join(t.TempDir(), "w.jsonl")
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	c := quickConfig(srv, "simple")
	c.Duration = 0
	c.Workers = session.WorkersConfig{Count: 2, Index: 1, StartAt: start}
	c.Concurrency, c.Record = 4, runFile
	r := workersStart(t, c)
	if !eventually(t, 30*time.Second, func() bool { return strings.Contains(r.stderr.String(), "waits until") }) {
		t.Fatalf("no line says that the worker waits: %s", r.stderr.String())
	}
	r.stop()
	if err := r.wait(t); exitCode(err) != 1 {
		t.Errorf("%v (exit %d) after a stop while waiting, want exit 1: %s", err, exitCode(err), r.stderr.String())
	}
	if stderr := r.stderr.String(); !strings.Contains(stderr, "worker 1 of 2 waits until "+start) ||
		!strings.Contains(stderr, "interrupted while waiting for --start-at: nothing was measured") {
		t.Errorf("stderr: %s", stderr)
	}
	if _, err := os.Stat(runFile); !os.IsNotExist(err) {
		t.Errorf("an interrupted wait left its run file: %v", err)
	}

	c = quickConfig(srv, "simple")
	c.Workers.StartAt, c.Concurrency, c.Duration = "2020-01-02T03:04:05Z", 1, 500*time.Millisecond
	err, _, errOut := runConfig(t, c)
	if err != nil || !strings.Contains(errOut, "--start-at 2020-01-02T03:04:05Z was ") || !strings.Contains(errOut, "starts now") {
		t.Errorf("a start in the past: %v: %s", err, errOut)
	}
}

// TestPrometheusLingers: a run that ended by itself serves its metrics one
// scrape interval more, then frees the port.
func TestPrometheusLingers(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := quickConfig(srv, "simple")
	c.Concurrency, c.Duration = 1, 300*time.Millisecond
	c.Workers.PrometheusAddr, c.Workers.ScrapeInterval = "127.0.0.1:0", 500*time.Millisecond
	began := time.Now()
	_, stderr := runOK(t, c)
	if took := time.Since(began); took < 800*time.Millisecond {
		t.Errorf("the run took %v: the endpoint did not stay for the scrape interval after a 300ms run", took)
	}
	m := workersPromLine.FindStringSubmatch(stderr)
	if m == nil || !strings.Contains(stderr, "serving Prometheus metrics 500ms more") {
		t.Fatalf("stderr: %s", stderr)
	}
	// Closed afterwards: the port is free again.
	ln, err := net.Listen("tcp", m[1])
	if err != nil {
		t.Fatalf("the endpoint is still bound after the run: %v", err)
	}
	ln.Close()
}

// TestPrometheusSeveralModels: a headless run over two models on the
// simulator serves one series per model, each saying what that model's
// part of the run file says, and together what the whole run's says; the
// run-wide metrics have no model label.
func TestPrometheusSeveralModels(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	runFile := filepath.Join(t.TempDir(), "two.jsonl")
	c := quickConfig(srv, "")
	c.ModelArgs = []string{"resnet50@concurrency=4", "bert@rate=100"}
	c.Shapes = []string{"input_ids:64", "attention_mask:64"}
	c.Record = runFile
	// It serves until the test has scraped it.
	c.Workers.PrometheusAddr, c.Workers.ScrapeInterval = "127.0.0.1:0", time.Minute
	r := workersStart(t, c)
	addr := workersPromAddr(t, r)
	fams := workersScrapeAfterRun(t, runFile, "http://"+addr+promexport.MetricsPath)
	r.stop()
	if err := r.wait(t); err != nil {
		t.Fatalf("%v: %s", err, r.stderr.String())
	}
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	last := run.Snapshots[len(run.Snapshots)-1]
	if len(last.Models) != 2 {
		t.Fatalf("the run file's last tick has %d models", len(last.Models))
	}
	workersCheckSeries(t, fams, last)
}

// workersCheckSeries checks the scrape of a run over several models
// against its last tick.
func workersCheckSeries(t *testing.T, fams map[string]*dto.MetricFamily, last stats.Snapshot) {
	t.Helper()
	// series returns family name's one series of model.
	series := func(name, model string) *dto.Metric {
		t.Helper()
		var found []*dto.Metric
		for _, m := range fams[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "model" && l.GetValue() == model {
					found = append(found, m)
				}
			}
		}
		if len(found) != 1 {
			t.Fatalf("%s{model=%q}: %d series in %v", name, model, len(found), fams[name])
		}
		return found[0]
	}
	counters := []string{promexport.MetricRequests, promexport.MetricSuccesses, promexport.MetricInferences,
		promexport.MetricCancelled, promexport.MetricBytesSent, promexport.MetricBytesReceived}
	want := func(c stats.ClientStats) []int64 {
		return []int64{c.Requests, c.Successes, c.Inferences, c.Cancelled, c.BytesSent, c.BytesReceived}
	}
	added := make([]float64, len(counters))
	var latencies uint64
	for _, m := range last.Models {
		for i, name := range counters {
			got := series(name, m.Name).GetCounter().GetValue()
			if w := want(m.Run)[i]; got != float64(w) {
				t.Errorf("%s{model=%q} = %v, the run file says %d", name, m.Name, got, w)
			}
			added[i] += got
		}
		if m.Run.Requests == 0 {
			t.Errorf("model %s had no requests", m.Name)
		}
		h := series(promexport.MetricLatency, m.Name).GetHistogram()
		if h.GetSampleCount() != uint64(m.Run.Latency.Count) {
			t.Errorf("%s{model=%q} count = %d, the run file says %d", promexport.MetricLatency, m.Name, h.GetSampleCount(), m.Run.Latency.Count)
		}
		latencies += h.GetSampleCount()
	}
	for i, name := range counters {
		if w := want(last.Run)[i]; added[i] != float64(w) {
			t.Errorf("%s over the models = %v, the whole run's is %d", name, added[i], w)
		}
	}
	if latencies != uint64(last.Run.Latency.Count) {
		t.Errorf("%s counts over the models = %d, the whole run's is %d", promexport.MetricLatency, latencies, last.Run.Latency.Count)
	}
	// bert alone is open-loop, and so alone has latencies from the schedule.
	bert := last.Models[last.ModelIndex("bert")]
	if sched := fams[promexport.MetricScheduledLatency].GetMetric(); len(sched) != 1 || bert.Run.Scheduled == nil ||
		sched[0].GetHistogram().GetSampleCount() != uint64(bert.Run.Scheduled.Count) {
		t.Errorf("%s: %v, bert's from its schedule %+v", promexport.MetricScheduledLatency, sched, bert.Run.Scheduled)
	}
	if got := series(promexport.MetricLoadTarget, "bert"); got.GetGauge().GetValue() != 100 {
		t.Errorf("bert's load target = %v, want rate 100", got.GetGauge().GetValue())
	}
	for _, name := range []string{promexport.MetricProcessCPU, promexport.MetricLoadStep} {
		if ms := fams[name].GetMetric(); len(ms) != 1 || len(ms[0].GetLabel()) != 0 {
			t.Errorf("%s: %v, want one series without labels", name, ms)
		}
	}
}
