package interop_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/stats"
)

// identity is the model of the exactness tests: INT32 INPUT0 of dims [-1]
// (given the shape 16), dynamic batching, one CPU instance.
const identity = "identity_int32"

// TestExactnessGRPC and TestExactnessHTTP run tritontop in-process
// (package session, with its own Dial builder) against a real Triton at
// concurrency 8 for a short run, recorded to a file and read back with
// package record, and read Triton's own statistics before and after it.
// Then, over the whole run:
//
//   - tritontop's request, inference and execution counts equal the
//     deltas of Triton's statistics exactly, and so does the client's count
//     of successful requests;
//   - its request, queue and compute times per request equal
//     perf_analyzer's formulas (Δns / Δcount, integer division) on the same
//     deltas, to the nanosecond the run file's rounding allows: a tick
//     records its averages in whole nanoseconds, and the run's average is
//     the count-weighted mean of the ticks', so it may be up to 1 ns under
//     (compute, the sum of three such averages, up to 5 ns); in
//     perf_analyzer's whole microseconds they are the same number unless
//     the exact value lies within that much above a whole microsecond;
//   - the CSV writer, given the whole run as one load level, writes the
//     server columns perf_analyzer's report_writer computes from the same
//     deltas and the same client times.
//
// Then perf_analyzer runs the same model and load on the same server, and
// its CSV is held against tritontop's (see checkCSVsAgree for what "agree"
// means between two runs).
func TestExactnessGRPC(t *testing.T) {
	t.Parallel()
	testExactness(t, "grpc")
}

func TestExactnessHTTP(t *testing.T) {
	t.Parallel()
	testExactness(t, "http")
}

func testExactness(t *testing.T, protocol string) {
	begin := time.Now()
	srv := interop.Start(t, interop.Options{Models: []string{identity}})
	t.Logf("server ready in %v", srv.StartUp.Round(time.Millisecond))
	addr := srv.GRPC
	if protocol == "http" {
		addr = srv.HTTP
	}
	before := srv.Statistics(t, identity)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := session.Defaults()
	cfg.Record, cfg.Headless = file, true
	cfg.Tick, cfg.Duration, cfg.Drain = 200*time.Millisecond, 1500*time.Millisecond, 10*time.Second
	cfg.URL, cfg.Protocol, cfg.Model, cfg.Concurrency = addr, protocol, identity, 8
	cfg.MetricsURLs, cfg.Shapes = []string{srv.MetricsURL()}, []string{"INPUT0:16"}
	runTritontop(t, cfg, nil)
	d := interop.Delta(before, srv.Statistics(t, identity))
	t.Logf("Triton's deltas: %v", d)

	run, err := record.ReadAll(file)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary == nil || run.Truncated {
		t.Fatalf("the run file has no summary (truncated %v)", run.Truncated)
	}
	sum := run.Summary
	checkExact(t, "the run", sum.Client, sum.Server, d)
	checkWholeRunCSV(t, sum, d)

	var own bytes.Buffer
	if err := report.WriteCSV(&own, run); err != nil {
		t.Fatal(err)
	}
	beforePA := srv.Statistics(t, identity)
	pa := srv.PerfAnalyzer(t, protocol, "-m", identity, "--shape", "INPUT0:16", "--concurrency-range", "8",
		"-p", "300", "-s", "1000", "--verbose-csv")
	checkCSVsAgree(t, own.String(), pa, interop.Delta(beforePA, srv.Statistics(t, identity)))
	t.Logf("wall time %v", time.Since(begin).Round(time.Millisecond))
}

// runTritontop runs a session through its phases.
func runTritontop(t *testing.T, cfg session.Config, b session.Builder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	s, err := session.New(cfg, b, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v\n%s", err, stderr.String())
	}
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	s.Wait(ctx)
	if err := s.Finish(ctx); err != nil {
		t.Fatalf("Finish: %v\n%s", err, stderr.String())
	}
	t.Logf("tritontop's summary:\n%s", stdout.String())
}

// checkExact holds a span's counts and server times (the whole run, one
// model's or one replica's share) against Triton's deltas over it:
// checkCounts and checkAverages.
func checkExact(t *testing.T, what string, c stats.ClientStats, sv record.ServerSummary, d interop.ModelStats) {
	t.Helper()
	checkCounts(t, what, c, sv, d)
	checkAverages(t, what, sv, d)
	checkBatches(t, what, sv, d)
}

// checkBatches holds the span's batch sizes against Triton's: the average
// batch is Δinference_count / Δexecution_count, and the executions of
// each batch size are the deltas of Triton's batch_stats.
func checkBatches(t *testing.T, what string, sv record.ServerSummary, d interop.ModelStats) {
	t.Helper()
	if want := d.AvgBatch(); math.Abs(sv.AvgBatch-want) > 1e-9*want {
		t.Errorf("%s: average batch: tritontop %v, Triton's deltas %v", what, sv.AvgBatch, want)
	}
	var want []stats.BatchCount
	for _, b := range d.Batches {
		want = append(want, stats.BatchCount{Size: int(b.BatchSize), Count: int64(b.ComputeInfer.Count)})
	}
	if !slices.Equal(sv.Batches, want) {
		t.Errorf("%s: executions by batch size: tritontop %v, Triton's batch_stats deltas %v", what, sv.Batches, want)
	}
}

// checkCounts holds the span's counts against Triton's deltas: equal.
func checkCounts(t *testing.T, what string, c stats.ClientStats, sv record.ServerSummary, d interop.ModelStats) {
	t.Helper()
	in := d.Inference
	if in.Success.Count == 0 {
		t.Fatalf("%s: Triton counted no request", what)
	}
	for _, x := range []struct {
		name      string
		got, want uint64
	}{
		{"successful requests (server)", uint64(sv.SuccessCount), in.Success.Count},
		{"successful requests (client)", uint64(c.Successes), in.Success.Count},
		{"failed requests", uint64(sv.FailCount), in.Fail.Count},
		{"inferences", uint64(sv.InferenceCount), d.InferenceCount},
		{"executions", uint64(sv.ExecutionCount), d.ExecutionCount},
	} {
		if x.got != x.want {
			t.Errorf("%s: %s: tritontop %d, Triton's delta %d", what, x.name, x.got, x.want)
		}
	}
	if c.Errors != 0 || in.Fail.Count != 0 {
		t.Errorf("%s: errors: tritontop %d, Triton %d; want none (%+v)", what, c.Errors, in.Fail.Count, c.ErrorsByCode)
	}
}

// checkAverages holds the run's per-request server times against
// perf_analyzer's formulas on Triton's deltas.
func checkAverages(t *testing.T, what string, sv record.ServerSummary, d interop.ModelStats) {
	t.Helper()
	checkAveragesWithin(t, what, sv, d, 1)
}

// checkAveragesWithin is checkAverages with k times its room for
// rounding: an aggregate of replicas averages their per-tick averages,
// each whole nanoseconds, once more.
func checkAveragesWithin(t *testing.T, what string, sv record.ServerSummary, d interop.ModelStats, k uint64) {
	t.Helper()
	pa := d.Averages()
	for _, c := range []struct {
		name  string
		got   time.Duration
		want  uint64
		slack uint64
	}{
		{"request", sv.Request, pa.Request, k},
		{"queue", sv.Queue, pa.Queue, k},
		{"compute input", sv.ComputeInput, pa.ComputeInput, k},
		{"compute infer", sv.ComputeInfer, pa.ComputeInfer, k},
		{"compute output", sv.ComputeOutput, pa.ComputeOutput, k},
		{"compute", sv.Compute(), pa.Compute, 5 * k},
	} {
		t.Logf("%s: %-14s tritontop %d ns, perf_analyzer's formula %d ns (%d µs)", what, c.name, c.got, c.want, interop.USec(c.want))
		got, lo := uint64(c.got), c.want-min(c.slack, c.want)
		if got > c.want || got < lo {
			t.Errorf("%s: %s: tritontop %d ns, perf_analyzer's formula on Triton's deltas %d ns (allowed: %d ns under)", what, c.name, got, c.want, c.slack)
		}
		if us := interop.USec(got); us < interop.USec(lo) || us > interop.USec(c.want) {
			t.Errorf("%s: %s: tritontop %d µs, perf_analyzer %d µs", what, c.name, us, interop.USec(c.want))
		}
	}
}

// checkWholeRunCSV writes the whole run as one load level with report's
// CSV writer and holds its server columns against perf_analyzer's
// report_writer applied to Triton's deltas and tritontop's client times:
// Server Queue and each Server Compute column are the averages in whole
// microseconds; Network+Server Send/Recv is the client's wait (latency −
// send − receive) less queue and compute (Σ compute ns / count), floored
// at 0, in whole microseconds.
func checkWholeRunCSV(t *testing.T, sum *record.Summary, d interop.ModelStats) {
	t.Helper()
	whole := record.Step{Load: sum.Load, Ticks: sum.Ticks, Duration: sum.Client.Duration,
		Client: sum.Client, Server: sum.Server, Metrics: sum.Metrics, ClientCPU: sum.ClientCPU}
	var b bytes.Buffer
	if err := report.WriteCSVSteps(&b, []record.Step{whole}, report.CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	rows := parseCSV(t, b.String())
	pa := d.Averages()
	send, _ := sum.Client.ClientSend()
	recv, _ := sum.Client.ClientRecv()
	wait := max(sum.Client.Latency.Mean-send-recv, 0)
	// tritontop's queue is up to 1 ns under perf_analyzer's, its compute
	// up to 5 ns: its network time is up to 6 ns over.
	network := max(int64(wait)-int64(pa.Queue)-int64(pa.Compute), 0)
	for _, c := range []struct {
		col    string
		lo, hi uint64 // the nanoseconds tritontop's value may have
	}{
		{"Server Queue", pa.Queue - min(pa.Queue, 1), pa.Queue},
		{"Server Compute Input", pa.ComputeInput - min(pa.ComputeInput, 1), pa.ComputeInput},
		{"Server Compute Infer", pa.ComputeInfer - min(pa.ComputeInfer, 1), pa.ComputeInfer},
		{"Server Compute Output", pa.ComputeOutput - min(pa.ComputeOutput, 1), pa.ComputeOutput},
		{"Network+Server Send/Recv", uint64(network), uint64(max(int64(wait)-int64(pa.Queue)-int64(pa.Compute)+6, 0))},
	} {
		got, err := strconv.ParseUint(cell(t, rows, 0, c.col), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", c.col, err)
		}
		if got < interop.USec(c.lo) || got > interop.USec(c.hi) {
			t.Errorf("whole-run CSV %s = %d µs; perf_analyzer's formula on Triton's deltas gives %d µs (%d ns)", c.col, got, interop.USec(c.hi), c.hi)
		}
	}
}

// checkCSVsAgree holds tritontop's CSV of its run against perf_analyzer's
// CSV of a run of the same model and load on the same server. Two runs
// measure different requests, so their times are not compared. What
// agrees:
//
//   - the header: the same columns in the same order, byte for byte;
//   - the derivation of the server columns: perf_analyzer's Server Queue
//     and Server Compute columns are the averages of its own printed server
//     block (its deltas, Δns / Δcount), as checkWholeRunCSV found
//     tritontop's to be of Triton's; and in both CSVs Network+Server
//     Send/Recv is Avg latency − Client Send − Client Recv − Server Queue −
//     the three Server Compute columns, request/response is Client Send +
//     Client Recv, within what the columns' truncation to whole
//     microseconds allows;
//   - perf_analyzer's counts are of requests Triton counted during its
//     run (its windows are part of the run, so at most Triton's delta).
func checkCSVsAgree(t *testing.T, own string, pa interop.PerfResult, d interop.ModelStats) {
	t.Helper()
	ownHeader, _, _ := strings.Cut(own, "\n")
	if ownHeader != pa.CSVHeader {
		t.Errorf("CSV headers differ:\ntritontop     %s\nperf_analyzer %s", ownHeader, pa.CSVHeader)
	}
	s := pa.Server
	for _, c := range []struct {
		col  string
		want uint64
	}{
		{"Server Queue", s.QueueUS},
		{"Server Compute Input", s.ComputeInputUS},
		{"Server Compute Infer", s.ComputeInferUS},
		{"Server Compute Output", s.ComputeOutputUS},
	} {
		if got := pa.Cell(t, 0, c.col); got != strconv.FormatUint(c.want, 10) {
			t.Errorf("perf_analyzer's CSV %s = %s µs, its report's server block %d µs", c.col, got, c.want)
		}
	}
	if s.Successes == 0 || s.Successes > d.Inference.Success.Count || s.Inferences > d.InferenceCount || s.Executions > d.ExecutionCount {
		t.Errorf("perf_analyzer counted %d requests, %d inferences, %d executions; Triton %d, %d, %d over its whole run",
			s.Successes, s.Inferences, s.Executions, d.Inference.Success.Count, d.InferenceCount, d.ExecutionCount)
	}
	checkDerivedColumns(t, "tritontop", parseCSV(t, own))
	checkDerivedColumns(t, "perf_analyzer", pa.CSV)
	t.Logf("perf_analyzer: %+v; Triton over its run: %v", s, d)
	t.Logf("CSV\ntritontop:\n%sperf_analyzer:\n%s\n%s", own, pa.CSVHeader, strings.Join(pa.CSV[1], ","))
}

// checkDerivedColumns checks that a CSV's first row's Network+Server
// Send/Recv and request/response follow from its other columns as
// perf_analyzer's report_writer computes them, each column being a whole
// number of microseconds truncated from nanoseconds: network = latency −
// send − recv − queue − compute, where the truncations of the five terms
// put the true value between E − 6 µs and E, E the difference of the
// columns (compute, one average of three sums, is up to 3 µs over the sum
// of its three columns' truncations).
func checkDerivedColumns(t *testing.T, who string, rows [][]string) {
	t.Helper()
	n := func(col string) int64 {
		v, err := strconv.ParseInt(cell(t, rows, 0, col), 10, 64)
		if err != nil {
			t.Fatalf("%s's CSV %s: %v", who, col, err)
		}
		return v
	}
	send, recv := n("Client Send"), n("Client Recv")
	e := n("Avg latency") - send - recv - n("Server Queue") -
		n("Server Compute Input") - n("Server Compute Infer") - n("Server Compute Output")
	net := n("Network+Server Send/Recv")
	if net > max(e, 0) || net < e-6 {
		t.Errorf("%s's CSV: Network+Server Send/Recv %d µs; latency − send − recv − queue − compute gives %d µs", who, net, e)
	}
	if rr := n("request/response"); rr < send+recv || rr > send+recv+1 {
		t.Errorf("%s's CSV: request/response %d µs, Client Send + Client Recv %d µs", who, rr, send+recv)
	}
}

// parseCSV parses a CSV, the header row first.
func parseCSV(t *testing.T, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV (%v):\n%s", err, s)
	}
	return rows
}

// cell is the value of column col in data row row (0 the first).
func cell(t *testing.T, rows [][]string, row int, col string) string {
	t.Helper()
	for i, name := range rows[0] {
		if name == col && row+1 < len(rows) && i < len(rows[row+1]) {
			return rows[row+1][i]
		}
	}
	t.Fatalf("no column %q in row %d of %q", col, row, rows)
	return ""
}
