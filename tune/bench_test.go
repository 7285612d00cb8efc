package tune_test

import (
	"testing"
)

// BenchmarkTune tunes each simulated profile and measures the brute force
// of the same grid; it reports tune's best as a share of the brute
// force's, the share of the grid it measured, and its share of the brute
// force's time. One run takes minutes:
//
//	go test ./tune -run '^$' -bench BenchmarkTune -benchtime 1x -timeout 2h -v
func BenchmarkTune(b *testing.B) {
	for _, p := range profiles {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				srv := p.serve(b)
				brute, bruteTook := p.tuneOn(b, srv, "grid")
				tuned, tuneTook := p.tuneOn(b, srv, "climb")
				bb, tb := best(brute), best(tuned)
				bt, tt := brute.Trials[max(brute.Best, 0)], tuned.Trials[max(tuned.Best, 0)]
				b.Logf("%s: grid %d points (%d configurations); brute force %.1f infer/s at %+v c=%d p99 %v in %v (%d trials); tune %.1f infer/s at %+v c=%d p99 %v in %v (%d trials, %s)",
					p.name, brute.Grid.Points, brute.Grid.Configurations, bb, bt.Config, bt.Concurrency, bt.P99, bruteTook, len(brute.Trials),
					tb, tt.Config, tt.Concurrency, tt.P99, tuneTook, len(tuned.Trials), tuned.Stopped)
				b.ReportMetric(tb/bb, "best/brute")
				b.ReportMetric(float64(len(tuned.Trials))/float64(brute.Grid.Points), "grid-share")
				b.ReportMetric(tuneTook.Seconds()/bruteTook.Seconds(), "time-share")
			}
		})
	}
}
