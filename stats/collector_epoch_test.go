package stats

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
)

func TestAggregatorSplitRoutesByDone(t *testing.T) {
	a := NewAggregator(time.Second, 10*time.Second)
	a.Add([]driver.Result{ok(0, 10*time.Millisecond)})
	a.Split(100 * time.Millisecond)
	// After the boundary is set, a result done before it still belongs to
	// the closing tick, one done at or after it to the next.
	a.Add([]driver.Result{ok(0, 99*time.Millisecond), ok(0, 100*time.Millisecond), ok(0, 150*time.Millisecond)})
	var s Snapshot
	if err := a.Tick(100*time.Millisecond, false, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Requests != 2 || s.Tick.Latency.Max != 99*time.Millisecond {
		t.Fatalf("closing tick: %d requests, latest done %v; want 2, 99ms", s.Tick.Requests, s.Tick.Latency.Max)
	}
	// A result of the tick already cut arrives late: it is counted now.
	a.Add([]driver.Result{ok(0, 50*time.Millisecond)})
	if err := a.Tick(100*time.Millisecond, false, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Requests != 3 || s.Tick.Latency.Min != 50*time.Millisecond || s.Tick.Latency.Max != 150*time.Millisecond {
		t.Fatalf("next tick: %d requests, done %v..%v; want 3, 50ms..150ms",
			s.Tick.Requests, s.Tick.Latency.Min, s.Tick.Latency.Max)
	}
	if s.Run.Requests != 5 {
		t.Fatalf("run counts %d requests, want 5", s.Run.Requests)
	}
	// Without a new Split everything goes to the current tick.
	a.Add([]driver.Result{ok(0, time.Hour)})
	if err := a.Tick(100*time.Millisecond, false, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Requests != 1 {
		t.Fatalf("tick after the split counts %d requests, want 1", s.Tick.Requests)
	}
}

// delayedResults feeds results as the driver's workers do: one finishes
// every gap (Done on the epoch's clock, encoded as its latency from a send
// at 0 so that a tick's latency extremes show its earliest and latest Done)
// and reaches the channel only delay later. When stop closes, the backlog
// still waiting is sent at once and the channel closed. It returns how many
// results were sent.
func delayedResults(epoch time.Time, gap, delay time.Duration, results chan<- []driver.Result, stop <-chan struct{}) int64 {
	defer close(results)
	var next time.Duration = gap // the Done of the next result
	batch := func(until time.Duration) []driver.Result {
		var b []driver.Result
		for ; next <= until; next += gap {
			b = append(b, ok(0, next))
		}
		return b
	}
	var sent int64
	for {
		select {
		case <-stop:
			b := batch(time.Since(epoch))
			results <- b
			return sent + int64(len(b))
		case <-time.After(time.Millisecond):
		}
		if b := batch(time.Since(epoch) - delay); len(b) > 0 {
			results <- b
			sent += int64(len(b))
		}
	}
}

func TestCollectorCountsResultsInTheTickTheyFinished(t *testing.T) {
	const (
		interval = 200 * time.Millisecond
		gap      = 2 * time.Millisecond // 500 results/s
		delay    = 40 * time.Millisecond
	)
	results := make(chan []driver.Result)
	epoch := time.Now()
	c := NewCollector(CollectorOptions{
		Interval: interval, ReadWait: 100 * time.Millisecond,
		Results: results, Epoch: epoch,
	})
	stop := make(chan struct{})
	sentC := make(chan int64, 1)
	go func() { sentC <- delayedResults(epoch, gap, delay, results, stop) }()
	// Stopping mid-tick leaves a final tick long enough to have a rate.
	time.AfterFunc(3*interval+interval/2, func() { close(stop) })
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	sent := <-sentC
	if len(snaps) < 3 {
		t.Fatalf("%d ticks in %v at %v ticks, want at least 3", len(snaps), 3*interval+interval/2, interval)
	}
	var total int64
	prevEnd := time.Duration(-1)
	for i, s := range snaps {
		total += s.Tick.Requests
		end := s.Time.Sub(epoch)
		if s.Tick.Requests == 0 {
			t.Errorf("tick %d is empty", s.Seq)
			continue
		}
		// Every result done before the tick's end is in it, however late
		// it arrived, and none done at or after the end.
		if s.Tick.Latency.Max >= end || s.Tick.Latency.Min < prevEnd {
			t.Errorf("tick %d (%v..%v) holds results done %v..%v",
				s.Seq, prevEnd, end, s.Tick.Latency.Min, s.Tick.Latency.Max)
		}
		if i > 0 && s.Interval != s.Time.Sub(snaps[i-1].Time) {
			t.Errorf("tick %d lasted %v, its boundaries are %v apart", s.Seq, s.Interval, s.Time.Sub(snaps[i-1].Time))
		}
		prevEnd = end
	}
	last := snaps[len(snaps)-1]
	if total != sent || last.Run.Requests != sent {
		t.Fatalf("ticks sum to %d requests, run says %d, %d were sent", total, last.Run.Requests, sent)
	}
	// The final tick holds what finished in it, not the backlog that the
	// workers handed over at the stop: its rate is the offered one.
	offered := float64(time.Second / gap)
	if r := last.Tick.RequestsPerS; r < offered*0.8 || r > offered*1.2 {
		t.Errorf("final tick: %d requests in %v = %.0f/s, offered %.0f/s",
			last.Tick.Requests, last.Tick.Duration, r, offered)
	}
	// The first tick starts with the collector, and counts what finished
	// since then: it does not trail the offered rate by the delay.
	if first := snaps[0]; first.Tick.Duration > 0 {
		if r := first.Tick.RequestsPerS; r < offered*0.9 || r > offered*1.1 {
			t.Errorf("first tick: %d requests in %v = %.0f/s, offered %.0f/s",
				first.Tick.Requests, first.Tick.Duration, r, offered)
		}
	}
}

// clockControl is an open loop whose requests in flight grow by one every
// millisecond from its epoch: a count that tells when it was read.
type clockControl struct{ epoch time.Time }

func (c clockControl) State() load.State {
	return load.State{Target: load.Target{Mode: load.Rate, Rate: 1000}, InFlight: int(time.Since(c.epoch) / time.Millisecond)}
}

// TestCollectorCountsInFlightAtTheTicksEnd: with an epoch a tick stays open
// for its grace (100 ms here) before it is cut, and its requests in flight
// are those at its end, not a grace later: read at the cut, they held the
// next tick's first sends, and the sends counted over a level (finished
// plus the growth of those in flight) came out short by a grace of them
// at its start. The median tick's count must be read well within the
// grace of its end (a busy host may hold the collector back once).
func TestCollectorCountsInFlightAtTheTicksEnd(t *testing.T) {
	t.Parallel()
	const interval = 200 * time.Millisecond
	results := make(chan []driver.Result)
	epoch := time.Now()
	c := NewCollector(CollectorOptions{Interval: interval, ReadWait: time.Second, Results: results, Epoch: epoch,
		Control: clockControl{epoch}})
	time.AfterFunc(5*interval+interval/2, func() { close(results) })
	snaps, err := collect(t, context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) < 5 {
		t.Fatalf("%d ticks, want at least 5", len(snaps))
	}
	var late []time.Duration
	for _, s := range snaps[:len(snaps)-1] {
		read := time.Duration(s.Load.InFlight) * time.Millisecond
		end := s.Time.Sub(epoch)
		if read < end-time.Millisecond {
			t.Errorf("tick %d ended at %v, its in-flight count was read at %v, before", s.Seq, end, read)
		}
		late = append(late, read-end)
	}
	slices.Sort(late)
	if med := late[len(late)/2]; med >= MaxCutGrace/2 {
		t.Errorf("in-flight counts read %v after their ticks' ends (median; all: %v), the cut grace is %v",
			med, late, MaxCutGrace)
	}
}
