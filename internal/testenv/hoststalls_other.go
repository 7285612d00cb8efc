//go:build !linux

package testenv

import "time"

// StartHostStalls probes nothing where there is no nanosleep to time.
func StartHostStalls() func() (int, time.Duration) {
	return func() (int, time.Duration) { return 0, 0 }
}

// MaxIdleStalls is the most stalls StartHostStalls counts beside a run of a
// few seconds on an idle host (the top of the idle range on this VM, 2 to
// 15): more, and the host was not idle. At 30, runs with 22 to 27 stalls
// counted as idle, and the trace replay and the capture round trip missed
// their 2 ms in them by up to 1.4 ms.
const MaxIdleStalls = 15
