package driver

import (
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
)

// BenchmarkPlanPacer is one Pace of a ramp: the inverse of the plan's
// count, per request.
func BenchmarkPlanPacer(b *testing.B) {
	p, err := load.ParsePlan("10s:1000/s,10s:1000/s,10s:0/s")
	if err != nil {
		b.Fatal(err)
	}
	pacer := NewPlanPacer(p, 1, 0, 0, 0, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pacer.Pace(0, uint64(i%20000))
	}
}

// BenchmarkSchedulePacer is one Pace of a fixed schedule.
func BenchmarkSchedulePacer(b *testing.B) {
	s := IntervalSchedule([]time.Duration{time.Millisecond, 2 * time.Millisecond, 500 * time.Microsecond})
	pacer := SchedulePacer{Schedule: s}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pacer.Pace(0, uint64(i))
	}
}

// BenchmarkOpenLoopPlanNop is BenchmarkOpenLoopNop under a plan whose rate
// no client can reach: the driver's cost per request with the plan's
// pacing, stage checks and tickets naming no request.
func BenchmarkOpenLoopPlanNop(b *testing.B) {
	p, err := load.ParsePlan("0s:1000000000/s,1h:1000000000/s")
	if err != nil {
		b.Fatal(err)
	}
	benchDriver(b, &nopClient{}, Options{Plan: p})
}

// BenchmarkOpenLoopScheduleNop is the same under a fixed schedule whose
// hits are all due at once, each naming its request (a trace).
func BenchmarkOpenLoopScheduleNop(b *testing.B) {
	const n = 1 << 20
	s := &Schedule{At: make([]time.Duration, n), Request: make([]int32, n)}
	benchDriver(b, &nopClient{}, Options{Schedule: s})
}
