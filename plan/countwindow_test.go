package plan

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
)

// TestStepperCountWindows: with CountWindow a window closes at the tick
// that brings its finished requests to the count, however many ticks that
// takes (one, or more than the interval's), and a level is stable on the
// last three windows as in time windows.
func TestStepperCountWindows(t *testing.T) {
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2)}}, Window: 2 * time.Second, CountWindow: 100})
	f.tick(s, 150, 1000, 1) // 150 requests in one tick: a window of one tick, shorter than the interval
	if got := len(s.trials); got != 1 {
		t.Fatalf("%d windows after a tick of 150 requests, want 1", got)
	}
	for range 4 {
		f.tick(s, 30, 1000, 1) // 30 a tick: the window needs 4 ticks, twice the interval
	}
	if got := len(s.trials); got != 2 {
		t.Fatalf("%d windows after 4 ticks of 30, want 2", got)
	}
	for range 13 {
		f.tick(s, 1, 1000, 1) // a slow level: no stretch limit closes the window
	}
	if got := len(s.trials); got != 2 {
		t.Fatalf("%d windows: a count window closed with 13 of its 100 requests", got)
	}
	// Three steady windows of 100 requests: the level is stable and done.
	s2, f2 := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2)}}, Window: time.Second, CountWindow: 100})
	for range 6 {
		f2.tick(s2, 50, 1000, 1)
	}
	if len(f2.steps) != 1 || !f2.steps[0].Measurement.Stable {
		t.Fatalf("after 3 steady count windows: steps %+v", f2.steps)
	}
	if w := f2.steps[0].Measurement.Windows; w != 3 {
		t.Errorf("the step is measured on %d windows, want 3", w)
	}
}
