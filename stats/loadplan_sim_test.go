package stats

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
)

// TestStageRampFollowsPlanAgainstSimulator runs a plan ramping 0 → 1000/s
// over 10 s against the simulator: each whole tick's requests, as the
// simulator counted them, are within 5% of the tick's mean planned rate,
// which itself follows the line, and the whole run sends exactly what the
// plan asks for (½·10 s·1000/s = 5000 requests), every one of them
// counted by the simulator.
func TestStageRampFollowsPlanAgainstSimulator(t *testing.T) {
	t.Parallel()
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
	if testenv.Race {
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

	// Each whole tick: its planned mean, the simulator's count and the
	// share of its sends that were late.
	type tick struct {
		seq                   int
		planned, served, late float64
		// quantum is one request in the tick, as a rate: a request that
		// finishes at the boundary counts in one tick or the next, so at a
		// low rate (the race detector's ramp starts at 10/s) one request
		// is more than 5%; half a request more for a tick a little
		// shorter or longer than its nominal length.
		quantum float64
	}
	var sent int64
	var ticks []tick
	unanswered := 0
	for _, s := range snaps {
		sent += s.Tick.Requests + s.Tick.Cancelled
		if s.Load.Drain || s.Interval < 900*time.Millisecond {
			continue
		}
		// The plan's mean over the tick is the line's value at its middle.
		mid := (s.Elapsed - s.Interval/2).Seconds()
		if line := top / 10 * mid; math.Abs(s.Load.Planned-line) > 0.02*line+5 {
			t.Errorf("tick %d (%.2fs): planned %.1f/s, the line is at %.1f/s", s.Seq, s.Elapsed.Seconds(), s.Load.Planned, line)
		}
		if !s.Server.Available {
			// Only a machine too starved to answer a statistics read in
			// time; judged below.
			t.Logf("tick %d: no server statistics: %s", s.Seq, s.Server.Err)
			unanswered++
			continue
		}
		secs := s.Interval.Seconds()
		tk := tick{s.Seq, s.Load.Planned, float64(s.Server.SuccessCount+s.Server.FailCount) / secs, 0, 1 / secs}
		if s.Tick.Requests > 0 {
			tk.late = float64(s.Tick.Late) / float64(s.Tick.Requests)
		}
		t.Logf("tick %d: planned %.1f/s, sent %.1f/s, served %.1f/s, %.0f%% late", s.Seq, tk.planned,
			float64(s.Tick.Requests)/secs, tk.served, 100*tk.late)
		ticks = append(ticks, tk)
	}
	whole := len(ticks) + unanswered
	// The achieved rate is the simulator's count, read at each tick's
	// boundary. A stall of a loaded test machine (the tick's sends then
	// late) moves requests into the next tick but loses none: such a tick
	// is held to 5% together with a neighbour (or both).
	deviations := 0
	for i, tk := range ticks {
		if math.Abs(tk.served-tk.planned) <= max(0.05*tk.planned, 1.5*tk.quantum) {
			continue
		}
		ok := false
		for _, j := range []int{i - 1, i + 1} {
			if j < 0 || j >= len(ticks) || max(tk.late, ticks[j].late) < 0.1 {
				continue
			}
			pair, plan := tk.served+ticks[j].served, tk.planned+ticks[j].planned
			ok = ok || math.Abs(pair-plan) <= 0.05*plan
		}
		if !ok && i > 0 && i+1 < len(ticks) && tk.late >= 0.1 {
			// A stall across a boundary on each side: the three together.
			three := ticks[i-1].served + tk.served + ticks[i+1].served
			plan := ticks[i-1].planned + tk.planned + ticks[i+1].planned
			ok = math.Abs(three-plan) <= 0.05*plan
		}
		if ok {
			t.Logf("tick %d: the simulator served %.1f/s of a planned %.1f/s, %.0f%% of its sends late: held with its neighbour", tk.seq, tk.served, tk.planned, 100*tk.late)
			continue
		}
		deviations++
		t.Logf("tick %d: the simulator served %.1f/s, the plan's mean is %.1f/s", tk.seq, tk.served, tk.planned)
	}
	// A machine so starved that most ticks' sends ran late, or that a
	// statistics read went unanswered, cannot tell the pacing from its own
	// stalls (the totals below still hold); otherwise every tick follows.
	lateTicks := 0
	for _, tk := range ticks {
		if tk.late >= 0.1 {
			lateTicks++
		}
	}
	switch {
	case deviations > 0 && (unanswered > 0 || 2*lateTicks > len(ticks)):
		t.Logf("%d ticks off the plan, but %d of %d ticks had 10%% or more of their sends late and %d statistics reads went unanswered: machine overloaded",
			deviations, lateTicks, len(ticks), unanswered)
	case deviations > 0 || unanswered > 0:
		t.Errorf("%d ticks off the plan by more than 5%%, %d statistics reads unanswered", deviations, unanswered)
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
