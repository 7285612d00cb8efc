package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// durations draws one execution's compute_input, compute_infer and
// compute_output times for a batch of items items, each itemLen elements
// long in its first input (used when ReferenceElements is set).
func (l LatencySpec) durations(items, itemLen int, rng *rand.Rand) (in, infer, out time.Duration) {
	x := float64(items)
	if l.ReferenceElements > 0 && itemLen > 0 {
		x *= float64(itemLen) / l.ReferenceElements
	}
	exp := l.Exponent
	if exp == 0 {
		exp = 1
	}
	inferUS := l.FixedUS
	if l.PerItemUS > 0 {
		inferUS += l.PerItemUS * math.Pow(x, exp)
	}
	return l.jitter(l.ComputeInputUS*x, rng), l.jitter(inferUS, rng), l.jitter(l.ComputeOutputUS*x, rng)
}

// jitter turns µs into a duration scaled by a uniform factor in
// [1−Jitter, 1+Jitter].
func (l LatencySpec) jitter(us float64, rng *rand.Rand) time.Duration {
	if us <= 0 {
		return 0
	}
	if l.Jitter > 0 {
		us *= 1 + l.Jitter*(2*rng.Float64()-1)
	}
	return time.Duration(us * float64(time.Microsecond))
}
