package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestLatencyModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name            string
		l               LatencySpec
		items, itemLen  int
		in, infer, outp time.Duration
	}{
		// resnet50-like: 4 ms + 1 ms × b^0.8.
		{"batch 1", LatencySpec{FixedUS: 4000, PerItemUS: 1000, Exponent: 0.8, ComputeInputUS: 20, ComputeOutputUS: 5}, 1, 0,
			20 * time.Microsecond, 5 * time.Millisecond, 5 * time.Microsecond},
		// 32^0.8 = 16: 4 ms + 16 ms.
		{"batch 32 grows sub-linearly", LatencySpec{FixedUS: 4000, PerItemUS: 1000, Exponent: 0.8}, 32, 0,
			0, 20 * time.Millisecond, 0},
		// Exponent 0 means linear.
		{"linear by default", LatencySpec{PerItemUS: 100}, 4, 0, 0, 400 * time.Microsecond, 0},
		// Sequence length 256 against a reference of 128 doubles the items.
		{"reference elements scale", LatencySpec{FixedUS: 1000, PerItemUS: 100, ReferenceElements: 128, ComputeInputUS: 1}, 2, 256,
			4 * time.Microsecond, 1400 * time.Microsecond, 0},
		{"zero compute", LatencySpec{}, 8, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, infer, out := tt.l.durations(tt.items, tt.itemLen, rng)
			near := func(got, want time.Duration) bool { return got-want < time.Microsecond && want-got < time.Microsecond }
			if !near(in, tt.in) || !near(infer, tt.infer) || !near(out, tt.outp) {
				t.Errorf("durations = %v %v %v, want %v %v %v", in, infer, out, tt.in, tt.infer, tt.outp)
			}
		})
	}
}

func TestLatencyJitterStaysInBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l := LatencySpec{FixedUS: 1000, Jitter: 0.1}
	var lo, hi time.Duration = time.Hour, 0
	for range 1000 {
		_, d, _ := l.durations(1, 0, rng)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 900*time.Microsecond || hi > 1100*time.Microsecond {
		t.Errorf("jittered durations span %v..%v, want within 900µs..1.1ms", lo, hi)
	}
	if hi-lo < 150*time.Microsecond {
		t.Errorf("jittered durations span only %v..%v", lo, hi)
	}
}
