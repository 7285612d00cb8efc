package session_test

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
)

// captureNeedQuietPass skips a timing test held to an idle host's bounds
// unless .ci/run's quiet pass runs it (internal/testenv). It does not skip on a busy host: it logs how
// busy the host was in the second before, so that a failure under others'
// load says so.
func captureNeedQuietPass(t *testing.T) {
	t.Helper()
	testenv.Quiet(t)
	t.Logf("host %.0f%% busy in the second before the test", 100*planHostBusy(t, time.Second))
}

// TestQuietCaptureReplayGaps is issue 25's timing target for capture and
// replay, on a host with nothing else running: a run drives two models
// through a capture against one simulator, the capture is replayed with
// Shape.Trace against a fresh simulator through a second capture, the
// same requests per model and shape are sent and served (as
// TestCaptureReplayRoundTrip checks), and each arrival gap of the replay
// is within 2 ms of the original's at the 99th percentile. It runs the
// load the target was measured with: 150/s and 80/s, 460 requests (2 s).
// Even idle, this VM stalls a thread for a few milliseconds a few times a
// second (driver's TestQuietTraceReplayOnSchedule measures it), and a
// run's p99 rests on its worst five gaps: the round trip is made up to
// three times on an idle host, and the target holds when one run meets
// it. As in that test, a probe beside each run counts the host's stalls:
// a run during which it stalled a bare thread more than
// testenv.MaxIdleStalls times was not on an idle host and does not count
// (up to three runs in all); when none was, the test skips and says so.
func TestQuietCaptureReplayGaps(t *testing.T) {
	captureNeedQuietPass(t)
	var p99s []time.Duration
	idleRuns := 0
	const runs = 3
	for run := 1; run <= runs; run++ {
		probe := testenv.StartHostStalls()
		diffs := captureRoundTrip(t, captureLoad{simpleRate: 150, identityRate: 80, requests: 460})
		stalls, worst := probe()
		p99 := diffs[len(diffs)*99/100]
		t.Logf("run %d: arrival gaps of the replay differ from the capture's by %v at p99; the host stalled a bare thread %d times by more than 1 ms (at most %v)", run, p99, stalls, worst)
		if stalls > testenv.MaxIdleStalls {
			continue
		}
		idleRuns++
		if p99 <= 2*time.Millisecond {
			return
		}
		p99s = append(p99s, p99)
	}
	if idleRuns == 0 {
		t.Skipf("the host stalled a bare thread more than %d times in each of %d runs: not an idle host, so the 2 ms target was not measured", testenv.MaxIdleStalls, runs)
	}
	t.Errorf("arrival gaps of the replay differ from the capture's by %v at p99 in %d runs on an idle host: more than 2 ms", p99s, idleRuns)
}
