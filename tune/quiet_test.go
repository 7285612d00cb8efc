package tune_test

import (
	"testing"

	"github.com/tritontop/tritontop/internal/testenv"
)

// TestQuietTuneAgainstBruteForce tunes the small fast model on the
// simulator, whose instances and batcher settings take effect in its
// timing, and measures the brute force of the same grid (every
// configuration at every concurrency, by the same rules): tune's best is
// within 5% of the brute force's, from at most 15% of the grid's points,
// in at most a fifth of its time. It measures timing: CI's quiet pass
// runs it alone. Its grid is the benchmark's without concurrency 1 (84
// distinct points, not 105: a queue delay without a batcher is one
// point), measured in windows of 200 ms rather than 300 (each still holds
// hundreds of requests), which keeps the brute force, most of the test's
// time, near a minute (87 s with concurrency 1); BenchmarkTune measures
// the whole grid in the profile's windows. Tune measures 8 to 13 of the
// 84 (two configurations a few percent apart decide whether the climb
// moves on), so the 15% bound, 12 trials here, is a close one: the quiet
// pass runs a failed test once more.
func TestQuietTuneAgainstBruteForce(t *testing.T) {
	testenv.Quiet(t)
	p := profiles[0]
	p.grid[4] = "4,16,64,256"
	p.windowMS = 200
	srv := p.serve(t)
	brute, bruteTook := p.tuneOn(t, srv, "grid")
	tuned, tuneTook := p.tuneOn(t, srv, "climb")
	bb, tb := best(brute), best(tuned)
	t.Logf("brute force: %.0f infer/s (%+v at %d) from %d trials of %d points in %v", bb,
		brute.Trials[max(brute.Best, 0)].Config, brute.Trials[max(brute.Best, 0)].Concurrency, len(brute.Trials), brute.Grid.Points, bruteTook)
	t.Logf("tune: %.0f infer/s (%+v at %d) from %d trials in %v (%s)", tb,
		tuned.Trials[max(tuned.Best, 0)].Config, tuned.Trials[max(tuned.Best, 0)].Concurrency, len(tuned.Trials), tuneTook, tuned.Stopped)
	for i, tr := range tuned.Trials {
		t.Logf("tune trial %d: %+v at %d: %.0f infer/s, p99 %v, queue %v compute %v, stable %v pass %v %s", i+1, tr.Config, tr.Concurrency,
			tr.Throughput, tr.P99, tr.Queue, tr.Compute, tr.Stable, tr.Pass, tr.LoadError)
	}
	if bb <= 0 || tb < 0.95*bb {
		t.Errorf("tune's best %.0f infer/s is not within 5%% of the brute force's %.0f", tb, bb)
	}
	if len(tuned.Trials) > tuned.Grid.Points*15/100 {
		t.Errorf("tune measured %d of the grid's %d points, over 15%%", len(tuned.Trials), tuned.Grid.Points)
	}
	if tuneTook*5 > bruteTook {
		t.Errorf("tune took %v, over a fifth of the brute force's %v", tuneTook, bruteTook)
	}
	if !brute.Restored || !tuned.Restored {
		t.Errorf("the original configuration not back: brute force %v, tune %v", brute.Restored, tuned.Restored)
	}
}
