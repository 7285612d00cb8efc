package driver

import (
	"testing"
	"time"
)

func TestStepAt(t *testing.T) {
	s := time.Second
	three := []Step{{Duration: s}, {Duration: 2 * s}, {Duration: s}}
	open := []Step{{Duration: s}, {Duration: 0}}
	tests := []struct {
		steps   []Step
		elapsed time.Duration
		index   int
		end     time.Duration
		done    bool
	}{
		// At the start, step 0 runs until 1s.
		{three, 0, 0, s, false},
		// Just before 1s, still step 0.
		{three, s - 1, 0, s, false},
		// At 1s, step 1 begins and runs until 3s.
		{three, s, 1, 3 * s, false},
		// At 3.5s, step 2 until 4s.
		{three, 3500 * time.Millisecond, 2, 4 * s, false},
		// At 4s the schedule is over.
		{three, 4 * s, 3, 4 * s, true},
		// A zero-duration last step never ends.
		{open, time.Hour, 1, -1, false},
		// No steps: done at once.
		{nil, 0, 0, 0, true},
	}
	for _, tt := range tests {
		i, end, done := stepAt(tt.steps, tt.elapsed)
		if i != tt.index || end != tt.end || done != tt.done {
			t.Errorf("%d steps at %v: got (%d, %v, %v), want (%d, %v, %v)",
				len(tt.steps), tt.elapsed, i, end, done, tt.index, tt.end, tt.done)
		}
	}
}
