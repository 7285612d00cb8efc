package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestHeadlessRecord is a user's CI run, through the command line: two
// seconds at concurrency 8 on the resnet50-like model, recorded, with a CSV.
// The record must agree with the simulator's own statistics, and its
// replay print the live run's summary.
func TestHeadlessRecord(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	runFile, csvFile := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	code, stdout, stderr := runCLI("-m", "resnet50", "-u", srv.GRPCAddr(),
		"--metrics-url", "http://"+srv.MetricsAddr()+"/metrics",
		"--concurrency", "8", "--duration", "2s", "--tick", "250ms", "--record", runFile, "-f", csvFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Request count", "infer/sec", "queue"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if run.Truncated || run.Summary == nil {
		t.Fatalf("record incomplete: truncated=%v summary=%v", run.Truncated, run.Summary != nil)
	}
	if n := len(run.Snapshots); n < 6 {
		t.Fatalf("%d ticks in a 2 s run at 250 ms per tick", n)
	}
	if !run.Header.Server.Simulated || run.Header.Model.Name != "resnet50" || len(run.Header.Model.Config) == 0 {
		t.Errorf("header: %+v", run.Header)
	}

	var succ, queueNS, computeNS, inferences, executions float64
	gpuSeen, read := false, 0
	var idle []string
	for i, s := range run.Snapshots {
		// The last tick, the drain's, and the sliver between the last whole
		// tick and the stop (on a busy host the stop comes up to a few
		// tens of ms after the last tick, shorter than a request here) may
		// see no request finish.
		// On a host kept busy by other tests a 250 ms tick can pass in a
		// stall of the client or the simulator with none finishing: one
		// such tick is the host's, more the run's.
		sliver := i >= len(run.Snapshots)-2 && s.Interval < 125*time.Millisecond
		if s.Tick.RequestsPerS <= 0 && i < len(run.Snapshots)-1 && !s.Load.Drain && !sliver {
			idle = append(idle, fmt.Sprintf("tick %d of %d (ends at %v, %v long, load %+v)", s.Seq, len(run.Snapshots), s.Elapsed, s.Interval, s.Load))
		}
		for _, g := range s.Metrics.GPUs {
			gpuSeen = gpuSeen || g.Utilization > 0
		}
		// A statistics read that came late (a busy host) is carried in a
		// later tick's ServerLate: every success Triton counted is in the
		// record, in time or late.
		for _, st := range []*stats.ServerStats{&s.Server, s.ServerLate} {
			if st == nil || !st.Available || st.Reset {
				continue
			}
			read++
			n := float64(st.SuccessCount)
			succ += n
			queueNS += n * float64(st.Queue)
			computeNS += n * float64(st.ComputeInput+st.ComputeInfer+st.ComputeOutput)
			inferences += float64(st.InferenceCount)
			executions += float64(st.ExecutionCount)
		}
	}
	if len(idle) > 1 {
		t.Errorf("%d ticks without throughput: %s", len(idle), strings.Join(idle, "; "))
	} else if len(idle) == 1 {
		t.Logf("a tick without throughput (a stall of the busy host): %s", idle[0])
	}
	if read < len(run.Snapshots)/2 {
		t.Errorf("server statistics read for %d of %d ticks", read, len(run.Snapshots))
	}
	if !gpuSeen {
		t.Error("no tick shows GPU utilization from the simulator's metrics")
	}
	if executions == 0 || inferences/executions <= 1 {
		t.Errorf("average batch size %.2f, want > 1 at concurrency 8 with dynamic batching", inferences/executions)
	}

	st, err := srv.Engine().ModelStatistics("resnet50", "")
	if err != nil {
		t.Fatal(err)
	}
	ms := st.ModelStats[0]
	is := ms.InferenceStats
	simQueue := float64(is.Queue.Ns) / float64(is.Queue.Count)
	simCompute := float64(is.ComputeInput.Ns+is.ComputeInfer.Ns+is.ComputeOutput.Ns) / float64(is.ComputeInfer.Count)
	recQueue, recCompute := queueNS/succ, computeNS/succ
	within := func(name string, got, want float64) {
		if want == 0 || math.Abs(got-want)/want > 0.10 {
			t.Errorf("%s: record says %.0f ns per request, the simulator %.0f (more than 10%% apart)", name, got, want)
		}
	}
	within("queue", recQueue, simQueue)
	within("compute", recCompute, simCompute)
	if math.Abs(succ-float64(is.Success.Count)) > 0.10*float64(is.Success.Count) {
		t.Errorf("record counts %.0f successes, the simulator %d", succ, is.Success.Count)
	}

	// Replay shows the same numbers as the live run did: the summary the
	// live run printed is the one the replay of its file prints.
	rcode, replayOut, rerr := runCLI("replay", runFile)
	if rcode != 0 {
		t.Fatalf("replay exit %d: %s", rcode, rerr)
	}
	if replayOut != stdout {
		t.Errorf("replay summary differs from the live run's:\nlive:\n%s\nreplay:\n%s", stdout, replayOut)
	}

	f, err := os.Open(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	if !strings.HasPrefix(sc.Text(), "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency,Avg latency") {
		t.Errorf("CSV header is not perf_analyzer's: %q", sc.Text())
	}
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "8,") {
		t.Errorf("CSV row for concurrency 8 missing: %q", sc.Text())
	}
}

// TestRecordSurvivesKill: kill -9 during a run leaves a file whose complete
// lines all read back.
func TestRecordSurvivesKill(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	bin := buildBinary(t)
	runFile := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := testproc.Command(bin, "-m", "simple", "-u", srv.GRPCAddr(), "--concurrency", "4",
		"--measurement-interval", "200", "--record", runFile)
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if b, _ := os.ReadFile(runFile); strings.Count(string(b), "\n") >= 6 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	b, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	complete := strings.Count(string(b), "\n")
	if complete < 6 {
		t.Fatalf("only %d lines written before the kill", complete)
	}
	for i, line := range strings.SplitN(string(b), "\n", complete+1)[:complete] {
		if !json.Valid([]byte(line)) {
			t.Fatalf("complete line %d is not JSON: %q", i+1, line)
		}
	}
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatalf("reading a killed run: %v", err)
	}
	if got := len(run.Snapshots); got != complete-1 {
		t.Errorf("read %d snapshots, the file has %d complete snapshot lines", got, complete-1)
	}
	if run.Summary != nil {
		t.Error("a killed run has a summary line")
	}
}
