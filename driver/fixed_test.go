package driver

import (
	"cmp"
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/triton"
)

func TestSchedulePacer(t *testing.T) {
	ms := time.Millisecond
	once := &Schedule{At: []time.Duration{0, 10 * ms, 10 * ms, 30 * ms}}
	loop := IntervalSchedule([]time.Duration{100 * ms, 200 * ms, 500 * ms})
	for _, tc := range []struct {
		name    string
		p       SchedulePacer
		elapsed time.Duration
		hits    uint64
		want    time.Duration
		stop    bool
	}{
		{"first at once", SchedulePacer{Schedule: once}, 0, 0, 0, false},
		{"a burst: two at 10ms", SchedulePacer{Schedule: once}, 10 * ms, 2, 0, false},
		{"last", SchedulePacer{Schedule: once}, 0, 3, 30 * ms, false},
		{"after the last", SchedulePacer{Schedule: once}, 0, 4, 0, true},
		{"from 10ms, hit 3", SchedulePacer{Schedule: once, From: 10 * ms, First: 3}, 5 * ms, 0, 15 * ms, false},
		// perf_analyzer's example: 0.1s, 0.3s, 0.8s, 0.9s, 1.1s, 1.6s.
		{"intervals: first after one", SchedulePacer{Schedule: loop}, 0, 0, 100 * ms, false},
		{"intervals: third", SchedulePacer{Schedule: loop}, 0, 2, 800 * ms, false},
		{"intervals: loop", SchedulePacer{Schedule: loop}, 0, 3, 900 * ms, false},
		{"intervals: sixth", SchedulePacer{Schedule: loop}, 0, 5, 1600 * ms, false},
		{"overdue", SchedulePacer{Schedule: loop}, time.Second, 3, -100 * ms, false},
	} {
		w, stop := tc.p.Pace(tc.elapsed, tc.hits)
		if stop != tc.stop || !stop && w != tc.want {
			t.Errorf("%s: Pace(%v, %d) = %v, %v; want %v, %v", tc.name, tc.elapsed, tc.hits, w, stop, tc.want, tc.stop)
		}
	}
	for _, tc := range []struct {
		s    *Schedule
		at   time.Duration
		want uint64
	}{
		{once, 0, 1}, {once, 10 * ms, 3}, {once, time.Hour, 4},
		{loop, 99 * ms, 0}, {loop, 800 * ms, 3}, {loop, 1600 * ms, 6},
	} {
		if got := tc.s.Count(tc.at); got != tc.want {
			t.Errorf("Count(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

// burstyTrace is 2000 arrivals over about 2 s: every 20 ms a burst of
// bursts requests at once, then a steady drizzle in between.
func burstyTrace(n int) []time.Duration {
	var at []time.Duration
	for len(at) < n {
		base := time.Duration(len(at)/20) * 20 * time.Millisecond
		for i := 0; i < 10 && len(at) < n; i++ {
			at = append(at, base) // a burst of 10 at once
		}
		for i := 1; i <= 10 && len(at) < n; i++ {
			at = append(at, base+time.Duration(i)*1800*time.Microsecond/10*10/10)
		}
	}
	return at
}

// runSchedule replays s against the simulator's identity model, with
// requests sizes in turn (s.Request picks them), and returns the results
// in order of schedule.
func runSchedule(t *testing.T, s *Schedule, sizes ...int64) ([]Result, uint64) {
	t.Helper()
	return runScheduleOn(t, dial(t, startSim(t), "grpc", 1), s, sizes...)
}

// runScheduleOn is runSchedule against the server c is connected to.
func runScheduleOn(t *testing.T, c triton.Client, s *Schedule, sizes ...int64) ([]Result, uint64) {
	t.Helper()
	var reqs []*triton.InferRequest
	for _, n := range sizes {
		reqs = append(reqs, requests(t, c, "identity", triton.InputOptions{Shapes: map[string][]int64{"INPUT0": {n}}})...)
	}
	before, _ := serverCounts(t, c, "identity")
	res := start(t, context.Background(), Options{Client: c, Requests: reqs, Schedule: s, PlanDrain: 5 * time.Second}).wait(t)
	after, _ := serverCounts(t, c, "identity")
	slices.SortFunc(res, func(a, b Result) int { return cmp.Compare(a.Scheduled, b.Scheduled) })
	return res, after - before
}

// TestTraceReplaySendsEveryRequestOnTime replays 2000 requests with
// bursts: every one is sent, once, at its time on the driver's clock (its
// Scheduled), the simulator counts them all, and the sends' lateness is
// reported (on an idle host its p99 is within 2 ms; the test asserts only
// what a loaded one holds).
func TestTraceReplaySendsEveryRequestOnTime(t *testing.T) {
	t.Parallel()
	at := burstyTrace(2000)
	stretch(at)
	req := make([]int32, len(at))
	for i := range req {
		req[i] = int32(i % 2)
	}
	res, served := runSchedule(t, &Schedule{At: at, Request: req}, 16, 32)
	if len(res) != len(at) || served != uint64(len(at)) {
		t.Fatalf("%d results, %d served; the trace has %d requests", len(res), served, len(at))
	}
	var lateness []time.Duration
	for i, r := range res {
		if !r.OK() {
			t.Fatalf("request %d failed: %v", i, r.Err)
		}
		lateness = append(lateness, r.Sent-r.Scheduled)
	}
	// The schedule's times, relative to its first: the trace's own.
	first := res[0].Scheduled
	for i, r := range res {
		if got := r.Scheduled - first; (got-at[i]).Abs() > time.Millisecond && r.Sent-r.Scheduled < time.Millisecond {
			t.Fatalf("request %d scheduled at %v, the trace says %v", i, got, at[i])
		}
	}
	p99 := percentile(lateness, 99)
	t.Logf("2000 requests: send lateness p50 %v p99 %v max %v", percentile(lateness, 50), p99, percentile(lateness, 100))
	if p99 > 250*time.Millisecond {
		t.Errorf("send lateness p99 %v: the replay fell far behind its trace", p99)
	}
}

// TestRequestIntervalsMean replays perf_analyzer-style intervals (looped)
// and checks the achieved arrival intervals' mean against the file's.
func TestRequestIntervalsMean(t *testing.T) {
	t.Parallel()
	us := time.Microsecond
	intervals := []time.Duration{1000 * us, 3000 * us, 500 * us, 2500 * us, 2000 * us} // mean 1.8 ms
	stretch(intervals)
	s := IntervalSchedule(intervals)
	sm := startSim(t)
	c := dial(t, sm, "grpc", 1)
	reqs := identityRequests(t, c)
	before, _ := serverCounts(t, c, "identity")
	run := startFor(t, context.Background(), 2*time.Second*stretchOf(), Options{Client: c, Requests: reqs, Schedule: s})
	res := run.wait(t)
	after, _ := serverCounts(t, c, "identity")
	if uint64(len(res)) != after-before || len(res) < 500 {
		t.Fatalf("%d results, the simulator served %d", len(res), after-before)
	}
	sent := make([]time.Duration, len(res))
	for i, r := range res {
		sent[i] = r.Sent
	}
	slices.Sort(sent)
	mean := (sent[len(sent)-1] - sent[0]) / time.Duration(len(sent)-1)
	want := 1800 * us
	if testenv.Race {
		want *= raceStretch
	}
	t.Logf("%d requests, mean arrival interval %v (file: %v)", len(sent), mean, want)
	if math.Abs(float64(mean-want)) > 0.02*float64(want) {
		t.Errorf("mean interval %v, the file's is %v", mean, want)
	}
}

// raceStretch is how much slower the timing tests run their schedules
// under the race detector.
const raceStretch = 5

// stretchOf is the factor the timing tests' schedules are stretched by.
func stretchOf() time.Duration {
	if testenv.Race {
		return raceStretch
	}
	return 1
}

// stretch slows a schedule under the race detector.
func stretch(ds []time.Duration) {
	for i := range ds {
		ds[i] *= stretchOf()
	}
}
