//go:build !linux

package driver

import "time"

// fineTimer exists on Linux only (a timerfd); elsewhere the pacer waits on
// Go timers.
type fineTimer struct{ C chan struct{} }

func newFineTimer() *fineTimer           { return nil }
func (t *fineTimer) reset(time.Duration) {}
func (t *fineTimer) stop()               {}
func (t *fineTimer) close()              {}
