package driver

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

func mustPlan(t *testing.T, s string) *load.Plan {
	t.Helper()
	p, err := load.ParsePlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanPacer(t *testing.T) {
	ramp := mustPlan(t, "10s:1000/s") // count(t) = 50·t², rate 100·t
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, tc := range []struct {
		name    string
		pacer   *PlanPacer
		elapsed time.Duration
		hits    uint64
		want    time.Duration // wait
		stop    bool
	}{
		// From the start: hit 0 at once, hit 50 when the count is 50 (1 s).
		{"first hit at once", NewPlanPacer(ramp, 1, 0, 0, 0, 0), 0, 0, 0, false},
		{"hit 50 at 1s", NewPlanPacer(ramp, 1, 0, 0, 0, 0), 0, 50, time.Second, false},
		{"hit 1250 at 5s, asked at 4s", NewPlanPacer(ramp, 1, 0, 0, 0, 0), 4 * time.Second, 1250, time.Second, false},
		// A segment starting at 5 s (count 1250) with hit 1251: one gap at
		// 500/s later, 2 ms less a hair for the ramp.
		{"mid-plan segment", NewPlanPacer(ramp, 1, 0, 0, 5*time.Second, 1251), 0, 0, ms(1.9996), false},
		// Scaled ×2 from 5 s, when 1250 were planned: hit 1250 is due at
		// once, the next 1/1000 s later.
		{"scaled, at once", NewPlanPacer(ramp, 2, 5*time.Second, 1250, 5*time.Second, 1250), 0, 0, 0, false},
		{"scaled, next", NewPlanPacer(ramp, 2, 5*time.Second, 1250, 5*time.Second, 1250), 0, 1, ms(0.99990), false},
		// Overdue hits have a negative wait: the pacer is late by it.
		{"overdue", NewPlanPacer(ramp, 1, 0, 0, 0, 0), 2 * time.Second, 50, -time.Second, false},
		// 5000 hits fit in the plan: 0 to 4999; hit 5000 is due at its end.
		{"last", NewPlanPacer(ramp, 1, 0, 0, 0, 0), 0, 4999, ms(9999), false},
		{"past the end", NewPlanPacer(ramp, 1, 0, 0, 0, 0), 0, 5000, 0, true},
		{"zero scale", NewPlanPacer(ramp, 0, 0, 0, 0, 0), 0, 0, 0, true},
	} {
		w, stop := tc.pacer.Pace(tc.elapsed, tc.hits)
		if stop != tc.stop || !stop && (w-tc.want).Abs() > time.Microsecond {
			t.Errorf("%s: Pace(%v, %d) = %v, %v; want %v, %v", tc.name, tc.elapsed, tc.hits, w, stop, tc.want, tc.stop)
		}
	}
}

// changes records a driver's load changes.
type changes struct {
	mu   sync.Mutex
	list []load.Change
}

func (c *changes) add(ch load.Change) { c.mu.Lock(); c.list = append(c.list, ch); c.mu.Unlock() }

func (c *changes) all() []load.Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]load.Change(nil), c.list...)
}

// TestPlanRunsItsStagesAndEnds runs a ramp and a hold on a client that
// answers at once: the requests are the plan's count, each stage is a step
// announced when it starts, and the run drains and ends with the plan.
func TestPlanRunsItsStagesAndEnds(t *testing.T) {
	c := &nopClient{}
	d, err := New(Options{Client: c, Requests: []*triton.InferRequest{{}},
		Plan: mustPlan(t, "400ms:1000/s,400ms:1000/s"), PlanDrain: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var ch changes
	d.OnLoadChange(ch.add)
	res := startDriver(t, context.Background(), d).wait(t)
	// 200 in the ramp (½·0.4 s·1000/s), 400 in the hold: hits 0 to 599
	// (hit 600 would be due at the plan's end).
	if n := len(res); n != 600 {
		t.Errorf("%d requests, the plan asks for 600", n)
	}
	got := ch.all()
	if len(got) != 2 || got[0].State.Step != 1 || got[0].State.Target.Rate != 1000 || !got[1].State.Draining {
		t.Fatalf("changes %+v, want stage 2 then the drain", got)
	}
	if at := got[0].At; at < 400*time.Millisecond || at > 600*time.Millisecond {
		t.Errorf("stage 2 began at %v, want at 400ms", at)
	}
	// The ramp's gaps shrink with the rate: the ramp's last requests are
	// about 1 ms apart, its first ones much further.
	slices.SortFunc(res, func(a, b Result) int { return cmp.Compare(a.Scheduled, b.Scheduled) })
	if g0, g1 := res[2].Scheduled-res[1].Scheduled, res[199].Scheduled-res[198].Scheduled; g0 < 10*g1 {
		t.Errorf("gaps at the ramp's start %v and end %v", g0, g1)
	}
	if planned, ok := d.Planned(time.Hour); !ok || math.Abs(planned-600) > 1e-6 {
		t.Errorf("Planned at the end = %v, %v; want 600", planned, ok)
	}
}

// TestPlanOverrideScalesTheRest: SetRate while a plan runs scales the rest
// of it by the new rate over the stage's; the count before is unchanged.
func TestPlanOverrideScalesTheRest(t *testing.T) {
	c := &nopClient{}
	d, err := New(Options{Client: c, Requests: []*triton.InferRequest{{}},
		Plan: mustPlan(t, "0s:500/s,1s:500/s"), PlanDrain: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := startDriver(t, context.Background(), d)
	for d.State().InFlight == 0 && c.sends.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// Wait for half the plan on the driver's own clock.
	for {
		if p, _ := d.Planned(time.Since(d.Epoch())); p >= 250 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The override's instant lies between t1 and t2; the count planned at
	// it, c, lies between the counts at t1 (before the override) and t2
	// (after it, where the count grows faster). The rest of the plan runs
	// at twice its rate from c: 500 + (500-c) in all, c+2·(500-c).
	t1 := time.Since(d.Epoch())
	before, _ := d.Planned(t1)
	d.SetRate(1000)
	t2 := time.Since(d.Epoch())
	if st := d.State(); st.Target.Rate != 1000 || st.Step != 1 {
		t.Errorf("state after the override %+v, want rate 1000 in stage 2", st.Target)
	}
	atT2, _ := d.Planned(t2)
	res := s.wait(t)
	after, _ := d.Planned(time.Hour)
	lo, hi := 1000-atT2, 1000-before
	if after < lo-1e-6 || after > hi+1e-6 {
		t.Errorf("planned %v in all, want %v to %v (%v planned before the override, %v after it)", after, lo, hi, before, atT2)
	}
	want := after
	if n := float64(len(res)); math.Abs(n-want) > 1 {
		t.Errorf("%v requests, the plan with its override asks for %v", n, want)
	}
}

// TestConcurrencyPlanRamps: a concurrency plan's closed loop grows a worker
// at a time along its ramp, holds, and ends with the plan.
func TestConcurrencyPlanRamps(t *testing.T) {
	c := &nopClient{delay: 2 * time.Millisecond}
	d, err := New(Options{Client: c, Requests: []*triton.InferRequest{{}},
		Plan: mustPlan(t, "400ms:c=4,300ms:c=4"), PlanDrain: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := startDriver(t, context.Background(), d)
	seen := map[int]bool{}
	deadline := time.After(5 * time.Second)
	done := false
	for !done {
		select {
		case <-deadline:
			t.Fatal("the plan did not end")
		default:
		}
		st := d.State()
		seen[st.InFlight] = true
		if st.InFlight > 4 {
			t.Fatalf("%d in flight, the plan's top is 4", st.InFlight)
		}
		done = st.Draining
		time.Sleep(200 * time.Microsecond)
	}
	res := s.wait(t)
	if !seen[4] || !seen[1] {
		t.Errorf("in flight seen %v, want 1 on the way up and 4 at the top", seen)
	}
	planned, _ := d.Planned(time.Hour)
	if math.Abs(planned-(0.8+1.2)) > 1e-6 {
		t.Errorf("planned %v request-seconds, want 2", planned)
	}
	if len(res) == 0 {
		t.Error("no requests")
	}
}

func TestPlanRefusesPoisson(t *testing.T) {
	_, err := New(Options{Client: &nopClient{}, Requests: []*triton.InferRequest{{}},
		Plan: mustPlan(t, "1s:10/s"), Load: load.Target{Distribution: load.Poisson}})
	if err == nil {
		t.Fatal("a Poisson plan was accepted")
	}
}
