package driver

import (
	"math"
	"testing"
	"time"
)

func TestConstantPacer(t *testing.T) {
	tests := []struct {
		rate    float64
		elapsed time.Duration
		hits    uint64
		wait    time.Duration
		stop    bool
	}{
		// The first hit is due at once.
		{rate: 1, elapsed: 0, hits: 0, wait: 0},
		// 1 hit/s, 1 hit sent, nothing elapsed => the next in 1s.
		{rate: 1, elapsed: 0, hits: 1, wait: time.Second},
		// 2 hits/s, 9 hits sent, 4.9s elapsed => hit 9 due at 4.5s, 400ms overdue.
		{rate: 2, elapsed: 4900 * time.Millisecond, hits: 9, wait: -400 * time.Millisecond},
		// 2 hits/s, 10 hits sent, 4.9s elapsed => hit 10 due at 5s, in 100ms.
		{rate: 2, elapsed: 4900 * time.Millisecond, hits: 10, wait: 100 * time.Millisecond},
		// 200 hits/s, 1000 hits sent, 4.99s elapsed => due at 5s, in 10ms.
		{rate: 200, elapsed: 4990 * time.Millisecond, hits: 1000, wait: 10 * time.Millisecond},
		// 0.5 hits/s, 3 hits sent, 1s elapsed => due at 6s, in 5s.
		{rate: 0.5, elapsed: time.Second, hits: 3, wait: 5 * time.Second},
		// Zero, negative and infinite rates never send.
		{rate: 0, elapsed: time.Second, hits: 0, stop: true},
		{rate: -1, elapsed: 0, hits: 0, stop: true},
		{rate: math.Inf(1), elapsed: 0, hits: 0, stop: true},
		{rate: math.NaN(), elapsed: 0, hits: 0, stop: true},
	}
	for _, tt := range tests {
		wait, stop := ConstantPacer{Rate: tt.rate}.Pace(tt.elapsed, tt.hits)
		if wait != tt.wait || stop != tt.stop {
			t.Errorf("rate %v, %v elapsed, %d hits: got (%v, %v), want (%v, %v)",
				tt.rate, tt.elapsed, tt.hits, wait, stop, tt.wait, tt.stop)
		}
	}
}

func TestPoissonPacerDeterministic(t *testing.T) {
	a, b := NewPoissonPacer(100, 7), NewPoissonPacer(100, 7)
	for hits := uint64(0); hits < 100; hits++ {
		wa, _ := a.Pace(0, hits)
		wb, _ := b.Pace(0, hits)
		if wa != wb {
			t.Fatalf("hit %d: same seed gave %v and %v", hits, wa, wb)
		}
	}
	c := NewPoissonPacer(100, 8)
	same := 0
	for hits := uint64(0); hits < 100; hits++ {
		wa, _ := a.Pace(0, hits)
		wc, _ := c.Pace(0, hits)
		if wa == wc {
			same++
		}
	}
	if same > 1 {
		t.Errorf("different seeds gave %d equal due times of 100", same)
	}
}

func TestPoissonPacerDueTimesIgnoreElapsed(t *testing.T) {
	// The scheduled time elapsed+wait depends only on the hit number, never
	// on when the pacer is asked: that is what makes latency from the
	// schedule free of coordinated omission.
	a, b := NewPoissonPacer(50, 3), NewPoissonPacer(50, 3)
	for hits := uint64(0); hits < 50; hits++ {
		wa, _ := a.Pace(0, hits)
		late := time.Duration(hits) * 37 * time.Millisecond
		wb, _ := b.Pace(late, hits)
		if wa != late+wb {
			t.Fatalf("hit %d: due %v asked at 0, %v asked at %v", hits, wa, late+wb, late)
		}
	}
}

func TestPoissonPacerInterArrivals(t *testing.T) {
	// Gaps of a load.Poisson process are exponential: mean 1/rate, coefficient
	// of variation 1. With 20000 gaps the standard error of both is under
	// 1%, so 5% tolerances fail only for a wrong distribution.
	const rate, n = 250.0, 20000
	p := NewPoissonPacer(rate, 42)
	var prev time.Duration
	var sum, sumSq float64
	for hits := uint64(0); hits < n; hits++ {
		due, stop := p.Pace(0, hits)
		if stop {
			t.Fatal("stopped")
		}
		if due < prev {
			t.Fatalf("hit %d due at %v, before hit %d at %v", hits, due, hits-1, prev)
		}
		gap := (due - prev).Seconds()
		prev = due
		sum += gap
		sumSq += gap * gap
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	if want := 1 / rate; math.Abs(mean-want)/want > 0.05 {
		t.Errorf("mean gap %.6fs, want %.6fs ±5%%", mean, want)
	}
	if cv := sd / mean; math.Abs(cv-1) > 0.05 {
		t.Errorf("coefficient of variation %.3f, want 1 ±0.05", cv)
	}
	if _, stop := NewPoissonPacer(0, 1).Pace(0, 0); !stop {
		t.Error("rate 0 must stop")
	}
}
