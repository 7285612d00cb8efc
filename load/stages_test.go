package load

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParsePlan(t *testing.T) {
	p, err := ParsePlan("30s:100/s, 2m:500/s,30s:0/s")
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != Rate || len(p.Stages) != 3 || p.Duration() != 3*time.Minute {
		t.Fatalf("plan %+v, duration %v", p, p.Duration())
	}
	if got := p.String(); got != "30s:100/s,2m0s:500/s,30s:0/s" {
		t.Errorf("String() = %q", got)
	}
	c, err := ParsePlan("10s:c=8,0s:c=2,5s:c=2")
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != Concurrency || c.Target(1).Concurrency != 2 {
		t.Errorf("concurrency plan %+v", c)
	}
	for _, tc := range []struct{ in, want string }{
		{"30s", "not DURATION:TARGET"},
		{"x:100/s", "bad duration"},
		{"30s:100", "a rate N/s or a concurrency c=N"},
		{"30s:abc/s", "bad number"},
		{"30s:100/s,10s:c=4", "all rates or all concurrencies"},
		{"30s:-1/s", "non-negative"},
		{"30s:c=1.5", "whole number"},
		{"0s:100/s", "must last"},
		{"-1s:100/s", "must not be negative"},
	} {
		_, err := ParsePlan(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePlan(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestPlanLevelAndCount(t *testing.T) {
	// 0 → 1000/s over 10 s, hold 1000/s for 5 s, jump to 200/s and hold.
	p, err := ParsePlan("10s:1000/s,5s:1000/s,0s:200/s,5s:200/s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at           time.Duration
		level, count float64
	}{
		{0, 0, 0},
		{5 * time.Second, 500, 1250},          // half the ramp: ½·5 s·500/s
		{10 * time.Second, 1000, 5000},        // the ramp's end: ½·10 s·1000/s
		{12 * time.Second, 1000, 7000},        // two seconds into the hold
		{15 * time.Second, 200, 10000},        // the jump: the level is the new stage's
		{17 * time.Second, 200, 10400},        // 2 s at 200/s
		{20 * time.Second, 0, 11000},          // the end: the level drops to 0
		{time.Minute, 0, 11000},               // the count stays
		{-time.Second, 0, 0},                  // before the start
		{2500 * time.Millisecond, 250, 312.5}, // ½·2.5 s·250/s
	} {
		if got := p.Level(tc.at); math.Abs(got-tc.level) > 1e-9 {
			t.Errorf("Level(%v) = %v, want %v", tc.at, got, tc.level)
		}
		if got := p.Count(tc.at); math.Abs(got-tc.count) > 1e-6 {
			t.Errorf("Count(%v) = %v, want %v", tc.at, got, tc.count)
		}
	}
}

func TestPlanTimeOfInvertsCount(t *testing.T) {
	p, err := ParsePlan("10s:1000/s,5s:1000/s,5s:0/s,10s:0/s,2s:300/s")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0.0; n <= p.Count(p.Duration()); n += 7.3 {
		at, ok := p.TimeOf(n)
		if !ok {
			t.Fatalf("TimeOf(%v) not reached", n)
		}
		if got := p.Count(at); math.Abs(got-n) > 1e-3 {
			t.Fatalf("Count(TimeOf(%v) = %v) = %v", n, at, got)
		}
	}
	// Nothing is due in the 10 s at 0/s: the count reached at the end of
	// the ramp down is next passed once the last ramp starts.
	end, _ := p.TimeOf(p.Count(20*time.Second) + 0.5)
	if end <= 30*time.Second {
		t.Errorf("a request due at %v, inside the stage at 0/s", end)
	}
	if _, ok := p.TimeOf(p.Count(p.Duration()) + 1); ok {
		t.Error("TimeOf past the plan's end is reached")
	}
	// The gaps follow the instantaneous rate: at 500/s (5 s into the
	// ramp) a gap is 2 ms, at 900/s about 1.11 ms.
	for _, at := range []time.Duration{5 * time.Second, 9 * time.Second} {
		n := p.Count(at)
		t0, _ := p.TimeOf(n)
		t1, _ := p.TimeOf(n + 1)
		want := 1 / p.Level(at)
		if gap := (t1 - t0).Seconds(); math.Abs(gap-want)/want > 0.01 {
			t.Errorf("gap at %v = %v s, want %v s", at, gap, want)
		}
	}
}

func TestPlanStageAt(t *testing.T) {
	p, err := ParsePlan("10s:c=4,0s:c=8,10s:c=8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{
		{0, 0},
		{9 * time.Second, 0},
		{10 * time.Second, 2}, // the zero-length stage is never under way
		{19 * time.Second, 2},
		{20 * time.Second, 3}, // over
	} {
		if got := p.StageAt(tc.at); got != tc.want {
			t.Errorf("StageAt(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
	if got := p.Level(5 * time.Second); got != 2 {
		t.Errorf("Level(5s) = %v, want 2 (half way to c=4)", got)
	}
}
