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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		drv, ticks := p.Drivers[0], 0
		var end func()
		p.OnEnd = func(e func()) { end = e }
		// Ticks 1–6 run, 7–12 are paused, 13–18 run again; then the run ends.
		p.Sinks = append(p.Sinks, report.SinkFunc(func(s stats.Snapshot) {
			switch ticks++; ticks {
			case 6:
				drv.Pause()
			case 12:
				drv.Resume()
			case 18:
				end()
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
