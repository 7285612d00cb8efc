package session

import (
	"math"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
)

// FuzzParseRange: any --concurrency-range or --request-rate-range text is
// either refused with an error or gives positive, finite values whose
// levels (as the run expands them) are few enough to list, never a panic
// or an endless loop (as NaN and a step lost against 1e16 once gave).
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"1", "1:8", "1:33:32", "4:2", "NaN", "10:NaN", "Inf", "1e16", "0.2:0.4:0.1",
		"1:2:3:4", "1:100000:1000", "1:1e9:1", "", ":", "-1:5", "5e-324:1e308:1e-300"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start, end, step, err := parseRange("--concurrency-range", s)
		if err != nil {
			return
		}
		for _, v := range []float64{start, end, step} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("parseRange(%q) = %v:%v:%v", s, start, end, step)
			}
		}
		if end < start {
			t.Fatalf("parseRange(%q): end %v below start %v", s, end, start)
		}
		for _, base := range []load.Target{{Mode: load.Concurrency}, {Mode: load.Rate}} {
			levels, err := plan.Levels(base, start, end, step)
			if err == nil && (len(levels) == 0 || len(levels) > plan.MaxLevels) {
				t.Fatalf("Levels(%q) gave %d levels", s, len(levels))
			}
		}
	})
}
