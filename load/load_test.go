package load

import "testing"

func TestTargetNames(t *testing.T) {
	for _, c := range []struct {
		t     Target
		label string
		level float64
		open  bool
	}{
		{Target{Mode: Concurrency, Concurrency: 8}, "concurrency 8", 8, false},
		{Target{Mode: Rate, Rate: 200, Distribution: Poisson}, "rate 200/s", 200, true},
		{Target{Mode: Rate, Rate: 12.5}, "rate 12.5/s", 12.5, true},
		{Target{}, "concurrency 0", 0, false}, // the zero target is a closed loop of nothing
		// Several models' loads together: the closed-loop models' concurrency and the open-loop ones' rate.
		{Target{Mode: Mixed, Concurrency: 8, Rate: 200}, "concurrency 8 + rate 200/s", 8, false},
	} {
		if got := c.t.String(); got != c.label {
			t.Errorf("%+v: label %q, want %q", c.t, got, c.label)
		}
		if got := c.t.Level(); got != c.level {
			t.Errorf("%+v: level %v, want %v", c.t, got, c.level)
		}
		if c.t.Open() != c.open {
			t.Errorf("%+v: open %v", c.t, c.t.Open())
		}
	}
}
