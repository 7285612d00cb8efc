package session

import (
	"strings"
	"testing"
)

// TestPlanTargetRateLimits: a target rate out of range is refused with the
// range it must be in, its upper limit too.
func TestPlanTargetRateLimits(t *testing.T) {
	for _, rate := range []float64{0, -5, 1e300, 2e9} {
		c := Defaults()
		c.URL, c.Model, c.SLO.Specs = "127.0.0.1:1", "m", []string{"p99:100ms"}
		pc := DefaultPlan()
		pc.TargetRate = rate
		c.Plan = &pc
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "above 0 and at most 1e+09") {
			t.Errorf("--target-rate %v: %v; want the range with its upper limit", rate, err)
		}
	}
	c := Defaults()
	c.URL, c.Model, c.SLO.Specs = "127.0.0.1:1", "m", []string{"p99:100ms"}
	pc := DefaultPlan()
	pc.TargetRate = 1e9
	c.Plan = &pc
	if err := c.Validate(); err != nil {
		t.Errorf("--target-rate 1e9 refused: %v", err)
	}
}
