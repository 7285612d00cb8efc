package session

import (
	"io"
	"testing"
	"time"
)

// TestPlanDefaultsKeepAProgramsSettings: a plan's Config made by a program
// (Given nil) from Defaults() measures with the plan's own window, trials
// and tick, as tritontop plan does without the flags; one that sets them
// keeps its own, as the flags do.
func TestPlanDefaultsKeepAProgramsSettings(t *testing.T) {
	t.Parallel()
	plan := func(set func(*Config)) Config {
		t.Helper()
		c := Defaults()
		pc := DefaultPlan()
		pc.TargetRate = 100
		c.Model, c.URL, c.Plan, c.SLO.Specs = "m", "127.0.0.1:1", &pc, []string{"p99:100ms"}
		set(&c)
		if err := c.check(io.Discard); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := plan(func(*Config) {})
	if c.MeasurementIntervalMS != planMeasurementMS || c.MaxTrials != planMaxTrials || c.Tick != planTick {
		t.Errorf("a plan from Defaults(): window %d ms, %d trials, tick %v; want the plan's %d ms, %d, %v",
			c.MeasurementIntervalMS, c.MaxTrials, c.Tick, planMeasurementMS, planMaxTrials, planTick)
	}
	c = plan(func(c *Config) { c.MeasurementIntervalMS, c.MaxTrials, c.Tick = 300, 3, 2*time.Second })
	// The tick is at most the window.
	if c.MeasurementIntervalMS != 300 || c.MaxTrials != 3 || c.Tick != 300*time.Millisecond {
		t.Errorf("a plan's own settings: window %d ms, %d trials, tick %v; want 300 ms, 3, 300ms",
			c.MeasurementIntervalMS, c.MaxTrials, c.Tick)
	}
	c = plan(func(c *Config) { c.MeasurementIntervalMS, c.Tick = 5000, 2*time.Second })
	if c.MeasurementIntervalMS != planMeasurementMS || c.Tick != 2*time.Second {
		t.Errorf("a plan with Defaults()' window and its own tick: window %d ms, tick %v; want %d ms, 2s",
			c.MeasurementIntervalMS, c.Tick, planMeasurementMS)
	}
}
