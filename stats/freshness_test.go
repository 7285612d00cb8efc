package stats

import (
	"testing"
	"time"
)

// TestGaugeFreshness: a GPU's utilization first read as 0 is missing until
// the server has refreshed its gauge (it changed, or GaugeSettle passed),
// then shown as read, 0% included.
func TestGaugeFreshness(t *testing.T) {
	var g gaugeFreshness
	t0 := time.Unix(1000, 0)
	read := func(at time.Duration, u float64) bool {
		gpus := []GPU{{UUID: "GPU-a", Utilization: u, HasUtilization: true}}
		g.check(gpus, t0.Add(at))
		return gpus[0].HasUtilization
	}
	steps := []struct {
		at   time.Duration
		u    float64
		want bool
	}{
		{0, 0, false},                      // the first reading: from before the run
		{500 * time.Millisecond, 0, false}, // not refreshed yet
		{2 * time.Second, 0.43, true},      // refreshed under load
		{2500 * time.Millisecond, 0.43, true},
		{3 * time.Second, 0, true}, // fresh from then on, 0% too
	}
	for _, s := range steps {
		if got := read(s.at, s.u); got != s.want {
			t.Errorf("at %v, %v: shown %v, want %v", s.at, s.u, got, s.want)
		}
	}
	// A first reading that shows load is shown.
	var busy gaugeFreshness
	gpus := []GPU{{UUID: "GPU-c", Utilization: 0.5, HasUtilization: true}}
	if busy.check(gpus, t0); !gpus[0].HasUtilization {
		t.Errorf("a first reading of 50%% was left out")
	}
	// An idle GPU that never changes is shown once the gauge settled.
	var idle gaugeFreshness
	for _, at := range []time.Duration{0, time.Second, GaugeSettle} {
		gpus := []GPU{{UUID: "GPU-b", HasUtilization: true}}
		idle.check(gpus, t0.Add(at))
		if want := at >= GaugeSettle; gpus[0].HasUtilization != want {
			t.Errorf("idle GPU at %v: shown %v, want %v", at, gpus[0].HasUtilization, want)
		}
	}
}
