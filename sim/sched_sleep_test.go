package sim

import (
	"testing"
	"time"
)

func TestSleeperWakesAndStops(t *testing.T) {
	sl := newSleeper()
	wake := make(chan struct{}, 1)
	stop := make(chan struct{})
	start := time.Now()
	if !sl.sleep(5*time.Millisecond, nil, stop) || time.Since(start) < 5*time.Millisecond {
		t.Errorf("sleep(5ms) returned after %v", time.Since(start))
	}
	start = time.Now()
	if !sl.sleep(50*time.Microsecond, nil, stop) || time.Since(start) < 50*time.Microsecond {
		t.Errorf("sleep(50µs) returned after %v", time.Since(start))
	}
	wake <- struct{}{}
	start = time.Now()
	if !sl.sleep(time.Hour, wake, stop) || time.Since(start) > time.Second {
		t.Errorf("a wake did not end the sleep")
	}
	close(stop)
	if sl.sleep(time.Hour, wake, stop) {
		t.Errorf("sleep ignored stop")
	}
	if sl.sleep(50*time.Microsecond, nil, stop) {
		t.Errorf("short sleep ignored stop")
	}
}

// BenchmarkSleeperLateness reports how late a 2 ms sleep ends on average,
// once the sleeper has learned its timer's lateness.
func BenchmarkSleeperLateness(b *testing.B) {
	sl := newSleeper()
	const d = 2 * time.Millisecond
	var late time.Duration
	for b.Loop() {
		start := time.Now()
		sl.sleep(d, nil, nil)
		late += time.Since(start) - d
	}
	b.ReportMetric(float64(late.Microseconds())/float64(b.N), "late-µs/op")
}
