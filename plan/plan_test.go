package plan

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

func conc(n int) load.Target { return load.Target{Mode: load.Concurrency, Concurrency: n} }

func TestLevels(t *testing.T) {
	got, err := Levels(load.Target{Mode: load.Concurrency}, 1, 33, 8)
	if err != nil || len(got) != 5 || got[4].Concurrency != 33 {
		t.Errorf("1:33:8 gave %v, %v", got, err)
	}
	rates, err := Levels(load.Target{Mode: load.Rate, Distribution: load.Poisson}, 10, 30, 10)
	if err != nil || len(rates) != 3 || rates[2].Rate != 30 || rates[0].Distribution != load.Poisson {
		t.Errorf("rates 10:30:10 gave %v, %v", rates, err)
	}
	for _, bad := range [][3]float64{
		{math.NaN(), 1, 1}, {1, math.Inf(1), 1}, {1, 10, 0}, {10, 1, 1}, {1, 1e16, 1}, {1, 2, 0.3}, {0.5, 2, 1},
	} {
		if l, err := Levels(load.Target{Mode: load.Concurrency}, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Levels%v accepted: %d levels", bad, len(l))
		}
	}
}

// measured is a Level as a search sees it.
func measured(t load.Target, pass bool) Level { return Level{Target: t, Pass: pass} }

func TestSweepStopsAtTheSLO(t *testing.T) {
	levels := []load.Target{conc(1), conc(2), conc(4), conc(8)}
	all := Sweep{Levels: levels}
	var done []Level
	for {
		next, ok := all.Next(done)
		if !ok {
			break
		}
		done = append(done, measured(next, false)) // failing levels do not stop a plain sweep
	}
	if len(done) != 4 {
		t.Errorf("sweep measured %d levels, want 4", len(done))
	}
	slo := Sweep{Levels: levels, StopAtSLO: true}
	done = []Level{measured(conc(1), true), measured(conc(2), false)}
	if next, ok := slo.Next(done); ok {
		t.Errorf("linear search went on to %v after a failing level", next)
	}
	if Best(done) != 0 {
		t.Errorf("best %d, want 0", Best(done))
	}
}

// search runs a search against a pass function and returns the levels it
// measured and its answer.
func search(s Search, pass func(load.Target) bool) ([]int, int) {
	var done []Level
	var tried []int
	for {
		next, ok := s.Next(done)
		if !ok {
			break
		}
		tried = append(tried, next.Concurrency)
		done = append(done, measured(next, pass(next)))
	}
	b := Best(done)
	if b < 0 {
		return tried, -1
	}
	return tried, done[b].Target.Concurrency
}

func TestBinaryFindsTheSweepsAnswer(t *testing.T) {
	var levels []load.Target
	for c := 4; c <= 32; c += 4 {
		levels = append(levels, conc(c))
	}
	for limit := 0; limit <= 36; limit += 2 {
		pass := func(l load.Target) bool { return l.Concurrency <= limit }
		_, want := search(Sweep{Levels: levels, StopAtSLO: true}, pass)
		tried, got := search(Binary{Levels: levels}, pass)
		if got != want {
			t.Errorf("limit %d: binary search (tried %v) found %d, the sweep %d", limit, tried, got, want)
		}
		if total := (Binary{Levels: levels}).Total(); len(tried) > total {
			t.Errorf("limit %d: %d levels tried, Total says at most %d", limit, len(tried), total)
		}
	}
	// perf_analyzer's order: the lowest, the highest, then halving.
	tried, _ := search(Binary{Levels: levels}, func(l load.Target) bool { return l.Concurrency <= 20 })
	if want := []int{4, 32, 16, 24, 20}; !equal(tried, want) {
		t.Errorf("tried %v, want %v", tried, want)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCapacitySearchesRatesFromTheProbe(t *testing.T) {
	c := &Capacity{Concurrency: 64, Base: load.Target{Mode: load.Rate, MaxInFlight: 100}}
	first, ok := c.Next(nil)
	if !ok || first != conc(64) {
		t.Fatalf("first level %v, want the closed-loop probe at 64", first)
	}
	done := []Level{{Target: first, Step: record.Step{Client: stats.ClientStats{RequestsPerS: 950}}}}
	// A second probe at twice the concurrency checks that the first
	// saturated the server; it gains under 10%: the probes are done, and
	// the rates follow the better of the two.
	second, ok := c.Next(done)
	if !ok || second != conc(128) {
		t.Fatalf("second level %v, want the probe at 128", second)
	}
	done = append(done, Level{Target: second, Step: record.Step{Client: stats.ClientStats{RequestsPerS: 1000}}})
	for {
		next, ok := c.Next(done)
		if !ok {
			break
		}
		if !next.Open() || next.MaxInFlight != 100 || math.Mod(next.Rate, 50) != 0 || next.Rate > 1100 {
			t.Fatalf("level %v is not a rate on the 5%% grid of 1000/s", next)
		}
		done = append(done, Level{Target: next, Pass: next.Rate <= 730})
	}
	if b := c.Best(done); b < 2 || done[b].Target.Rate != 700 {
		t.Errorf("capacity search found %v, want 700/s (the grid's highest under 730)", done[max(b, 0)].Target)
	}
	if len(done) > c.Total() {
		t.Errorf("%d levels, Total says %d", len(done), c.Total())
	}
	if err := c.Unmeasurable(done); err != nil {
		t.Errorf("a search that measured rates is called unmeasurable: %v", err)
	}
}

// TestCapacityProbesUntilSaturated: a model that runs many requests at once
// (an LLM batching in flight) is not saturated at the concurrency its
// config suggests; the probe doubles while throughput grows by 10%, and the
// rates leave out those too low to fill a window.
func TestCapacityProbesUntilSaturated(t *testing.T) {
	// Throughput at 4, 8, ... in flight: requests of about 2 s, slower as
	// more run at once, up to 64 at a time.
	throughput := map[int]float64{4: 1.9, 8: 3.6, 16: 6.5, 32: 9.0, 64: 10.7, 128: 10.8}
	c := &Capacity{Concurrency: 4, Base: load.Target{Mode: load.Rate}, Window: 2 * time.Second}
	var done []Level
	var probes []int
	for {
		next, ok := c.Next(done)
		if !ok {
			t.Fatalf("the search ended after %v", probes)
		}
		if next.Open() {
			break
		}
		probes = append(probes, next.Concurrency)
		done = append(done, Level{Target: next, Step: record.Step{Client: stats.ClientStats{RequestsPerS: throughput[next.Concurrency]}}})
	}
	if !equal(probes, []int{4, 8, 16, 32, 64, 128}) {
		t.Errorf("probes at %v, want doubling from 4 until the gain is under 10%% (64 → 128)", probes)
	}
	// A 2 s window stretches to 20 s: 50 requests need 2.5 req/s.
	if floor := MeasurableRate(2 * time.Second); floor != 2.5 {
		t.Errorf("measurable rate %v, want 2.5", floor)
	}
	for {
		next, ok := c.Next(done)
		if !ok {
			break
		}
		if !next.Open() || next.Rate < 2.5 || next.Rate > 1.1*10.8*1.005 { // to three figures
			t.Fatalf("rate level %v: want between 2.5/s and 110%% of 10.8/s", next)
		}
		done = append(done, Level{Target: next, Pass: next.Rate < 9})
	}
	if b := c.Best(done); b < len(probes) || done[b].Target.Rate != 8.64 {
		t.Errorf("capacity %v, want 8.64/s (80%% of 10.8, the grid's highest under 9)", done[max(b, 0)].Target)
	}

	// Saturated at 1.6 req/s, no rate fills a window: the search ends after
	// the probes, and says which window would do.
	c = &Capacity{Concurrency: 4, Base: load.Target{Mode: load.Rate}, Window: 2 * time.Second}
	done = []Level{
		{Target: conc(4), Step: record.Step{Client: stats.ClientStats{RequestsPerS: 1.6}}},
		{Target: conc(8), Step: record.Step{Client: stats.ClientStats{RequestsPerS: 1.6}}},
	}
	if next, ok := c.Next(done); ok {
		t.Fatalf("next level %v for a model saturated at 1.6 req/s with 2 s windows", next)
	}
	err := c.Unmeasurable(done)
	if err == nil || !strings.Contains(err.Error(), "-p 7000") || !strings.Contains(err.Error(), "1.6 req/s") {
		t.Errorf("error %v; want the saturation and a window of 7 s (50 requests in 10 windows at 0.8 req/s)", err)
	}
}
