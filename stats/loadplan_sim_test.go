package stats

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
)

// TestStageRampFollowsPlanAgainstSimulator runs a plan ramping 0 → 1000/s
// over 10 s against the simulator: each whole tick's sent requests and the
// simulator's own count of them are within 5% of the tick's mean planned
// rate, which itself follows the line, and the whole run sends exactly
// what the plan asks for (½·10 s·1000/s = 5000 requests).
func TestStageRampFollowsPlanAgainstSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// simple's requests are small: the run measures the schedule, not
	// the copying of images on a shared machine.
	const model = "simple"
	srv, client, reqs := demoSim(t, ctx, model, sim.EngineOptions{MetricsInterval: 200 * time.Millisecond})
	// Under the race detector, which slows client and simulator several
	// times, the ramp climbs to 200/s instead.
	top := 1000.0
	if raceEnabled {
		top = 200
	}
	p, err := load.ParsePlan(fmt.Sprintf("10s:%g/s", top))
	if err != nil {
		t.Fatal(err)
	}
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs, Plan: p, PlanDrain: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	before := simStats(t, srv, model)
	col := NewCollector(CollectorOptions{
		Interval: time.Second,
		ReadWait: 500 * time.Millisecond,
		Results:  drv.Results(),
		Control:  drv,
		Epoch:    drv.Epoch(),
		Server:   NewServerPoller(client, model, ""),
	})
	col.Prime(ctx)
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	snaps, err := collect(t, ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	after := simStats(t, srv, model)

	var sent int64
	whole := 0
	for _, s := range snaps {
		sent += s.Tick.Requests + s.Tick.Cancelled
		if s.Load.Drain || s.Interval < 900*time.Millisecond {
			continue
		}
		whole++
		// The plan's mean over the tick is the line's value at its middle.
		mid := (s.Elapsed - s.Interval/2).Seconds()
		if line := top / 10 * mid; math.Abs(s.Load.Planned-line) > 0.02*line+5 {
			t.Errorf("tick %d (%.2fs): planned %.1f/s, the line is at %.1f/s", s.Seq, s.Elapsed.Seconds(), s.Load.Planned, line)
		}
		target := s.Load.Planned
		achieved := float64(s.Tick.Requests) / s.Interval.Seconds()
		served := float64(s.Server.SuccessCount+s.Server.FailCount) / s.Interval.Seconds()
		t.Logf("tick %d: planned %.1f/s, sent %.1f/s, served %.1f/s, late %d", s.Seq, target, achieved, served, s.Tick.Late)
		if math.Abs(achieved-target) > 0.05*target {
			t.Errorf("tick %d: %.1f requests/s finished, the plan's mean is %.1f/s", s.Seq, achieved, target)
		}
		if !s.Server.Available {
			t.Errorf("tick %d: no server statistics: %s", s.Seq, s.Server.Err)
		} else if math.Abs(served-target) > 0.05*target {
			t.Errorf("tick %d: the simulator served %.1f/s, the plan's mean is %.1f/s", s.Seq, served, target)
		}
	}
	if whole < 9 {
		t.Errorf("%d whole ticks in a 10 s plan, want at least 9", whole)
	}
	simCount := after.GetSuccess().GetCount() + after.GetFail().GetCount() - before.GetSuccess().GetCount() - before.GetFail().GetCount()
	// The count is top/20·t², so top·5 requests fall in the 10 s: 0 up to
	// top·5-1 (the next is due at 10 s, the plan's end).
	if want := int64(top * 5); sent != want || int64(simCount) != sent {
		t.Errorf("sent %d requests, the simulator counted %d; the plan asks for %d", sent, simCount, want)
	}
}
