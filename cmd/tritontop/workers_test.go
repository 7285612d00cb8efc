package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/promexport"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// freePort returns a loopback address with a port that was free a moment
// ago, for a flag that needs one before the process starts.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func decodeHist(t *testing.T, s string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := stats.DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestWorkersMerge is a distributed run on one machine: three headless
// workers of the real CLI against one simulator, each a third of a
// fixed-step concurrency range, all waiting for the same start; then
// tritontop merge. The merged file's tick histograms are the workers' tick
// histograms merged, its percentiles those of one histogram holding every
// result; it replays and reports like any run; and the Prometheus endpoint
// of a worker says what its run file says.
func TestWorkersMerge(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	promAddr := freePort(t)
	start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
	files := make([]string, 3)
	results := make([]struct {
		code           int
		stdout, stderr string
	}, 3)
	var wg sync.WaitGroup
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i))
		args := []string{"-m", "simple", "-u", srv.GRPCAddr(), "--metrics-url", "http://" + srv.MetricsAddr() + "/metrics",
			"--workers", "3", "--worker-index", strconv.Itoa(i), "--start-at", start.Format(time.RFC3339Nano),
			"--concurrency-range", "3:6:3", "--tick", "500ms", "--step-duration", "1500ms",
			"--record", files[i], "--headless"}
		if i == 0 {
			args = append(args, "--prometheus-addr", promAddr, "--prometheus-scrape-interval", "5s")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			r.code, r.stdout, r.stderr = runCLI(args...)
		}()
	}
	// Worker 0's endpoint still serves once its run file is complete.
	fams := scrapeAfterRun(t, files[0], "http://"+promAddr+promexport.MetricsPath)
	wg.Wait()

	runs := make([]*record.Run, 3)
	for i, f := range files {
		if r := results[i]; r.code != 0 {
			t.Fatalf("worker %d: exit %d: %s", i, r.code, r.stderr)
		}
		if !strings.Contains(results[i].stderr, fmt.Sprintf("worker %d of 3 waits until", i)) {
			t.Errorf("worker %d did not say that it waits: %s", i, results[i].stderr)
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
		runs[i] = run
	}
	checkPrometheus(t, fams, runs[0])

	merged := filepath.Join(dir, "all.jsonl")
	// Given in any order.
	code, stdout, stderr := runCLI("merge", files[2], files[0], files[1], "-o", merged)
	if code != 0 || !strings.Contains(stdout, "3 of 3 workers") {
		t.Fatalf("merge: exit %d: %s%s", code, stdout, stderr)
	}
	all, err := record.ReadAll(merged)
	if err != nil {
		t.Fatal(err)
	}
	if all.Summary == nil || all.Header.Merged == nil || all.Header.Load.Concurrency != 3 {
		t.Fatalf("merged file: summary %v, header %+v", all.Summary != nil, all.Header)
	}

	// Tick by tick, the merged histogram is the workers' merged; over the
	// run, the percentiles are those of one histogram of every result.
	whole := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	var minLat, maxLat time.Duration
	var requests int64
	for k, s := range all.Snapshots {
		want := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
		for _, r := range runs {
			if k < len(r.Snapshots) {
				want.Merge(decodeHist(t, r.Snapshots[k].Histogram))
				requests += r.Snapshots[k].Tick.Requests
			}
		}
		if !decodeHist(t, s.Histogram).Equals(want) {
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

	// Steps merge by index, at the whole load's levels; Triton's numbers
	// are one worker's, not three times them.
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

	// The merged file replays and reports like any other.
	code, stdout, stderr = runCLI("replay", merged, "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("replay --json: %v", err)
	}
	if sum.Client.Requests != requests || len(sum.Steps) != 2 || sum.Client.Latency.P99 != want.P99 {
		t.Errorf("replayed summary: %d requests, %d steps, p99 %v", sum.Client.Requests, len(sum.Steps), sum.Client.Latency.P99)
	}
	page := filepath.Join(dir, "x.html")
	code, _, stderr = runCLI("report", merged, "-o", page)
	if b, err := os.ReadFile(page); code != 0 || err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("report: exit %d, %v: %s", code, err, stderr)
	}

	// The same files again, or with one missing, say so.
	code, _, stderr = runCLI("merge", files[0], files[0], files[1], "-o", filepath.Join(dir, "dup.jsonl"))
	if code != 2 || !strings.Contains(stderr, "are both worker 0 of 3") {
		t.Errorf("the same worker twice: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI("merge", files[0], files[2], "-o", filepath.Join(dir, "part.jsonl"))
	if code != 0 || !strings.Contains(stderr, "merging 2 of 3 workers (missing: 1)") {
		t.Errorf("a missing worker: exit %d: %s", code, stderr)
	}
}

// scrapeAfterRun waits until a run file has its summary line (the run is
// over and the endpoint lingers) and scrapes url with Prometheus' parser.
func scrapeAfterRun(t *testing.T, runFile, url string) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, _ := os.ReadFile(runFile); bytes.Contains(b, []byte(`{"type":"summary"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker's run file has no summary line after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scraping the worker after its run: %v", err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the worker's metrics do not parse: %v", err)
	}
	return fams
}

// checkPrometheus compares a worker's scrape with its run file.
func checkPrometheus(t *testing.T, fams map[string]*dto.MetricFamily, run *record.Run) {
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

// TestWorkerShare: each worker's share of the load, and of a range's
// levels, adds up to the whole; the first c mod N workers take one more.
func TestWorkerShare(t *testing.T) {
	cases := []struct {
		args   []string
		shares [][]float64 // per worker: the initial level, then the range's levels
	}{
		{[]string{"--concurrency", "10"}, [][]float64{{4}, {3}, {3}}},
		{[]string{"--request-rate", "100"}, [][]float64{{100.0 / 3}, {100.0 / 3}, {100.0 / 3}}},
		{[]string{"--concurrency-range", "3:11:4", "--step-duration", "2s"}, [][]float64{{1, 1, 3, 4}, {1, 1, 2, 4}, {1, 1, 2, 3}}},
		{[]string{"--request-rate-range", "30:90:30", "--step-duration", "2s"}, [][]float64{{10, 10, 20, 30}, {10, 10, 20, 30}, {10, 10, 20, 30}}},
	}
	for _, c := range cases {
		for i, want := range c.shares {
			args := append([]string{"-m", "simple", "--workers", "3", "--worker-index", strconv.Itoa(i)}, c.args...)
			f, err := parseLoadFlags("tritontop", args, &bytes.Buffer{}, true)
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			sc, err := loadFromFlags(f)
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			got := []float64{sc.initial.Level()}
			if sw, ok := sc.search.(plan.Sweep); ok {
				for _, l := range sw.Levels {
					got = append(got, l.Level())
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%v: levels %v, want %v", args, got, want)
			}
			if f.Workers.whole.Level() != wholeOf(c.args) {
				t.Errorf("%v: whole load %v", args, f.Workers.whole)
			}
		}
	}
	// Without --workers, the load is the whole.
	f, err := parseLoadFlags("tritontop", []string{"-m", "simple", "--concurrency", "10"}, &bytes.Buffer{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if sc, err := loadFromFlags(f); err != nil || sc.initial != (load.Target{Mode: load.Concurrency, Concurrency: 10}) {
		t.Errorf("one process: %+v, %v", sc.initial, err)
	}
}

// wholeOf is the whole initial load of TestWorkerShare's arguments.
func wholeOf(args []string) float64 {
	v, _ := strconv.ParseFloat(strings.Split(args[1], ":")[0], 64)
	return v
}

// lockedBuffer is a buffer written by a run and read by the test meanwhile.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStartAt: a worker waits for --start-at and says so; SIGINT while it
// waits ends it with exit 1 and no run file (one with no tick would be
// refused by replay); a start in the past starts at once with a note.
func TestStartAt(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	runFile := filepath.Join(dir, "w.jsonl")
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	go func() {
		done <- run([]string{"-m", "simple", "-u", srv.GRPCAddr(), "--workers", "2", "--worker-index", "1",
			"--start-at", start, "--concurrency", "4", "--record", runFile, "--headless"}, &stdout, &stderr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "waits until") {
		if time.Now().After(deadline) {
			t.Fatalf("no line says that the worker waits: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The run's signal handler is installed: the signal stops the run, not
	// the test.
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != exitFail {
			t.Errorf("exit %d after SIGINT while waiting, want %d: %s", code, exitFail, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not end the wait")
	}
	if !strings.Contains(stderr.String(), "worker 1 of 2 waits until "+start) ||
		!strings.Contains(stderr.String(), "interrupted while waiting for --start-at: nothing was measured") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if _, err := os.Stat(runFile); !os.IsNotExist(err) {
		t.Errorf("an interrupted wait left its run file: %v", err)
	}

	code, _, errOut := runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--start-at", "2020-01-02T03:04:05Z",
		"--concurrency", "1", "--duration", "500ms", "--headless")
	if code != 0 || !strings.Contains(errOut, "--start-at 2020-01-02T03:04:05Z was ") || !strings.Contains(errOut, "starts now") {
		t.Errorf("a start in the past: exit %d: %s", code, errOut)
	}
}

// TestPrometheusLingers: a run that ended by itself serves its metrics one
// scrape interval more, then frees the port.
func TestPrometheusLingers(t *testing.T) {
	srv := startSim(t)
	addr := freePort(t)
	began := time.Now()
	code, _, stderr := runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--concurrency", "1", "--duration", "300ms",
		"--headless", "--prometheus-addr", addr, "--prometheus-scrape-interval", "1500ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if took := time.Since(began); took < 1800*time.Millisecond {
		t.Errorf("the run took %v: the endpoint did not stay for the scrape interval after a 300ms run", took)
	}
	if !strings.Contains(stderr, "serving Prometheus metrics at http://"+addr+"/metrics") ||
		!strings.Contains(stderr, "serving Prometheus metrics 1.5s more") {
		t.Errorf("stderr: %s", stderr)
	}
	// Closed afterwards: the port is free again.
	ln, err := net.Listen("tcp", addr)
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
	if testing.Short() {
		t.Skip("3 s load run")
	}
	srv := startSim(t)
	promAddr := freePort(t)
	runFile := filepath.Join(t.TempDir(), "two.jsonl")
	done := make(chan struct {
		code   int
		stderr string
	}, 1)
	go func() {
		code, _, stderr := runCLI("-m", "resnet50@concurrency=4", "-m", "bert@rate=100", "--shape", "input_ids:64", "--shape", "attention_mask:64",
			"-u", srv.GRPCAddr(), "--tick", "500ms", "--duration", "3s", "--record", runFile, "--headless",
			"--prometheus-addr", promAddr, "--prometheus-scrape-interval", "2s")
		done <- struct {
			code   int
			stderr string
		}{code, stderr}
	}()
	fams := scrapeAfterRun(t, runFile, "http://"+promAddr+promexport.MetricsPath)
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	last := run.Snapshots[len(run.Snapshots)-1]
	if len(last.Models) != 2 {
		t.Fatalf("the run file's last tick has %d models", len(last.Models))
	}

	// series returns the value of family name's one series of model.
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

// TestJobArgsParse: the Kubernetes Job's command line, with the ConfigMap's
// values and a worker's index put in, is one tritontop accepts.
func TestJobArgsParse(t *testing.T) {
	args, workers := jobArgs(t)
	// The Job's run files go to the volume mounted at /out, which this
	// machine lacks: every output is checked before a run, so the test's
	// own directory stands in for it.
	out := t.TempDir()
	for i := range workers {
		a := substitute(t, args, i)
		for j := range a {
			if strings.HasPrefix(a[j], "/out/") {
				a[j] = filepath.Join(out, strings.TrimPrefix(a[j], "/out/"))
			}
		}
		f, err := parseLoadFlags("tritontop", a, &bytes.Buffer{}, true)
		if err != nil {
			t.Fatalf("worker %d: tritontop refuses the Job's arguments %q: %v", i, a, err)
		}
		if f.Workers.Count != workers || f.Workers.Index != i || f.Workers.start.IsZero() || f.Workers.PrometheusAddr == "" || !f.Headless {
			t.Errorf("worker %d: %+v", i, f.Workers)
		}
		if _, err := loadFromFlags(f); err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}

// TestWaitForStartEndsWithContext: the wait ends with its context (what
// SIGINT ends) or at the start, not before.
func TestWaitForStartEndsWithContext(t *testing.T) {
	w := &WorkersConfig{Count: 2, Index: 0, start: time.Now().Add(time.Hour)}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var out bytes.Buffer
	if w.waitForStart(ctx, &out) {
		t.Error("the wait outlived its context")
	}
	w.start = time.Now().Add(100 * time.Millisecond)
	began := time.Now()
	if !w.waitForStart(context.Background(), &out) || time.Since(began) < 90*time.Millisecond {
		t.Errorf("the wait ended after %v, before its start", time.Since(began))
	}
}
