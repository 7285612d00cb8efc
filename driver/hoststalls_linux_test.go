package driver

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// startHostStalls starts a probe of the host's stalls: a thread of its own
// sleeping 2 ms at a time (nanosleep), counting the wake-ups more than a
// millisecond late. The function it returns stops the probe and gives the
// count and the latest wake-up.
func startHostStalls() func() (int, time.Duration) {
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
