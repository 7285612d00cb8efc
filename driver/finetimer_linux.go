package driver

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fineTimer wakes the pacer on time to within tens of microseconds: a
// timerfd that the runtime's network poller watches, where a Go timer
// wakes through the poller's epoll timeout, which counts whole
// milliseconds (on an idle host a wait of 300 µs ends about 0.8 ms late;
// BENCHMARKS.md, "The open-loop pacer's timer"). A goroutine reads each
// expiry and signals C.
type fineTimer struct {
	f  *os.File
	fd int
	C  chan struct{}
}

// newFineTimer returns a fineTimer, or nil where the system has none.
func newFineTimer() *fineTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// A non-blocking descriptor: os.NewFile hands it to the poller, so a
	// Read parks the goroutine rather than a thread.
	t := &fineTimer{f: os.NewFile(uintptr(fd), "pacer timerfd"), fd: fd, C: make(chan struct{}, 1)}
	go t.read()
	return t
}

func (t *fineTimer) read() {
	var b [8]byte
	for {
		if _, err := t.f.Read(b[:]); err != nil {
			return // closed
		}
		select {
		case t.C <- struct{}{}:
		default:
		}
	}
}

// reset arms the timer to fire once after d. An expiry of an earlier arm
// may still signal C: the pacer takes it as a wake-up like any other and
// looks at its schedule again.
func (t *fineTimer) reset(d time.Duration) {
	select {
	case <-t.C:
	default:
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, 1)))}
	unix.TimerfdSettime(t.fd, 0, &spec, nil)
}

// stop disarms the timer.
func (t *fineTimer) stop() {
	var spec unix.ItimerSpec
	unix.TimerfdSettime(t.fd, 0, &spec, nil)
}

// close releases the timer and ends its goroutine.
func (t *fineTimer) close() { t.f.Close() }
