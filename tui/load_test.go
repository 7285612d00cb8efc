package tui

import "testing"

func TestNextConcurrency(t *testing.T) {
	tests := []struct {
		n, step int
		up      bool
		want    int
	}{
		{1, 0, true, 2},    // single steps at low concurrency
		{7, 0, true, 8},    // last single step
		{8, 0, true, 10},   // 8 → +2 (a quarter of 8)
		{14, 0, true, 16},  // 14 → +2
		{16, 0, true, 20},  // 16 → +4
		{64, 0, true, 80},  // 64 → +16
		{10, 0, false, 8},  // back down the same ladder
		{16, 0, false, 14}, // 16 → -2: 15's power of two is 8
		{20, 0, false, 16}, // 20 → -4
		{80, 0, false, 64}, // 80 → -16
		{8, 0, false, 7},   // single steps again
		{1, 0, false, 1},   // never below one
		{0, 0, false, 1},   // nonsense input clamps to one
		{5, 3, true, 8},    // fixed step up
		{2, 3, false, 1},   // fixed step down clamps to one
	}
	for _, tt := range tests {
		if got := NextConcurrency(tt.n, tt.up, tt.step); got != tt.want {
			t.Errorf("NextConcurrency(%d, up=%v, step=%d) = %d, want %d", tt.n, tt.up, tt.step, got, tt.want)
		}
	}
}

func TestConcurrencyLadderRoundTrips(t *testing.T) {
	for n := 1; n < 5000; n = NextConcurrency(n, true, 0) {
		up := NextConcurrency(n, true, 0)
		if back := NextConcurrency(up, false, 0); back != n {
			t.Fatalf("up from %d gives %d, down from there gives %d", n, up, back)
		}
	}
}

func TestNextRate(t *testing.T) {
	tests := []struct {
		r, f float64
		up   bool
		want float64
	}{
		{100, 0, true, 110},      // default 10 %
		{110, 0, false, 100},     // down divides, so it round-trips
		{100, 0.5, true, 150},    // explicit factor
		{0.1, 0, false, MinRate}, // floor
		{0, 0, true, 0.11},       // nonsense input starts at the floor
	}
	for _, tt := range tests {
		got := NextRate(tt.r, tt.up, tt.f)
		if d := got - tt.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("NextRate(%g, up=%v, %g) = %g, want %g", tt.r, tt.up, tt.f, got, tt.want)
		}
	}
}
