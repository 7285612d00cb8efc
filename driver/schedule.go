package driver

import "time"

// stepAt returns which step of a stepped schedule covers the time elapsed
// since the schedule began, and when that step ends (relative to the same
// start). A step with a zero or negative Duration lasts for ever. done
// reports that every step is over.
func stepAt(steps []Step, elapsed time.Duration) (index int, end time.Duration, done bool) {
	var begin time.Duration
	for i, s := range steps {
		if s.Duration <= 0 {
			return i, -1, false
		}
		begin += s.Duration
		if elapsed < begin {
			return i, begin, false
		}
	}
	return len(steps), begin, true
}
