package session_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/pb"
)

const model = "resnet50"

// startSim starts the demo's simulated Triton on loopback, client shared
// memory allowed (as tritontop demo's, for the --shared-memory runs); it
// closes when the test ends.
func startSim(t *testing.T) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(), Engine: sim.EngineOptions{AllowClientShm: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// simStats is the simulator's own count of the model's requests.
func simStats(t *testing.T, srv *sim.Server) *pb.InferStatistics {
	t.Helper()
	resp, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ms := range resp.GetModelStats() {
		if ms.GetName() == model {
			return ms.GetInferenceStats()
		}
	}
	t.Fatalf("the simulator has no statistics of %s", model)
	return nil
}

// runSession runs a session through its phases and returns Finish's error.
func runSession(t *testing.T, ctx context.Context, cfg session.Config, b session.Builder, stdout, stderr io.Writer) error {
	t.Helper()
	s, err := session.New(cfg, b, stdout, stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s.Started().IsZero() {
		t.Error("Started is zero after Start")
	}
	s.Wait(ctx)
	return s.Finish(ctx)
}

// checkCounts checks that the run file is whole (its summary line is
// there) and that its ticks count exactly the requests the simulator
// answered: every request the run sent was drained and counted.
func checkCounts(t *testing.T, path string, srv *sim.Server) *record.Run {
	t.Helper()
	run, err := record.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Truncated || run.Summary == nil {
		t.Fatalf("run file not finished: truncated %v, summary %v", run.Truncated, run.Summary != nil)
	}
	var succ, reqs int64
	for _, s := range run.Snapshots {
		succ += s.Tick.Successes
		reqs += s.Tick.Requests
	}
	st := simStats(t, srv)
	if succ == 0 || succ != int64(st.GetSuccess().GetCount()) {
		t.Errorf("the run file counts %d successes, the simulator %d", succ, st.GetSuccess().GetCount())
	}
	if want := int64(st.GetSuccess().GetCount() + st.GetFail().GetCount()); reqs != want {
		t.Errorf("the run file counts %d requests, the simulator %d", reqs, want)
	}
	if run.Header.Model.Name != model || run.Header.Model.Config == nil || !run.Header.Server.Simulated {
		t.Errorf("header: model %q, config %v, simulated %v", run.Header.Model.Name, run.Header.Model.Config != nil, run.Header.Server.Simulated)
	}
	return run
}

// TestSessionRecordsWhatTheServerCounts runs a headless recorded session of
// its own Builder over loopback gRPC for --duration's time: the run file's
// counts are the simulator's, and the summary goes to standard output.
func TestSessionRecordsWhatTheServerCounts(t *testing.T) {
	srv := startSim(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := session.Config{
		URL: srv.GRPCAddr(), Model: model, Concurrency: 4,
		Tick: 100 * time.Millisecond, Duration: 800 * time.Millisecond, Drain: 10 * time.Second,
		Record: path, Headless: true,
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := runSession(t, ctx, cfg, nil, &stdout, &stderr); err != nil {
		t.Fatalf("Finish: %v (stderr %s)", err, stderr.String())
	}
	run := checkCounts(t, path, srv)
	if len(run.Snapshots) < 2 {
		t.Fatalf("%d ticks in 800ms at 100ms", len(run.Snapshots))
	}
	// The end of the load is a change of load: the ticks after it are the
	// drain's, and the ticks before are not.
	if first, last := run.Snapshots[0], run.Snapshots[len(run.Snapshots)-1]; first.Load.Drain || !last.Load.Drain {
		t.Errorf("first tick drain %v, last tick drain %v: want the last alone marked", first.Load.Drain, last.Load.Drain)
	}
	if !strings.Contains(stdout.String(), model) {
		t.Errorf("the summary on standard output does not name the model:\n%s", stdout.String())
	}
}

// TestSessionCancelledFinishesItsFile ends a session without a duration by
// cancelling its context after its third tick: the run ends as it does on
// a signal, its file is finished, counting what the simulator did, the
// parts' Report gets the final summary, and Finish returns the Verdict's
// error alone.
func TestSessionCancelledFinishesItsFile(t *testing.T) {
	srv := startSim(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := session.Config{
		URL: srv.GRPCAddr(), Model: model, Concurrency: 2,
		Tick: 50 * time.Millisecond, Drain: 10 * time.Second, Record: path, Headless: true,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ticks atomic.Int32
	var reported *record.Summary
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		p.Sinks = append(p.Sinks, report.SinkFunc(func(stats.Snapshot) {
			if ticks.Add(1) == 3 {
				cancel()
			}
		}))
		p.Report = func(_ context.Context, sum record.Summary) error { reported = &sum; return nil }
		p.Verdict = func(record.Summary) error { return errVerdict }
		return p, nil
	})
	done := make(chan error, 1)
	go func() { done <- runSession(t, ctx, cfg, b, io.Discard, io.Discard) }()
	select {
	case err := <-done:
		// A stop is how a run without a duration ends: no error of its
		// own, only the verdict's.
		if !errors.Is(err, errVerdict) {
			t.Fatalf("a cancelled run: %v, want only the verdict's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled run did not end")
	}
	if n := ticks.Load(); n < 3 {
		t.Fatalf("%d ticks, want the 3 that cancel", n)
	}
	run := checkCounts(t, path, srv)
	if reported == nil || reported.Client.Successes != run.Summary.Client.Successes || reported.Client.Successes == 0 {
		t.Errorf("Report got %+v, want the run file's final summary", reported)
	}
}

var errVerdict = errors.New("verdict")

// TestSessionNotStartedKeepsNoFile: a run whose start never comes (the
// context ended during its wait) ends with ErrNotStarted and no run file.
func TestSessionNotStartedKeepsNoFile(t *testing.T) {
	srv := startSim(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := session.Config{URL: srv.GRPCAddr(), Model: model, Tick: 100 * time.Millisecond, Record: path, Headless: true}
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		p.WaitForStart = func(context.Context) bool { return false }
		return p, nil
	})
	s, err := session.New(cfg, b, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Connect made no run file: %v", err)
	}
	if err := s.Start(context.Background()); !errors.Is(err, session.ErrNotStarted) {
		t.Fatalf("Start: %v, want ErrNotStarted", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unstarted run's file is still there: %v", err)
	}
	if st := simStats(t, srv); st.GetSuccess().GetCount() != 0 {
		t.Errorf("the simulator answered %d requests of a run that never started", st.GetSuccess().GetCount())
	}
}

// TestSessionUnknownModel: a model the server does not serve fails
// Connect with an error naming it, and no run file is made.
func TestSessionUnknownModel(t *testing.T) {
	srv := startSim(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	s, err := session.New(session.Config{URL: srv.GRPCAddr(), Model: "nosuch", Tick: time.Second, Record: path}, nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("Connect: %v, want an error naming the model", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run that never connected made its file: %v", err)
	}
}

// TestSessionUnloadedModel: a model the server's repository has but not
// loaded in explicit model control (unloaded, or never loaded) is refused
// in one line that says so, with the repository's state and the server's
// words, and says to load it; not as an unknown name.
func TestSessionUnloadedModel(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(), Engine: sim.EngineOptions{ModelControl: sim.ModelControlExplicit},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.Engine().LoadModel(model); err != nil {
		t.Fatal(err)
	}
	if err := srv.Engine().UnloadModel(model); err != nil {
		t.Fatal(err)
	}
	c := quickConfig(srv, model)
	err, _, _ = runConfig(t, c)
	wantRefused(t, err, `model "resnet50" is in the server's repository but not loaded (UNAVAILABLE: unloaded;`,
		"Request for unknown model: 'resnet50' has no available versions", "POST v2/repository/models/resnet50/load")
	// Never loaded: the index has its name alone, as Triton's has.
	err, _, _ = runConfig(t, quickConfig(srv, "simple"))
	wantRefused(t, err, `model "simple" is in the server's repository but not loaded (not loaded;`,
		"Request for unknown model: 'simple' is not found", "POST v2/repository/models/simple/load")
}

// TestSessionSteppedRun gives a session a stepper (a sweep of two fixed
// steps, as --concurrency-range 1:2 --step-duration does): the stepper
// ends the run after its last level, each measured step reaches the run
// file, the summary and a progress line, and the counts are still the
// simulator's.
func TestSessionSteppedRun(t *testing.T) {
	srv := startSim(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := session.Config{
		URL: srv.GRPCAddr(), Model: model, Tick: 100 * time.Millisecond, Drain: 10 * time.Second,
		Record: path, Headless: true,
	}
	search := plan.Sweep{Levels: []load.Target{{Mode: load.Concurrency, Concurrency: 1}, {Mode: load.Concurrency, Concurrency: 2}}}
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		p.Search = search
		p.Stepper = func(onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error) {
			return plan.NewStepper(plan.Options{Search: search, Tick: cfg.Tick, Window: 300 * time.Millisecond,
				StepDuration: 300 * time.Millisecond, Drain: cfg.Drain, OnStep: onStep, OnDone: onDone},
				p.Drivers[0], p.Collector)
		}
		return p, nil
	})
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := runSession(t, ctx, cfg, b, io.Discard, &stderr); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	run := checkCounts(t, path, srv)
	if len(run.Steps) != 2 || len(run.Summary.Steps) != 2 {
		t.Fatalf("%d steps in the run file, %d in the summary, want 2", len(run.Steps), len(run.Summary.Steps))
	}
	for i, st := range run.Steps {
		if st.Load.Concurrency != i+1 || st.Client.Successes == 0 {
			t.Errorf("step %d: load %+v, %d successes", i, st.Load, st.Client.Successes)
		}
	}
	if n := strings.Count(stderr.String(), "concurrency "); n < 2 {
		t.Errorf("want a line per step on stderr, got:\n%s", stderr.String())
	}
}
