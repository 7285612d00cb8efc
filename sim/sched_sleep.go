package sim

import (
	"runtime"
	"time"
)

// sleeper waits precisely. Go timers wake up late, by about a millisecond
// on a loaded machine, which would stretch every simulated execution and
// every batching delay. A sleeper learns that lateness (slack) and asks its
// timer for d − slack; what is left, and waits too short for a timer, it
// spins with runtime.Gosched, which leaves the processor to other
// goroutines. Each goroutine that waits owns its sleeper.
type sleeper struct {
	timer *time.Timer
	slack time.Duration
}

// Bounds of the timer compensation.
const (
	minTimerWait = 100 * time.Microsecond
	maxSlack     = 2 * time.Millisecond
)

func newSleeper() *sleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &sleeper{timer: t}
}

// sleep waits for d, or until wake (which may be nil) receives; it reports
// false when stop closes first.
func (sl *sleeper) sleep(d time.Duration, wake, stop <-chan struct{}) bool {
	start := time.Now()
	if ask := d - sl.slack; ask >= minTimerWait {
		sl.timer.Reset(ask)
		select {
		case <-sl.timer.C:
		case <-wake:
			sl.timer.Stop()
			return true
		case <-stop:
			sl.timer.Stop()
			return false
		}
		late := time.Since(start) - ask
		sl.slack += (min(max(late, 0), maxSlack) - sl.slack) / 8
	}
	for time.Since(start) < d {
		select {
		case <-wake:
			return true
		case <-stop:
			return false
		default:
		}
		runtime.Gosched()
	}
	return true
}
