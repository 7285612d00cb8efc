package tui

import (
	"math"
	"math/bits"
)

// MinRate is the lowest request rate the rate keys go down to, in requests
// per second.
const MinRate = 0.1

// NextConcurrency returns the concurrency one ↑ (up) or ↓ press leads to
// from n. With a positive fixed step it adds or subtracts step. Otherwise it
// walks a ladder fine enough to find a knee yet quick to cross decades: one
// at a time up to 8, then a quarter of the power of two below n, which gives
// 8 10 12 14 16 20 24 28 32 40 48 ... ; ↓ walks the same ladder back. The
// result is never below 1.
func NextConcurrency(n int, up bool, step int) int {
	if n < 1 {
		n = 1
	}
	switch {
	case step > 0 && up:
		return n + step
	case step > 0:
		return max(1, n-step)
	case up && n < 8:
		return n + 1
	case up:
		return n + floorPow2(n)/4
	case n <= 8:
		return max(1, n-1)
	default:
		return n - floorPow2(n-1)/4
	}
}

// NextRate returns the rate one ↑ or ↓ press leads to from r: r×(1+f) up,
// r÷(1+f) down, so that up then down returns to r. It never goes below
// MinRate.
func NextRate(r float64, up bool, f float64) float64 {
	if f <= 0 {
		f = DefaultRateStep
	}
	if r < MinRate {
		r = MinRate
	}
	if up {
		r *= 1 + f
	} else {
		r /= 1 + f
	}
	// Hundredths keep the targets shown and recorded free of float noise.
	return max(MinRate, math.Round(r*100)/100)
}

// floorPow2 is the largest power of two not above n (n ≥ 1).
func floorPow2(n int) int {
	return 1 << (bits.Len(uint(n)) - 1)
}

// nextSpeed is the replay speed after a + (faster) or - press: halving and
// doubling between 1/8 and 64 times real time. Zero (as fast as possible)
// is above every speed: - from it goes to 64. A speed given outside the
// range is never moved the wrong way by a press.
func nextSpeed(s float64, faster bool) float64 {
	switch {
	case s <= 0 && faster:
		return 0
	case s <= 0:
		return 64
	case faster:
		return max(s, min(64, s*2))
	default:
		return min(s, max(0.125, s/2))
	}
}
