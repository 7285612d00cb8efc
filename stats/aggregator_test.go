package stats

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/triton"
)

// ok returns a successful closed-loop result sent at sent with latency lat.
func ok(sent, lat time.Duration) driver.Result {
	return driver.Result{Scheduled: sent, Sent: sent, Done: sent + lat, Inferences: 1,
		BytesSent: 100, BytesReceived: 40}
}

func TestAggregatorTickCounts(t *testing.T) {
	a := NewAggregator(time.Second, 10*time.Second)
	batch := []driver.Result{
		ok(0, 1*time.Millisecond),
		ok(0, 3*time.Millisecond),
		{Sent: 0, Done: 2 * time.Millisecond, Inferences: 4, Retries: 2, BytesSent: 10, BytesReceived: 5},
		{Code: codes.Unavailable, Err: &triton.Error{Code: codes.Unavailable, Message: "first"}, Done: time.Millisecond},
		{Code: codes.Unavailable, Err: &triton.Error{Code: codes.Unavailable, Message: "Exceeds maximum queue size"}},
		{Code: codes.InvalidArgument, Err: errors.New("bad shape")},
		{Code: codes.Canceled, Cancelled: true, BytesSent: 7},
	}
	a.Add(batch[:3])
	a.Add(batch[3:])
	var s Snapshot
	if err := a.Tick(500*time.Millisecond, false, &s); err != nil {
		t.Fatal(err)
	}
	tk := s.Tick
	want := ClientStats{
		Duration: 500 * time.Millisecond, Requests: 6, Successes: 3, Errors: 3, Inferences: 6,
		Cancelled: 1, Retries: 2, RequestsPerS: 12, InferPerS: 12,
		BytesSent: 100 + 100 + 10 + 7, BytesReceived: 40 + 40 + 5,
		Latency: Latency{Count: 3, Min: time.Millisecond, Mean: 2 * time.Millisecond,
			P50: 2 * time.Millisecond, P90: 3 * time.Millisecond, P95: 3 * time.Millisecond,
			P99: 3 * time.Millisecond, P999: 3 * time.Millisecond, Max: 3 * time.Millisecond},
		ErrorsByCode: []ErrorCount{
			{Code: "UNAVAILABLE", Count: 2, Message: "Exceeds maximum queue size"},
			{Code: "INVALID_ARGUMENT", Count: 1, Message: "bad shape"},
		},
	}
	if !reflect.DeepEqual(tk, want) {
		t.Fatalf("Tick =\n%+v\nwant\n%+v", tk, want)
	}
	if s.ScheduledHistogram != "" || tk.Scheduled != nil {
		t.Fatalf("closed loop has scheduled latency: %+v %q", tk.Scheduled, s.ScheduledHistogram)
	}
	if !reflect.DeepEqual(s.Window, tk) || !reflect.DeepEqual(s.Run, tk) {
		t.Fatalf("first tick: window or run differ from tick:\n%+v\n%+v", s.Window, s.Run)
	}

	// The next tick is empty; the window and the run still hold the first.
	var s2 Snapshot
	if err := a.Tick(time.Second, false, &s2); err != nil {
		t.Fatal(err)
	}
	if s2.Tick.Requests != 0 || s2.Tick.ErrorsByCode != nil || s2.Histogram != "" {
		t.Fatalf("empty tick = %+v", s2.Tick)
	}
	if s2.Run.Requests != 6 || s2.Run.Duration != 1500*time.Millisecond || s2.Run.RequestsPerS != 4 {
		t.Fatalf("run after two ticks = %+v", s2.Run)
	}
	if s2.Window.ErrorsByCode[0].Message != "Exceeds maximum queue size" {
		t.Fatalf("window errors = %+v", s2.Window.ErrorsByCode)
	}
}

func TestAggregatorOpenLoop(t *testing.T) {
	a := NewAggregator(time.Second, 10*time.Second)
	// Sent 4 ms late: from-send latency 1 ms, from-schedule 5 ms.
	a.Add([]driver.Result{
		{Scheduled: 10 * time.Millisecond, Sent: 14 * time.Millisecond, Done: 15 * time.Millisecond, Late: true},
		{Scheduled: 20 * time.Millisecond, Sent: 20 * time.Millisecond, Done: 21 * time.Millisecond},
	})
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Scheduled == nil || s.ScheduledHistogram == "" {
		t.Fatal("open-loop tick has no scheduled latency")
	}
	if s.Tick.Latency.Max != time.Millisecond || s.Tick.Scheduled.Max != 5*time.Millisecond {
		t.Fatalf("max latency from send %v, from schedule %v; want 1ms, 5ms", s.Tick.Latency.Max, s.Tick.Scheduled.Max)
	}
	if s.Tick.Late != 1 || s.Tick.LateShare != 0.5 {
		t.Fatalf("late = %d share %v, want 1, 0.5", s.Tick.Late, s.Tick.LateShare)
	}
	// Rate mode marks a tick open loop even when every send was on time.
	a.Add([]driver.Result{ok(0, time.Millisecond)})
	if err := a.Tick(time.Second, true, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Scheduled == nil {
		t.Fatal("rate-mode tick has no scheduled latency")
	}
}

// tickValues feeds one tick of latencies (µs) into a and returns the
// snapshot.
func tickValues(t *testing.T, a *Aggregator, us []int64) Snapshot {
	t.Helper()
	batch := make([]driver.Result, len(us))
	for i, v := range us {
		batch[i] = ok(0, time.Duration(v)*time.Microsecond)
	}
	a.Add(batch)
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// wantLatency summarizes values the way the aggregator should: one histogram
// of all of them, exact min, max and mean.
func wantLatency(values []int64) Latency {
	h := newHistogram()
	var e extremes
	for _, v := range values {
		_ = h.RecordValue(v)
		e.add(time.Duration(v) * time.Microsecond)
	}
	return latency(h, e)
}

func TestWindowMergesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := NewAggregator(time.Second, 10*time.Second)
	var ticks [][]int64
	var all []int64
	var s Snapshot
	for i := range 35 {
		n := 200 + rng.IntN(800)
		vals := make([]int64, n)
		for j := range vals {
			// A long tail over five decades, and a few one-off spikes.
			vals[j] = int64(100 * rng.ExpFloat64() * float64(1+rng.IntN(100)))
			if j == 0 && i%7 == 0 {
				vals[j] = 5_000_000 + int64(i)
			}
		}
		ticks = append(ticks, vals)
		all = append(all, vals...)
		s = tickValues(t, a, vals)
		if got, want := s.Tick.Latency, wantLatency(vals); got != want {
			t.Fatalf("tick %d latency = %+v, want %+v", i, got, want)
		}
	}
	var last10 []int64
	for _, v := range ticks[len(ticks)-10:] {
		last10 = append(last10, v...)
	}
	if got, want := s.Window.Latency, wantLatency(last10); got != want {
		t.Fatalf("window latency = %+v\nwant (histogram of all its values) %+v", got, want)
	}
	if s.Window.Duration != 10*time.Second || s.Window.Requests != int64(len(last10)) {
		t.Fatalf("window spans %v with %d requests, want 10s, %d", s.Window.Duration, s.Window.Requests, len(last10))
	}
	if got, want := s.Run.Latency, wantLatency(all); got != want {
		t.Fatalf("run latency = %+v\nwant %+v", got, want)
	}

	// Shrinking the window keeps the latest ticks that fit.
	a.SetWindow(3 * time.Second)
	s = tickValues(t, a, []int64{42})
	last3 := append(append(append([]int64{}, ticks[len(ticks)-2]...), ticks[len(ticks)-1]...), 42)
	if got, want := s.Window.Latency, wantLatency(last3); got != want || s.WindowLength != 3*time.Second {
		t.Fatalf("3 s window = %+v (length %v), want %+v", got, s.WindowLength, want)
	}
	// Growing it again keeps those and fills up with new ticks.
	a.SetWindow(5 * time.Second)
	s = tickValues(t, a, []int64{43})
	if got, want := s.Window.Latency, wantLatency(append(last3, 43)); got != want {
		t.Fatalf("5 s window = %+v, want %+v", got, want)
	}

	// Reset starts window and run from the next tick.
	a.ResetWindows()
	s = tickValues(t, a, []int64{7, 9})
	if s.Window.Requests != 2 || s.Run.Requests != 2 || s.Run.Duration != time.Second {
		t.Fatalf("after reset: window %d run %d (%v), want 2, 2 (1s)", s.Window.Requests, s.Run.Requests, s.Run.Duration)
	}
}

func TestHistogramRoundTrip(t *testing.T) {
	a := NewAggregator(time.Second, 10*time.Second)
	vals := []int64{1, 250, 251, 999, 1500, 20_000, 3_000_000, 7_200_000_000}
	s := tickValues(t, a, vals)
	h, err := DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	got := LatencyFromHistogram(h)
	want := s.Tick.Latency
	// The decoded histogram knows min, max and mean only to its precision;
	// the percentiles are identical except where the live ones were clamped
	// to the exact max.
	if got.Count != want.Count || got.P50 != want.P50 || got.P90 != want.P90 {
		t.Fatalf("decoded = %+v\nlive    = %+v", got, want)
	}
	if !h.ValuesAreEquivalent(int64(got.Max/time.Microsecond), histogramMax) {
		t.Fatalf("a 2 h latency decodes to max %v, want it clamped to 1 h", got.Max)
	}
	if e, err := DecodeHistogram(""); err != nil || e.TotalCount() != 0 {
		t.Fatalf("empty string decodes to %v, %v", e, err)
	}
	if _, err := DecodeHistogram("not a histogram"); err == nil {
		t.Fatal("garbage decoded without error")
	}
}

func TestLatencyClampsPercentilesToExactMax(t *testing.T) {
	h := newHistogram()
	var e extremes
	// 100123 µs lies in a bucket 64 µs wide; its p50 is the bucket's top.
	d := 100123 * time.Microsecond
	_ = h.RecordValue(histogramValue(d))
	e.add(d)
	l := latency(h, e)
	if l.P50 != d || l.P999 != d || l.Max != d {
		t.Fatalf("single value latency = %+v, want every field %v", l, d)
	}
	if raw := time.Duration(h.ValueAtPercentile(50)) * time.Microsecond; raw <= d {
		t.Fatalf("expected the raw histogram p50 (%v) above the exact value, so the clamp is tested", raw)
	}
}
