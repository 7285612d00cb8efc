package session_test

import (
	"math"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
)

// TestStagesRun runs a ramp and a hold with Shape.Stages (--stages)
// against the simulator: the run ends with the plan, the header records
// it, every tick its mean target, the steps are the stages with the plan's
// mean, and the requests sent are the plan's count and the simulator's.
func TestStagesRun(t *testing.T) {
	t.Parallel()
	const stages = "1s:400/s,500ms:400/s"
	srv := startSim(t)
	c := quickConfig(srv, "simple")
	c.Duration, c.Shape.Stages = 0, stages
	c.Record = filepath.Join(t.TempDir(), "run.jsonl")
	stdout, _ := runOK(t, c)
	if !regexp.MustCompile(`rate 400/s, plan [12]\d\d\.\d`).MatchString(stdout) {
		t.Errorf("the steps do not show the ramp's mean plan:\n%s", stdout)
	}
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatal(err)
	}
	p := run.Header.Plan
	if p == nil || p.Stages != stages || p.Planned != 400 {
		t.Fatalf("header plan %+v", p)
	}
	plan, err := load.ParsePlan(stages)
	if err != nil {
		t.Fatal(err)
	}
	// Every tick of the plan has its mean target; a busy machine may send
	// the plan's last requests after its end, in ticks where the plan asks
	// for nothing. A snapshot's Elapsed counts from the collector's start,
	// the plan from the driver's, a little earlier: a tick that starts
	// within a few milliseconds of the plan's end may lie past it on the
	// plan's clock.
	const clocks = 10 * time.Millisecond
	var sent int64
	for _, s := range run.Snapshots {
		sent += s.Tick.Requests + s.Tick.Cancelled
		if !s.Load.Drain && s.Interval > 0 && s.Elapsed-s.Interval < plan.Duration()-clocks && s.Load.Planned <= 0 {
			t.Errorf("tick %d (%v to %v) has no planned target: %+v", s.Seq, s.Elapsed-s.Interval, s.Elapsed, s.Load)
		}
	}
	// 200 in the ramp (½·1 s·400/s) and 200 in the hold.
	served := traceServed(t, srv, "simple")
	if sent != 400 || served != 400 {
		t.Errorf("sent %d, the simulator served %d; the plan asks for 400", sent, served)
	}
	// Each step's planned load is the plan's mean over the step's ticks:
	// about 200/s for the ramp and 400/s for the hold, exactly the plan's
	// integral over the span the ticks cover (which a busy machine may
	// stretch past the plan's end, where the plan asks for nothing).
	steps := run.Summary.Steps
	if len(steps) != 2 {
		t.Fatalf("%d steps, want the 2 stages", len(steps))
	}
	for i, st := range steps {
		var from, to time.Duration = -1, 0
		for _, s := range run.Snapshots {
			if s.Seq >= st.FirstSeq && s.Seq <= st.LastSeq {
				if from < 0 {
					from = s.Elapsed - s.Interval
				}
				to = s.Elapsed
			}
		}
		want := (plan.Count(to) - plan.Count(from)) / (to - from).Seconds()
		if math.Abs(st.Load.Planned-want) > 0.05*want {
			t.Errorf("step %d (%v to %v): planned %.1f/s, the plan's mean over it is %.1f/s", i+1, from, to, st.Load.Planned, want)
		}
	}
	if p := steps[0].Load.Planned; p < 190 || p > 260 {
		t.Errorf("the ramp's step planned %.1f/s, want about 200", p)
	}
}

// TestStagesBadInput: a bad plan, or one given with what it cannot go with,
// is a usage error of one line.
func TestStagesBadInput(t *testing.T) {
	t.Parallel()
	both := writeFile(t, t.TempDir(), "both.yaml", "models:\n  - model: simple\n    rate: 10\n    stages: 1s:10/s\n")
	for _, tc := range []struct {
		set  func(*session.Config)
		want string
	}{
		{func(c *session.Config) { c.Shape.Stages = "30s:100" }, "bad --stages \"30s:100\": stage 1 \"30s:100\": the target is a rate N/s or a concurrency c=N"},
		{func(c *session.Config) { c.Shape.Stages, c.RequestRate = "1s:10/s", 5 }, "--stages sets the load over the whole run"},
		{func(c *session.Config) { c.Shape.Stages, c.Distribution = "1s:10/s", "poisson" }, "drop --request-distribution poisson"},
		{func(c *session.Config) { c.Shape.Stages = "1s:10/s,1s:c=2" }, "all rates or all concurrencies"},
		{func(c *session.Config) { c.ModelArgs, c.LoadFile = nil, both }, "model simple has stages and a concurrency or rate"},
	} {
		c := session.Defaults()
		c.ModelArgs, c.URL, c.Headless = []string{"simple"}, "127.0.0.1:1", true
		tc.set(&c)
		err, _, _ := runConfig(t, c)
		wantRefused(t, err, tc.want)
	}
}
