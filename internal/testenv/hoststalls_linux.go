package testenv

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// StartHostStalls starts a probe of the host's stalls: a thread of its own
// sleeping 2 ms at a time (nanosleep), counting the wake-ups more than a
// millisecond late. The function it returns stops the probe and gives the
// count and the latest wake-up. On this VM idle it counts 2 to 15 in a few
// seconds; when its hypervisor is busy, 60 to 70 (MaxIdleStalls).
func StartHostStalls() func() (int, time.Duration) {
	var stop atomic.Bool
	type result struct {
		n     int
		worst time.Duration
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var r result
		ts := syscall.NsecToTimespec(int64(2 * time.Millisecond))
		for !stop.Load() {
			begin := time.Now()
			syscall.Nanosleep(&ts, nil)
			if late := time.Since(begin) - 2*time.Millisecond; late > time.Millisecond {
				r.n++
				r.worst = max(r.worst, late)
			}
		}
		done <- r
	}()
	return func() (int, time.Duration) {
		stop.Store(true)
		r := <-done
		return r.n, r.worst
	}
}

// MaxIdleStalls is the most stalls StartHostStalls counts beside a run of a
// few seconds on an idle host (the top of the idle range on this VM, 2 to
// 15): more, and the host was not idle. At 30, runs with 22 to 27 stalls
// counted as idle, and the trace replay and the capture round trip missed
// their 2 ms in them by up to 1.4 ms.
const MaxIdleStalls = 15
