package session_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
)

// TestPausedThroughput pauses a run for a third of its length, as the
// dashboard's p does (the driver's Pause and Resume): the summary's
// throughput is over the time load was applied, so it agrees with Little's
// law (requests in flight over average latency) and with requests over the
// unpaused time, each tick's rate is over its own unpaused part, and the
// paused time is stated.
func TestPausedThroughput(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	const conc = 8
	c := quickConfig(srv, model)
	c.Concurrency, c.Duration, c.Tick = conc, 0, 200*time.Millisecond
	c.Record = t.TempDir() + "/run.jsonl"
	run := pausedRun(t, c, 6, 12, 18)
	sum := run.Summary
	share := sum.Paused.Seconds() / sum.Duration.Seconds()
	if share < 0.2 || share > 0.5 {
		t.Fatalf("paused %v of %v (%.0f%%), want about a third: the pause was not recorded", sum.Paused, sum.Duration, 100*share)
	}
	cl := sum.Client
	little := conc / cl.Latency.Mean.Seconds()
	if d := math.Abs(cl.RequestsPerS-little) / little; d > 0.10 {
		t.Errorf("throughput %.1f/s, Little's law %d / %v = %.1f/s: %.1f%% apart", cl.RequestsPerS, conc, cl.Latency.Mean, little, 100*d)
	}
	unpaused := (sum.Duration - sum.Paused).Seconds()
	perUnpaused := float64(cl.Requests) / unpaused
	t.Logf("paused %v of %v; %.1f req/s, Little's law %.1f, requests / unpaused %.1f, over the whole run %.1f",
		sum.Paused, sum.Duration, cl.RequestsPerS, little, perUnpaused, float64(cl.Requests)/sum.Duration.Seconds())
	if d := math.Abs(cl.RequestsPerS-perUnpaused) / perUnpaused; d > 0.02 {
		t.Errorf("throughput %.1f/s, requests / unpaused time %d / %.2fs = %.1f/s: %.1f%% apart", cl.RequestsPerS, cl.Requests, unpaused, perUnpaused, 100*d)
	}
	var paused time.Duration
	for _, s := range run.Snapshots {
		paused += s.Paused
		if s.Tick.Duration != s.Interval-s.Paused {
			t.Errorf("tick %d: duration %v, want interval %v less paused %v", s.Seq, s.Tick.Duration, s.Interval, s.Paused)
		}
	}
	if paused != sum.Paused {
		t.Errorf("ticks paused %v in all, summary says %v", paused, sum.Paused)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, *sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "paused ") {
		t.Errorf("the text summary does not state the paused time:\n%s", text.String())
	}
}

// pausedRun runs c, pausing its load at the end of tick pause, resuming it
// at the end of tick resume and ending the run at the end of tick end, as
// the dashboard's p does (the driver's Pause and Resume), and returns its
// run file.
func pausedRun(t *testing.T, c session.Config, pause, resume, end int) *record.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		drv, ticks := p.Drivers[0], 0
		var stop func()
		p.OnEnd = func(e func()) { stop = e }
		p.Sinks = append(p.Sinks, report.SinkFunc(func(s stats.Snapshot) {
			switch ticks++; ticks {
			case pause:
				drv.Pause()
			case resume:
				drv.Resume()
			case end:
				stop()
			}
		}))
		return p, nil
	})
	if err := runSession(t, ctx, c, b, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	run, err := record.ReadAll(c.Record)
	if err != nil || run.Summary == nil {
		t.Fatalf("the run file: %v", err)
	}
	return run
}

// slowRepository is one model of 300 ms per request on sixteen CPU
// instances: requests in flight at a pause take three 100 ms ticks to end.
const slowRepository = `{"models": [{"name": "slow", "backend": "python", "max_batch_size": 0,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
  "instance_group": [{"count": 16, "kind": "KIND_CPU"}],
  "latency": {"fixed_us": 300000},
  "behaviour": "identity"}]}`

// TestPauseCountsTheRequestsInFlight: the requests in flight at a pause
// finish during it, and the pause is idle (left out of the rates) only
// after them. Counted from the pause itself, their time was left out and
// their completions counted over nothing: a plan's progress line printed
// 392,755 infer/s between steps, and a tick 0 req/s with requests in it.
func TestPauseCountsTheRequestsInFlight(t *testing.T) {
	t.Parallel()
	repo, err := sim.LoadRepository(writeFile(t, t.TempDir(), "repo.json", slowRepository))
	if err != nil {
		t.Fatal(err)
	}
	srv := startSimRepo(t, repo)
	c := quickConfig(srv, "slow")
	c.Concurrency, c.Duration, c.Tick = 8, 0, 100*time.Millisecond
	c.Record = t.TempDir() + "/run.jsonl"
	run := pausedRun(t, c, 4, 12, 16)
	drained := 0
	for _, s := range run.Snapshots {
		if s.Tick.Requests > 0 && !(s.Tick.RequestsPerS > 0) {
			t.Errorf("tick %d (paused %v of %v): %d requests at %.1f req/s", s.Seq, s.Paused, s.Interval, s.Tick.Requests, s.Tick.RequestsPerS)
		}
		if s.Load.Paused {
			drained += int(s.Tick.Requests)
		}
	}
	if drained != c.Concurrency {
		t.Errorf("the paused ticks counted %d requests, want the %d in flight at the pause", drained, c.Concurrency)
	}
	// The pause lasts eight ticks, 800 ms (Pause and Resume both come
	// from a tick's sink, a little after its end). Its requests in flight
	// run in step, all sent at one wave of completions and all ending at
	// the next, 300 ms on: they end 100 to 300 ms into the pause, and the
	// idle pause is 500 to 700 ms. Counted from the pause itself it was
	// 795 to 803 ms.
	if p := run.Summary.Paused; p > 720*time.Millisecond || p < 300*time.Millisecond {
		t.Errorf("paused %v, want 500 to 700 ms: the 800 ms pause less its requests' last 100 to 300 ms", p)
	}
}
