//go:build !linux

package testenv

import "time"

// StartHostStalls probes nothing where there is no nanosleep to time.
func StartHostStalls() func() (int, time.Duration) {
	return func() (int, time.Duration) { return 0, 0 }
}

// MaxIdleStalls is the most stalls StartHostStalls counts beside a run of a
// few seconds on an idle host: more, and the host was not idle.
const MaxIdleStalls = 30
