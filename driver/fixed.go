package driver

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Schedule is a fixed schedule of requests: hit n is due At[n] after Run
// begins (At in order), and sends the driver's request Request[n] (nil
// Request: the driver's requests in turn). With Period above 0 it repeats,
// round k's hits Period·k later (perf_analyzer's --request-intervals
// loops); without, the run ends after the last hit. A trace, scaled by
// its speed, and --request-intervals are both one.
type Schedule struct {
	At      []time.Duration
	Request []int32
	Period  time.Duration
}

// IntervalSchedule is the schedule of perf_analyzer's --request-intervals:
// each hit one interval after the last, the first one interval after the
// start, looping over the intervals.
func IntervalSchedule(intervals []time.Duration) *Schedule {
	s := &Schedule{At: make([]time.Duration, len(intervals))}
	var t time.Duration
	for i, d := range intervals {
		t += d
		s.At[i] = t
	}
	s.Period = t
	return s
}

func (s *Schedule) check(requests int) error {
	switch {
	case len(s.At) == 0:
		return errors.New("a schedule needs at least one request")
	case s.Request != nil && len(s.Request) != len(s.At):
		return fmt.Errorf("a schedule names the requests of %d of its %d hits", len(s.Request), len(s.At))
	case s.Period < 0:
		return fmt.Errorf("a schedule's period must not be negative, got %v", s.Period)
	case s.Period > 0 && s.Period < s.At[len(s.At)-1]:
		return fmt.Errorf("a schedule's period %v is shorter than its last hit's time %v", s.Period, s.At[len(s.At)-1])
	}
	for i := range s.At {
		if s.At[i] < 0 || i > 0 && s.At[i] < s.At[i-1] {
			return fmt.Errorf("a schedule's times must be in order from 0: hit %d at %v", i, s.At[i])
		}
	}
	for i, r := range s.Request {
		if r < 0 || int(r) >= requests {
			return fmt.Errorf("hit %d names request %d of %d", i, r, requests)
		}
	}
	return nil
}

// Span is how long one pass over the schedule lasts: its period, or its
// last hit's time.
func (s *Schedule) Span() time.Duration {
	if s.Period > 0 {
		return s.Period
	}
	return s.At[len(s.At)-1]
}

// MeanRate is the schedule's hits per second over its span (0 for a
// schedule whose hits are all at 0).
func (s *Schedule) MeanRate() float64 {
	span := s.Span()
	if span <= 0 {
		return 0
	}
	return float64(len(s.At)) / span.Seconds()
}

// Count is the number of hits due by t (at or before it) since the start.
func (s *Schedule) Count(t time.Duration) uint64 {
	if t < 0 {
		return 0
	}
	var rounds uint64
	if s.Period > 0 {
		rounds = uint64(t / s.Period)
		t -= time.Duration(rounds) * s.Period
	}
	n := sort.Search(len(s.At), func(i int) bool { return s.At[i] > t })
	return rounds*uint64(len(s.At)) + uint64(n)
}

// at is when hit n is due, and false past a schedule that does not loop.
func (s *Schedule) at(n uint64) (time.Duration, bool) {
	l := uint64(len(s.At))
	if n < l {
		return s.At[n], true
	}
	if s.Period <= 0 {
		return 0, false
	}
	round := n / l
	if round > uint64(math.MaxInt64/int64(s.Period)) {
		return 0, false
	}
	return time.Duration(round)*s.Period + s.At[n%l], true
}

// SchedulePacer paces a Schedule from schedule time From, starting with
// hit First. It is a pure function of its fields.
type SchedulePacer struct {
	Schedule *Schedule
	From     time.Duration
	First    uint64
}

// Pace implements Pacer: elapsed counts from From, hits from First.
func (p SchedulePacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	at, ok := p.Schedule.at(p.First + hits)
	if !ok {
		return 0, true
	}
	return at - p.From - elapsed, false
}

// ticket is an open-loop hit handed to a worker: when it was due, and
// which request it sends (-1: the worker's next in turn).
type ticket struct {
	at  time.Duration
	req int32
}

// requestOf is the request of the current segment's hit hits: the
// schedule's, or -1.
func (r *run) requestOf(hits uint64) int32 {
	s := r.d.opts.Schedule
	if s == nil || s.Request == nil {
		return -1
	}
	return s.Request[(r.planHits+hits)%uint64(len(s.Request))]
}

// startSchedule starts a schedule's clock at now.
func (r *run) startSchedule(now time.Duration) {
	r.d.change(func(s *runState) { s.plan.started, s.plan.startAt = true, now })
}
