package stats

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
)

// goodputResult is a decoupled model's request sent late after its
// schedule: its first response ttft after the send, then gaps.
func goodputResult(late, ttft time.Duration, gaps ...time.Duration) driver.Result {
	r := driver.Result{Decoupled: true, Inferences: 1, Responses: int32(1 + len(gaps)), Sent: late,
		Timing: &driver.ResponseTiming{First: late + ttft, Gaps: gaps}}
	r.Done = r.Timing.First
	for _, g := range gaps {
		r.Done += g
	}
	return r
}

// TestAggregatorGoodputMeetsEveryObjective: a request is good when its
// latency, its time to first response from the schedule and its mean time
// between responses all meet their objectives at once; the tick, the
// window and a merge of ticks count the same requests.
func TestAggregatorGoodputMeetsEveryObjective(t *testing.T) {
	ms := time.Millisecond
	a := NewAggregator(time.Second, 10*time.Second)
	a.SetDecoupled()
	a.SetGoodput(Goodput{Latency: 200 * ms, TTFT: 50 * ms, ITL: 20 * ms})
	var snaps []Snapshot
	for i, batch := range [][]driver.Result{{
		goodputResult(0, 40*ms, 10*ms, 20*ms, 30*ms), // good: ttft 40, mean gap 20, latency 100
		goodputResult(0, 60*ms, 10*ms),               // ttft too long
		goodputResult(0, 30*ms, 25*ms, 25*ms),        // mean gap too long
	}, {
		goodputResult(30*ms, 30*ms, 5*ms), // ttft 60 from the schedule: too long
		goodputResult(0, 10*ms),           // one response: good
		goodputResult(0, 40*ms, 19*ms, 19*ms, 19*ms, 19*ms, 19*ms, 19*ms, 19*ms, 19*ms), // latency 192: good
		goodputResult(0, 45*ms, 20*ms, 20*ms, 20*ms, 20*ms, 20*ms, 20*ms, 20*ms, 20*ms), // latency 205: too long
	}} {
		a.Add(batch)
		s := Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second, Load: Load{Mode: load.Rate, Rate: 4}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	for i, want := range []int64{1, 2} {
		g := snaps[i].Tick.Streaming.Goodput
		if g == nil || g.Requests != want || g.PerS != float64(want) {
			t.Errorf("tick %d goodput %+v, want %d good requests, %d/s", i+1, g, want, want)
		}
	}
	if g := snaps[1].Window.Streaming.Goodput; g == nil || g.Requests != 3 {
		t.Errorf("window goodput %+v, want 3", g)
	}
	var sum ClientStats
	for i := range snaps {
		sum.Add(&snaps[i].Tick)
	}
	sum.SetRates()
	if g := sum.Streaming.Goodput; g == nil || g.Requests != 3 || g.PerS != 1.5 {
		t.Errorf("ticks added: goodput %+v, want 3 requests, 1.5/s", g)
	}

	b := NewAggregator(time.Second, 10*time.Second)
	b.SetDecoupled()
	b.Add([]driver.Result{goodputResult(0, 10*ms)})
	var s Snapshot
	if err := b.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Streaming.Goodput != nil {
		t.Errorf("without objectives the tick counted a goodput: %+v", s.Tick.Streaming.Goodput)
	}
}
