package main

import (
	"os"
	"testing"
	"time"
)

// needQuietPass skips a timing test held to an idle host's bounds unless
// TRITONTOP_QUIET_PASS is set (.ci/run's quiet pass runs each TestQuiet…
// test alone). Unlike needQuietHost it does not skip on a busy host: it
// logs how busy the host was in the second before, so that a failure under
// others' load says so.
func needQuietPass(t *testing.T) {
	t.Helper()
	if os.Getenv("TRITONTOP_QUIET_PASS") == "" {
		t.Skip("needs the host to itself: run alone by .ci/run's quiet pass (TRITONTOP_QUIET_PASS=1 go test -run '^TestQuiet' ./cmd/tritontop)")
	}
	t.Logf("host %.0f%% busy in the second before the test", 100*hostBusy(t, time.Second))
}

// TestQuietCaptureReplayGaps is issue 25's timing target for capture and
// replay, on a host with nothing else running: tritontop drives two
// models through the capture proxy against one simulator, the capture is
// replayed with --trace against a fresh simulator through a second proxy,
// the same requests per model and shape are sent and served (as
// TestCaptureReplayRoundTrip checks), and each arrival gap of the replay
// is within 2 ms of the original's at the 99th percentile. Even idle, this
// VM stalls a thread for a few milliseconds a few times a second (driver's
// TestQuietTraceReplayOnSchedule measures it), and a run's p99 rests on
// its worst five gaps: the round trip is made up to three times, and the
// target holds when one run meets it.
func TestQuietCaptureReplayGaps(t *testing.T) {
	needQuietPass(t)
	var p99s []time.Duration
	for run := 1; run <= 3; run++ {
		diffs := captureReplayRoundTrip(t)
		p99 := diffs[len(diffs)*99/100]
		if p99 <= 2*time.Millisecond {
			return
		}
		t.Logf("run %d: arrival gaps of the replay differ from the capture's by %v at p99", run, p99)
		p99s = append(p99s, p99)
	}
	t.Errorf("arrival gaps of the replay differ from the capture's by %v at p99 in three runs: more than 2 ms", p99s)
}
