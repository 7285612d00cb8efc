package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// planQuick is a capacity plan of model on srv for slo and a target rate,
// measured as fast as a plan's windows allow (each must hold 50 finished
// requests): 200 ms windows of 100 ms ticks, at most 3 of them a level, the
// capacity level measured once. JSON summary, headless.
func planQuick(srv *sim.Server, model, slo string, target float64) session.Config {
	c := quickConfig(srv, model)
	pc := session.DefaultPlan()
	pc.TargetRate, pc.Budget.Repeat = target, 1
	c.Plan, c.SLO.Specs, c.Duration, c.JSON = &pc, []string{slo}, 0, true
	c.MeasurementIntervalMS, c.MaxTrials = 200, 3
	return c
}

// planSummaryOf parses a plan's JSON summary.
func planSummaryOf(t *testing.T, stdout, stderr string) record.Summary {
	t.Helper()
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Plan == nil {
		t.Fatalf("no plan in the summary (%v):\n%s", err, stderr)
	}
	return sum
}

// TestPlanImpossibleSLOExits99 plans against the simulator for an SLO no
// level can meet (p99 under 1 µs): no replicas are planned, the plan's
// error is a verdict (the command line's exit status 99) that says why in
// one line, and its JSON summary says the server was the simulator. On a
// busy host the refusal may blame the client rather than the SLO; both are
// a plan not made, and both are verdicts.
func TestPlanImpossibleSLOExits99(t *testing.T) {
	t.Parallel()
	// A model of small tensors and 1 ms batches: every window of the plan
	// fills with requests within its 200 ms.
	srv := startSimWith(t, batchingModel("quick", 1, 8, 1, 0))
	err, stdout, stderr := runConfig(t, planQuick(srv, "quick", "p99:1us", 100))
	if !session.IsVerdict(err) {
		t.Fatalf("%v, want a verdict (exit status 99):\n%s", err, stderr)
	}
	// "no load level met the SLO", or, refused as client-bound, "no level
	// met the SLO, but the client limited the measurement".
	if msg := err.Error(); !strings.HasPrefix(msg, "no plan: ") || !strings.Contains(msg, "level met the SLO") || strings.Contains(msg, "\n") {
		t.Errorf("the error does not say in one line that no level met the SLO: %q", msg)
	}
	sum := planSummaryOf(t, stdout, stderr)
	if p := sum.Plan; p.Replicas != 0 || p.HPA != "" || p.Refused == "" {
		t.Errorf("a plan was made for an impossible SLO: %+v", p)
	}
	if !sum.Simulated || !sum.Plan.Simulated {
		t.Errorf("the plan's summary does not say the server was the simulator: summary %v, plan %v", sum.Simulated, sum.Plan.Simulated)
	}
}
