package report

import (
	"cmp"
	"slices"

	"github.com/tritontop/tritontop/record"
)

// minKneeBend is how far (on the unit square) the curve must rise above its
// chord for a bend to count as a knee.
const minKneeBend = 0.1

// Knee returns the index of the step where the throughput–load curve bends:
// with load level on x and throughput on y, both scaled to [0, 1] over the
// steps, the step farthest above the line y = x (the Kneedle method of
// Satopää et al., 2011, for a rising curve that flattens). Past it, more
// load buys little throughput and adds latency. It returns -1 for fewer than
// three steps, or a curve that does not bend. Steps measured until stable
// that never were, or interrupted, are left out: their throughput is no
// steady state's.
func Knee(steps []record.Step) int {
	var idx []int
	for i, st := range steps {
		if m := st.Measurement; m != nil && (m.Interrupted || !m.Fixed && !m.Stable) {
			continue
		}
		idx = append(idx, i)
	}
	if len(idx) < 3 {
		return -1
	}
	level := func(i int) float64 { return steps[i].Load.Target().Level() }
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(level(a), level(b)) })
	x0, x1 := level(idx[0]), level(idx[len(idx)-1])
	y0, y1 := steps[idx[0]].Client.InferPerS, steps[idx[0]].Client.InferPerS
	for _, i := range idx {
		y1 = max(y1, steps[i].Client.InferPerS)
		y0 = min(y0, steps[i].Client.InferPerS)
	}
	if x1 <= x0 || y1 <= y0 {
		return -1
	}
	best, bend := -1, minKneeBend
	for _, i := range idx {
		x := (level(i) - x0) / (x1 - x0)
		y := (steps[i].Client.InferPerS - y0) / (y1 - y0)
		if d := y - x; d > bend {
			best, bend = i, d
		}
	}
	return best
}
