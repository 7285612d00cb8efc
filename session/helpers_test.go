package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// The tests of this package run sessions in-process against a simulator on
// 127.0.0.1:0, in parallel where they share nothing: short ticks, runs of a
// second or so, waits on events. What the command line does with a flag is
// tested here, through the Config field the flag sets.

// quickTick is the tick of a test's run: short, so that a run of a second
// has ticks enough to check.
const quickTick = 100 * time.Millisecond

// startSimWith starts a simulator serving models on loopback, closed when
// the test ends.
func startSimWith(t *testing.T, models ...sim.ModelSpec) *sim.Server {
	t.Helper()
	return startSimRepo(t, sim.Repository{Models: models})
}

// startSimRepo starts a simulator serving repo on loopback, its metrics
// refreshed every 100 ms; closed when the test ends.
func startSimRepo(t *testing.T, repo sim.Repository) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: repo,
		Engine:     sim.EngineOptions{MetricsInterval: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// batchingModel is a model whose behaviour differs sharply with load: one
// instance, batches of up to maxBatch, each execution fixedMS plus perItemMS
// per item, no jitter.
func batchingModel(name string, instances, maxBatch int, fixedMS, perItemMS float64) sim.ModelSpec {
	gpus := make([]int, instances)
	for i := range gpus {
		gpus[i] = i % 2
	}
	return sim.ModelSpec{
		Name: name, Platform: "onnxruntime_onnx", Backend: "onnxruntime", MaxBatchSize: maxBatch,
		Inputs:          []sim.TensorSpec{{Name: "input", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs:         []sim.TensorSpec{{Name: "output", DataType: "TYPE_FP32", Dims: []int64{16}}},
		DynamicBatching: &sim.DynamicBatchingSpec{},
		InstanceGroups:  []sim.InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU", GPUs: gpus}},
		Latency:         sim.LatencySpec{FixedUS: 1000 * fixedMS, PerItemUS: 1000 * perItemMS, Exponent: 1},
		Behaviour:       sim.BehaviourIdentity,
	}
}

// quickConfig is a headless run of model on srv over gRPC: the command
// line's defaults, a short tick, a second's run, the server's metrics.
func quickConfig(srv *sim.Server, model string) session.Config {
	c := session.Defaults()
	c.URL, c.Model = srv.GRPCAddr(), model
	c.MetricsURLs = []string{"http://" + srv.MetricsAddr() + "/metrics"}
	c.Tick, c.Duration, c.Headless = quickTick, time.Second, true
	return c
}

// runConfig runs c as the command line does (session.Run), within a
// minute, and returns its error and what it printed.
func runConfig(t *testing.T, c session.Config) (err error, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	err = session.Run(ctx, c, &out, &errb)
	return err, out.String(), errb.String()
}

// runOK runs c and fails the test unless it succeeded.
func runOK(t *testing.T, c session.Config) (stdout, stderr string) {
	t.Helper()
	err, stdout, stderr := runConfig(t, c)
	if err != nil {
		t.Fatalf("run failed: %v\nstderr:\n%s", err, stderr)
	}
	return stdout, stderr
}

// summaryOf runs c with a JSON summary and returns the summary.
func summaryOf(t *testing.T, c session.Config) record.Summary {
	t.Helper()
	c.JSON = true
	stdout, _ := runOK(t, c)
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary JSON: %v\n%s", err, stdout)
	}
	return sum
}

// recordRun runs c recording to a file in the test's directory and returns
// the run read back.
func recordRun(t *testing.T, c session.Config) (*record.Run, string) {
	t.Helper()
	c.Record = filepath.Join(t.TempDir(), "run.jsonl")
	_, stderr := runOK(t, c)
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatalf("reading the run file: %v\nstderr:\n%s", err, stderr)
	}
	return run, stderr
}

// exitCode is the command line's exit code for a run's error: 0, 1 (run
// failed), 2 (usage) or 99 (a verdict).
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case usage.Is(err):
		return 2
	case session.IsVerdict(err):
		return 99
	}
	return 1
}

// wantRefused checks that err is a usage error of one line holding every
// one of want.
func wantRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if !usage.Is(err) {
		t.Fatalf("got %v, want a usage error (exit 2) with %q", err, want)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error of more than one line: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

// eventually polls cond every 10 ms until it holds or limit passes.
func eventually(t *testing.T, limit time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
