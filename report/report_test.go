package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// steppedRun is concurrency 1 for two ticks (100 then 300 requests), 2 for
// two ticks, then 1 again for one tick: three load steps.
func steppedRun(t *testing.T) *record.Run {
	return &record.Run{Header: testHeader(), Snapshots: withRun([]stats.Snapshot{
		tick(t, 1, 1, 100, 1000, [5]int64{900, 100, 50, 700, 20}),
		tick(t, 2, 1, 300, 3000, [5]int64{1100, 300, 50, 700, 20}),
		tick(t, 3, 2, 250, 2000, [5]int64{1800, 900, 60, 800, 20}),
		tick(t, 4, 2, 250, 2000, [5]int64{1800, 900, 60, 800, 20}),
		tick(t, 5, 1, 50, 1500, [5]int64{1000, 200, 50, 700, 20}),
	})}
}

const csvHeader = "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,response wait"

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, steppedRun(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[0] != csvHeader {
		t.Fatalf("header\n got %s\nwant %s", lines[0], csvHeader)
	}
	// One row per step, in the order the steps ran (not by throughput as
	// perf_analyzer sorts); unmeasured client send/receive columns empty.
	// The first step's server times are weighted by its
	// ticks' 100 and 300 requests: request (900·100+1100·300)/400 = 1050,
	// queue (100·100+300·300)/400 = 250; its mean latency is
	// (100·1000+300·3000)/400 = 2500, so network = 2500−250−770 = 1480.
	want := []string{
		"1,200,0,1480,250,50,700,20,0,3000,3000,3000,3000,2500,0,2500",
		"2,250,0,220,900,60,800,20,0,2000,2000,2000,2000,2000,0,2000",
		"1,50,0,530,200,50,700,20,0,1500,1500,1500,1500,1500,0,1500",
	}
	if got := lines[1:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n got %s\nwant %s", strings.Join(got, "\n    "), strings.Join(want, "\n    "))
	}
}

func TestWriteCSVRateModeAndGPUs(t *testing.T) {
	run := steppedRun(t)
	for i := range run.Snapshots {
		s := &run.Snapshots[i]
		s.Load = stats.Load{Mode: load.Rate, Rate: 12.5 * float64(1+i/2), Distribution: load.Poisson}
		u := 0.5 + 0.2*float64(i%2) // alternating 0.5, 0.7
		s.Metrics = stats.ServerMetrics{Available: true, GPUs: []stats.GPU{
			{UUID: "GPU-b", Utilization: u, MemoryUsed: float64(1000 + i), MemoryTotal: 8000,
				HasUtilization: true, HasMemory: true},
			{UUID: "GPU-a", Utilization: u + 0.2, MemoryUsed: 2000, MemoryTotal: 16000, PowerW: 200 + float64(10*i),
				HasUtilization: true, HasMemory: true, HasPower: true},
			// GPU-c reports memory only.
			{UUID: "GPU-c", MemoryUsed: 500, MemoryTotal: 4000, HasMemory: true},
		}}
		// GPU-b's power is reported in even ticks only.
		if i%2 == 0 {
			s.Metrics.GPUs[0].PowerW, s.Metrics.GPUs[0].HasPower = 100, true
		}
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, run); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	wantHeader := "Request Rate," + strings.TrimPrefix(csvHeader, "Concurrency,") +
		",Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,Total GPU Memory"
	if lines[0] != wantHeader {
		t.Fatalf("header\n got %s\nwant %s", lines[0], wantHeader)
	}
	if len(lines) != 4 {
		t.Fatalf("%d rows, want 3 (rates 12.5, 25, 37.5)", len(lines)-1)
	}
	// Rate 12.5 is ticks 1-2 (400 requests in 2 s): GPU-b utilization
	// (0.5+0.7)/2, GPU-a 0.2 more; GPU-a power (200+210)/2; GPU-b power
	// 100 from the one tick that reported it, not (100+0)/2; memory max.
	// GPU-c appears in the memory cells only.
	row := lines[1]
	if !strings.HasPrefix(row, "12.5,200,") {
		t.Errorf("row %q does not start with the rate and throughput", row)
	}
	wantGPU := ",GPU-a:0.8;GPU-b:0.6;,GPU-a:205;GPU-b:100;,GPU-a:2000;GPU-b:1001;GPU-c:500;,GPU-a:16000;GPU-b:8000;GPU-c:4000;"
	if !strings.HasSuffix(row, wantGPU) {
		t.Errorf("row %q\nwant GPU cells %q", row, wantGPU)
	}
}

func TestWriteCSVEmptyRun(t *testing.T) {
	if err := WriteCSV(&bytes.Buffer{}, &record.Run{Header: testHeader()}); err == nil {
		t.Error("CSV of a run without snapshots succeeded")
	}
}

// TestServerAverageMatchesDeltaOverCount checks the documented claim:
// count-weighting each tick's Δns/Δcount gives Σns/Σcount over the run to
// within a nanosecond, even when every tick's average was rounded.
func TestServerAverageMatchesDeltaOverCount(t *testing.T) {
	counts := []int64{3, 7, 1, 13, 2}
	deltaNs := []int64{1000, 5000, 999, 123457, 3}
	var snaps []stats.Snapshot
	var sumNs, sumN int64
	for i := range counts {
		avg := time.Duration(deltaNs[i] / counts[i]) // as a poller computes it, truncated
		snaps = append(snaps, stats.Snapshot{Seq: i + 1, Server: stats.ServerStats{
			Available: true, SuccessCount: counts[i], Request: avg, Queue: avg / 2, ComputeInfer: avg / 4,
		}})
		sumNs += deltaNs[i]
		sumN += counts[i]
	}
	// A tick without statistics and a reset tick must not count.
	snaps = append(snaps,
		stats.Snapshot{Seq: 6, Server: stats.ServerStats{Available: false, SuccessCount: 1000, Request: time.Hour}},
		stats.Snapshot{Seq: 7, Server: stats.ServerStats{Available: true, Reset: true, SuccessCount: 1000, Request: time.Hour}})
	sum := Summarize(testHeader(), snaps)
	want := time.Duration(sumNs / sumN)
	if d := sum.Server.Request - want; d < -1 || d > 1 {
		t.Errorf("weighted request average %v, Δns/Δcount %v", sum.Server.Request, want)
	}
	if sum.Server.SuccessCount != sumN || sum.Server.Ticks != 5 {
		t.Errorf("success count %d over %d ticks, want %d over 5", sum.Server.SuccessCount, sum.Server.Ticks, sumN)
	}
	if sum.Server.Overhead != sum.Server.Request-sum.Server.Queue-sum.Server.ComputeInfer {
		t.Errorf("overhead %v is not request − queue − compute", sum.Server.Overhead)
	}
}

func TestSummarize(t *testing.T) {
	run := steppedRun(t)
	run.Snapshots[4].Metrics = stats.ServerMetrics{Available: true, GPUs: []stats.GPU{
		{UUID: "GPU-x", Utilization: 0.75, PowerW: 300, HasUtilization: true, HasPower: true}}}
	run.Snapshots[3].Metrics = stats.ServerMetrics{Available: true, GPUs: []stats.GPU{
		{UUID: "GPU-x", Utilization: 0.25, PowerW: 100, HasUtilization: true, HasPower: true}}}
	sum := Summarize(run.Header, run.Snapshots)

	// The whole run is merged from the ticks, not taken from the last
	// snapshot's Run, which the dashboard's r key resets.
	var want stats.ClientStats
	for _, s := range run.Snapshots {
		want.Requests += s.Tick.Requests
		want.Inferences += s.Tick.Inferences
		want.Duration += s.Tick.Duration
	}
	if sum.Client.Requests != want.Requests || sum.Client.Inferences != want.Inferences || sum.Client.Duration != want.Duration {
		t.Errorf("client %+v, want the ticks' totals %+v", sum.Client, want)
	}
	if sum.Client.Latency.Count != sum.Client.Successes || sum.Client.Latency.P50 == 0 {
		t.Errorf("client latency %+v not merged from the ticks' histograms", sum.Client.Latency)
	}
	reset := slices.Clone(run.Snapshots)
	reset[4].Run = stats.ClientStats{Requests: 1} // r pressed just before the last tick
	if got := Summarize(run.Header, reset).Client; got.Requests != want.Requests {
		t.Errorf("after a reset of the windows the summary counts %d requests, want %d", got.Requests, want.Requests)
	}
	if len(sum.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(sum.Steps))
	}
	if st := sum.Steps[0]; st.FirstSeq != 1 || st.LastSeq != 2 || st.Client.Requests != 400 || st.Approximate {
		t.Errorf("first step %+v", st)
	}
	if got := sum.Server.InferenceCount; got != 950 {
		t.Errorf("server inference count %d, want 950", got)
	}
	if len(sum.Metrics.GPUs) != 1 {
		t.Fatalf("GPUs %+v", sum.Metrics.GPUs)
	}
	if g := sum.Metrics.GPUs[0]; g.UtilizationAvg != 0.5 || g.UtilizationMax != 0.75 || g.PowerAvgW != 200 ||
		!g.HasUtilization || !g.HasPower || g.HasMemory {
		t.Errorf("GPU summary %+v, want avg 0.5, max 0.75, power 200, no memory", g)
	}
	// 0.5 cores over 5 s = 2.5 CPU-seconds for 950 requests.
	cpuSeconds := 2.5
	if want := time.Duration(cpuSeconds / 950 * float64(time.Second)); sum.ClientCPU.PerRequest != want {
		t.Errorf("CPU per request %v, want %v", sum.ClientCPU.PerRequest, want)
	}
	if sum.Duration != 5*time.Second || !sum.Start.Equal(statstest.T0) || sum.Ticks != 5 {
		t.Errorf("span %v from %v, %d ticks", sum.Duration, sum.Start, sum.Ticks)
	}
}

func TestStepWithoutHistogramsIsApproximate(t *testing.T) {
	run := steppedRun(t)
	run.Snapshots[1].Histogram = ""
	sum := Summarize(run.Header, run.Snapshots)
	st := sum.Steps[0]
	if !st.Approximate {
		t.Fatal("step with a missing histogram not marked approximate")
	}
	// Count-weighted p50: (100·1000 + 300·3000)/400 µs.
	if st.Client.Latency.P50 != 2500*time.Microsecond {
		t.Errorf("approximate p50 %v, want 2.5ms", st.Client.Latency.P50)
	}
	if sum.Steps[1].Approximate {
		t.Error("a step with all its histograms marked approximate")
	}
}

// levelRun is steppedRun at one load level: concurrency 2 throughout.
func levelRun(t *testing.T) *record.Run {
	run := steppedRun(t)
	for i := range run.Snapshots {
		run.Snapshots[i].Load = stats.Load{Mode: load.Concurrency, Concurrency: 2, InFlight: 2}
	}
	return run
}

// TestWriteTextOneLevel: a run at one level reads as perf_analyzer's.
func TestWriteTextOneLevel(t *testing.T) {
	run := levelRun(t)
	last := &run.Snapshots[4]
	last.Tick.Errors = 7
	last.Tick.ErrorsByCode = []stats.ErrorCount{{Code: "UNAVAILABLE", Count: 7, Message: "connection refused"}}
	sum := Summarize(run.Header, run.Snapshots)
	var b bytes.Buffer
	if err := WriteText(&b, sum); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Server breakdown over the run, success-weighted:
	// request (900·100+1100·300+1800·500+1000·50)/950 = 1442 µs (1442.1).
	for _, want := range []string{
		"resnet50 v1 on 127.0.0.1:8001 (grpc)",
		"Request concurrency: 2\n",
		"Request count: 950\n",
		"Throughput: 190 infer/sec\n",
		"p50 latency: 2000 usec\n",
		"p95 latency: 3000 usec\n",
		"p99 latency: 3000 usec\n",
		"Inference count: 950\n",
		"Successful request count: 950\n",
		"Avg request latency: 1442 usec (overhead ",
		"compute infer 752 usec",
		"Errors: 7\n",
		"UNAVAILABLE: 7  connection refused",
		"usec per request",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Steps") {
		t.Errorf("a live run at one level printed a step table:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n > 40 {
		t.Errorf("summary is %d lines, more than a screen", n)
	}
}

// TestWriteTextSweep: a run over several levels has no pooled
// percentiles, and a row per step with each step's own numbers.
func TestWriteTextSweep(t *testing.T) {
	run := steppedRun(t)
	sum := Summarize(run.Header, run.Snapshots)
	var b bytes.Buffer
	if err := WriteText(&b, sum); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"3 load steps, concurrency 1 to concurrency 1\n",
		"Whole run: 950 requests, 950 inferences, 0 errors; Triton counted 950 successful requests in 950 executions\n",
		// Step 1: 400 requests in 2 s, p50 of 100 at 1 ms and 300 at 3 ms
		// is 3 ms; queue (100·100+300·300)/400 = 250 µs, compute 770 µs.
		"1     concurrency 1    200.0  3.00  3.00  3.00  3.00   0.25     0.77    1.0",
		"2     concurrency 2    250.0  2.00  2.00  2.00  2.00   0.90     0.88    1.0",
		"3     concurrency 1     50.0  1.50  1.50  1.50  1.50   0.20     0.77    1.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "p50 latency") {
		t.Errorf("a sweep's summary pools percentiles over its levels:\n%s", out)
	}
}

// TestGPUGaugesMissing checks that a gauge is averaged over the ticks that
// reported it, and that one never reported is left out of the text rather
// than printed as zero.
func TestGPUGaugesMissing(t *testing.T) {
	run := levelRun(t)
	gpus := [][]stats.GPU{
		{{UUID: "GPU-m", MemoryUsed: 3e9, MemoryTotal: 141e9, HasMemory: true},
			{UUID: "GPU-u", Utilization: 0.4, HasUtilization: true}},
		{{UUID: "GPU-m", MemoryUsed: 5e9, MemoryTotal: 141e9, HasMemory: true},
			{UUID: "GPU-u", PowerW: 250, HasPower: true}}, // utilization not reported this tick
		{{UUID: "GPU-m", MemoryUsed: 4e9, MemoryTotal: 141e9, HasMemory: true},
			{UUID: "GPU-u", Utilization: 0.8, PowerW: 350, HasUtilization: true, HasPower: true}},
	}
	for i, g := range gpus {
		run.Snapshots[i].Metrics = stats.ServerMetrics{Available: true, GPUs: g}
	}
	sum := Summarize(run.Header, run.Snapshots)
	if len(sum.Metrics.GPUs) != 2 {
		t.Fatalf("GPUs %+v", sum.Metrics.GPUs)
	}
	m, u := sum.Metrics.GPUs[0], sum.Metrics.GPUs[1]
	if m.HasUtilization || m.HasPower || !m.HasMemory || m.MemoryUsedMax != 5e9 || m.MemoryTotal != 141e9 || m.Ticks != 3 {
		t.Errorf("memory-only GPU %+v", m)
	}
	// Utilization over ticks 1 and 3, power over ticks 2 and 3.
	if !u.HasUtilization || !u.HasPower || u.HasMemory || math.Abs(u.UtilizationAvg-0.6) > 1e-12 ||
		u.UtilizationMax != 0.8 || u.PowerAvgW != 300 || u.PowerMaxW != 350 {
		t.Errorf("GPU %+v, want utilization avg 0.6, max 0.8, power avg 300, max 350, no memory", u)
	}

	var b bytes.Buffer
	if err := WriteText(&b, sum); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"    Avg GPU Utilization:\n      GPU-u : 60%\n    Avg GPU Power Usage:\n      GPU-u : 300 watts\n" +
			"    Max GPU Memory Usage:\n      GPU-m : 5000000000 bytes\n    Total GPU Memory:\n      GPU-m : 141000000000 bytes\n" +
			"    Max GPU Utilization:\n      GPU-u : 80%\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}

	// With memory only, no utilization or power heading.
	for i := range run.Snapshots {
		run.Snapshots[i].Metrics = stats.ServerMetrics{Available: true, GPUs: []stats.GPU{{UUID: "GPU-m", MemoryUsed: 1, MemoryTotal: 2, HasMemory: true}}}
	}
	b.Reset()
	if err := WriteText(&b, Summarize(run.Header, run.Snapshots)); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "Utilization") || strings.Contains(out, "Power") || !strings.Contains(out, "Total GPU Memory") {
		t.Errorf("memory-only summary:\n%s", out)
	}
}

func TestWriteJSON(t *testing.T) {
	run := steppedRun(t)
	sum := Summarize(run.Header, run.Snapshots)
	var b bytes.Buffer
	if err := WriteJSON(&b, sum); err != nil {
		t.Fatal(err)
	}
	var back record.Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Server.Request != sum.Server.Request || len(back.Steps) != 3 || back.Model != "resnet50" {
		t.Errorf("JSON round trip lost data: %+v", back)
	}
}

func TestWriteCSVStepsFromLiveSummarizer(t *testing.T) {
	run := steppedRun(t)
	z := NewSummarizer(run.Header)
	for _, s := range run.Snapshots {
		z.Add(s)
	}
	var fromRun, fromSteps bytes.Buffer
	if err := WriteCSV(&fromRun, run); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSVSteps(&fromSteps, z.Summary().Steps, CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	if fromRun.String() != fromSteps.String() {
		t.Errorf("CSV from a Summarizer's steps differs from the run's:\n%s\n%s", fromSteps.String(), fromRun.String())
	}
	if err := WriteCSVSteps(&fromSteps, nil, CSVOptions{}); err == nil {
		t.Error("CSV of no steps succeeded")
	}
}

// testHeader is a header as the CLI would build it.
func testHeader() record.Header {
	return record.Header{
		TritontopVersion: "0.0.0-test",
		StartTime:        statstest.T0,
		Server:           record.ServerInfo{URL: "127.0.0.1:8001", Protocol: "grpc"},
		Model:            record.ModelInfo{Name: "resnet50", Version: "1"},
		Load:             stats.Load{Mode: load.Concurrency, Concurrency: 1},
		Interval:         time.Second,
	}
}

var (
	tick    = statstest.Tick
	withRun = statstest.WithRun
)

func TestKnee(t *testing.T) {
	curve := func(xs []int, ys []float64) []record.Step {
		var steps []record.Step
		for i := range xs {
			steps = append(steps, record.Step{Load: stats.Load{Mode: load.Concurrency, Concurrency: xs[i]},
				Client: stats.ClientStats{InferPerS: ys[i]}})
		}
		return steps
	}
	// Rising then flat: the knee is where it flattens.
	if k := Knee(curve([]int{1, 2, 4, 8, 16, 32}, []float64{100, 200, 380, 500, 510, 505})); k != 3 {
		t.Errorf("knee %d, want 3 (concurrency 8)", k)
	}
	// In any order of the steps.
	if k := Knee(curve([]int{16, 1, 8, 4, 2, 32}, []float64{510, 100, 500, 380, 200, 505})); k != 2 {
		t.Errorf("knee %d, want 2 (concurrency 8)", k)
	}
	// A straight line has no knee, nor do two points.
	if k := Knee(curve([]int{1, 2, 3, 4}, []float64{100, 200, 300, 400})); k != -1 {
		t.Errorf("straight line knee %d", k)
	}
	if k := Knee(curve([]int{1, 2}, []float64{100, 500})); k != -1 {
		t.Errorf("two points knee %d", k)
	}
	// A level measured until stable that never was is no point of the
	// curve: counted, the unstable concurrency 16 would be the bend; left
	// out, the bend is at 8.
	steps := curve([]int{1, 2, 4, 8, 16, 32, 64}, []float64{100, 200, 380, 500, 640, 650, 655})
	for i := range steps {
		steps[i].Measurement = &record.Measurement{Stable: i != 4}
	}
	if k := Knee(steps); k != 3 {
		t.Errorf("knee %d, want 3 (concurrency 8) without the unstable level", k)
	}
}

func TestSummaryNamesServerResets(t *testing.T) {
	run := levelRun(t)
	run.Snapshots[2].Server.Reset = true
	run.Snapshots[2].Elapsed = 8 * time.Second
	sum := Summarize(run.Header, run.Snapshots)
	if len(sum.ServerResets) != 1 || sum.ServerResets[0] != 8*time.Second {
		t.Fatalf("resets %v", sum.ServerResets)
	}
	var b bytes.Buffer
	WriteText(&b, sum)
	if !strings.Contains(b.String(), "Server counters reset at 00:08 (the server restarted or the model was reloaded)") {
		t.Errorf("summary does not say when the server reset:\n%s", b.String())
	}
}
