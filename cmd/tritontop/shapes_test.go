package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
)

// TestStagesRun runs a ramp and a hold with --stages against the
// simulator: the run ends with the plan, the header records it, every tick
// its mean target, the steps are the stages with the plan's mean, and the
// requests sent are the plan's count and the simulator's.
func TestStagesRun(t *testing.T) {
	srv := startSim(t)
	runFile := filepath.Join(t.TempDir(), "run.jsonl")
	before := simCount(t, srv, "simple")
	code, stdout, stderr := runCLI("-m", "simple", "-u", srv.GRPCAddr(),
		"--stages", "2s:200/s,1s:200/s", "--record", runFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`rate 200/s, plan 1\d\d\.\d`).MatchString(stdout) {
		t.Errorf("the steps do not show the ramp's mean plan:\n%s", stdout)
	}
	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	p := run.Header.Plan
	if p == nil || p.Stages != "2s:200/s,1s:200/s" || p.Planned != 400 {
		t.Fatalf("header plan %+v", p)
	}
	var sent int64
	for _, s := range run.Snapshots {
		sent += s.Tick.Requests + s.Tick.Cancelled
		if !s.Load.Drain && s.Interval > 0 && s.Load.Planned <= 0 {
			t.Errorf("tick %d has no planned target: %+v", s.Seq, s.Load)
		}
	}
	// 200 in the ramp (½·2 s·200/s) and 200 in the hold.
	served := simCount(t, srv, "simple") - before
	if sent != 400 || served != 400 {
		t.Errorf("sent %d, the simulator served %d; the plan asks for 400", sent, served)
	}
	// Each step's planned load is the plan's mean over the step's ticks:
	// about 100/s for the ramp and 200/s for the hold, exactly the plan's
	// integral over the span the ticks cover (which a busy machine may
	// stretch past the plan's end, where the plan asks for nothing).
	plan, err := load.ParsePlan("2s:200/s,1s:200/s")
	if err != nil {
		t.Fatal(err)
	}
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
	if p := steps[0].Load.Planned; p < 95 || p > 130 {
		t.Errorf("the ramp's step planned %.1f/s, want about 100", p)
	}
}

// TestStagesBadInput: a bad plan, or one given with what it cannot go with,
// is a usage error of one line.
func TestStagesBadInput(t *testing.T) {
	dir := t.TempDir()
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte("models:\n  - model: simple\n    rate: 10\n    stages: 1s:10/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stages", "30s:100"}, "bad --stages \"30s:100\": stage 1 \"30s:100\": the target is a rate N/s or a concurrency c=N"},
		{[]string{"--stages", "1s:10/s", "--request-rate", "5"}, "--stages sets the load over the whole run"},
		{[]string{"--stages", "1s:10/s", "--request-distribution", "poisson"}, "drop --request-distribution poisson"},
		{[]string{"--stages", "1s:10/s,1s:c=2"}, "all rates or all concurrencies"},
		{[]string{"--load-file", both}, "model simple has stages and a concurrency or rate"},
	} {
		args := append([]string{"-m", "simple", "-u", "127.0.0.1:1"}, tc.args...)
		if tc.args[0] == "--load-file" {
			args = append([]string{"-u", "127.0.0.1:1"}, tc.args...)
		}
		code, _, stderr := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
