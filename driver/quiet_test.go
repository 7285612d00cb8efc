package driver

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/triton"
)

// needQuietPass skips a test that holds the client to an idle host's
// timing unless TRITONTOP_QUIET_PASS is set: .ci/run's quiet pass runs such
// tests (named TestQuiet…) alone, after the suite. It does not skip on a
// busy host: it logs how busy the host was in the second before, so that a
// failure under others' load says so.
func needQuietPass(t *testing.T) {
	t.Helper()
	testenv.Quiet(t)
	if b, ok := hostBusyFraction(time.Second); ok {
		t.Logf("host %.0f%% busy in the second before the test", 100*b)
	}
}

// hostBusyFraction is the share of the host's CPU time that was busy (not
// idle or waiting for I/O) over d, from /proc/stat.
func hostBusyFraction(d time.Duration) (float64, bool) {
	read := func() (busy, total float64, ok bool) {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0, false
		}
		f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
		if len(f) < 5 {
			return 0, 0, false
		}
		for i, v := range f[1:] {
			x, _ := strconv.ParseFloat(v, 64)
			total += x
			if i != 3 && i != 4 { // idle, iowait
				busy += x
			}
		}
		return busy, total, true
	}
	b0, t0, ok0 := read()
	time.Sleep(d)
	b1, t1, ok1 := read()
	if !ok0 || !ok1 || t1 == t0 {
		return 0, false
	}
	return (b1 - b0) / (t1 - t0), true
}

// TestQuietTraceReplayOnSchedule is issue 25's timing target for trace
// replay, on a host with nothing else running: a trace of 2000 requests in
// bursts (10 at once every 20 ms, 10 more between) is sent in full, every
// request within 2 ms of its scheduled time at the 99th percentile (on the
// driver's clock: Result.Sent against Result.Scheduled), and the
// simulator counts exactly the trace's requests. The simulator runs in a
// process of its own, as a server does: in the test's process its
// goroutines and garbage would share the driver's two Ps.
//
// Even idle, this 2-core VM stalls a thread now and then: a bare loop of
// 180 µs nanosleeps on a thread of its own sees a few dozen wake-ups a
// millisecond or more late in 4 s, and some of 3 to 9 ms (docs/load-shapes.md);
// two such stalls in a burst put a run's p99 past 2 ms. So the trace is
// replayed until three runs on an idle host (below), and the host's stalls during each are
// measured beside it (testenv.StartHostStalls); the target holds when one run
// meets it. A run during which the host stalled a bare thread more than
// testenv.MaxIdleStalls times was not on an idle host and does not count (up to
// five runs); when none was, the test skips and says so.
// Every run must send and serve every request. Under the race detector
// the schedule is stretched (stretchOf) and the bound is the same.
func TestQuietTraceReplayOnSchedule(t *testing.T) {
	needQuietPass(t)
	at := burstyTrace(2000)
	stretch(at)
	req := make([]int32, len(at))
	for i := range req {
		req[i] = int32(i % 2)
	}
	c, err := triton.Dial(context.Background(), startSimProcess(t), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var p99s []time.Duration
	idleRuns := 0
	for run := 1; run <= 5 && idleRuns < 3; run++ {
		probe := testenv.StartHostStalls()
		res, served := runScheduleOn(t, c, &Schedule{At: at, Request: req}, 16, 32)
		stalls, worst := probe()
		if len(res) != len(at) || served != uint64(len(at)) {
			t.Fatalf("run %d: %d results, %d served; the trace has %d requests", run, len(res), served, len(at))
		}
		lateness := make([]time.Duration, 0, len(res))
		for i, r := range res {
			if !r.OK() {
				t.Fatalf("run %d: request %d failed: %v", run, i, r.Err)
			}
			lateness = append(lateness, r.Sent-r.Scheduled)
		}
		p99 := percentile(lateness, 99)
		t.Logf("run %d: 2000 requests, all served: send lateness p50 %v p99 %v max %v; the host stalled a bare thread %d times by more than 1 ms (at most %v)",
			run, percentile(lateness, 50), p99, percentile(lateness, 100), stalls, worst)
		if stalls > testenv.MaxIdleStalls {
			// Not an idle host: the probe beside it stalled as often as
			// the sends did (an idle one: 2 to 15 times in a run).
			continue
		}
		idleRuns++
		if p99 <= 2*time.Millisecond {
			return
		}
		p99s = append(p99s, p99)
	}
	if idleRuns == 0 {
		t.Skipf("the host stalled a bare thread more than %d times in each of five runs: not an idle host, so the 2 ms target was not measured", testenv.MaxIdleStalls)
	}
	t.Errorf("send lateness p99 %v in %d runs on an idle host: more than 2 ms behind the trace's schedule", p99s, idleRuns)
}
