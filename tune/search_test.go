package tune

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// testSpace is a grid like the command's defaults, a little smaller.
func testSpace() Space {
	return Space{
		Instances:   []int{1, 2, 3, 4, 5},
		MaxBatch:    []int{1, 2, 4, 8, 16, 32, 64, 128},
		Delays:      []int{0, 100, 500, 2000},
		Preferred:   []Preferred{PreferMax, PreferHalf},
		Concurrency: []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
	}
}

// drive runs a search against the synthetic model to its end.
func drive(t *testing.T, o SearchOptions, m model) *Search {
	t.Helper()
	x, err := NewSearch(o)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		tr, ok := x.Next()
		if !ok {
			return x
		}
		if n > 100000 {
			t.Fatal("the search does not end")
		}
		if m.MaxLoadable > 0 && tr.Point.MaxBatch > m.MaxLoadable {
			x.Record(Measure{}, errors.New("refused"))
			continue
		}
		me := m.measure(tr.Point, tr.Concurrency, o.Threshold)
		if o.Objective == Latency && me.Throughput < o.MinThroughput {
			me.Pass = false
		}
		x.Record(me, nil)
	}
}

// bestOf is the best passing result's value, -Inf for none.
func bestOf(x *Search, o Objective) (float64, Result) {
	rs, best, _ := x.State()
	if best < 0 {
		return math.Inf(-1), Result{}
	}
	return o.value(rs[best].Measure), rs[best]
}

// TestSearchNearBruteForce: on synthetic models like the benchmark's
// profiles (a small fast model, a resnet50-like one, a large model with a
// long batch time), each under a tight and a loose SLO, the search's best
// is within 5% of the best of every point of the grid, and it measures at
// most 15% of the grid.
func TestSearchNearBruteForce(t *testing.T) {
	t.Parallel()
	models := map[string]model{
		"small":    {FixedMS: 0.3, PerItemMS: 0.02, Overlap: 0.6},
		"resnet50": {FixedMS: 2, PerItemMS: 0.45, Overlap: 0.3},
		"large":    {FixedMS: 20, PerItemMS: 6, Overlap: 0.1},
	}
	slos := map[string][]time.Duration{
		"small":    {2 * time.Millisecond, 20 * time.Millisecond},
		"resnet50": {15 * time.Millisecond, 100 * time.Millisecond},
		"large":    {150 * time.Millisecond, 1500 * time.Millisecond},
	}
	sp := testSpace()
	for name, m := range models {
		for _, slo := range slos[name] {
			t.Run(fmt.Sprintf("%s/%v", name, slo), func(t *testing.T) {
				o := SearchOptions{Objective: Throughput, Space: sp, Threshold: slo,
					Baseline: Point{Instances: 1, MaxBatch: 8, Delay: 100, Preferred: PreferMax}}
				tuned := drive(t, o, m)
				o.Exhaustive = true
				brute := drive(t, o, m)
				tv, tr := bestOf(tuned, Throughput)
				bv, br := bestOf(brute, Throughput)
				rs, _, why := tuned.State()
				t.Logf("tune %.0f (%v at %d) in %d trials (%s); brute force %.0f (%v at %d) of %d",
					tv, tr.Point, tr.Concurrency, len(rs), why, bv, br.Point, br.Concurrency, sp.Size())
				if tv < 0.95*bv {
					t.Errorf("tune's best %.0f is under 95%% of the brute force's %.0f", tv, bv)
				}
				if float64(len(rs)) > 0.15*float64(sp.Size()) {
					t.Errorf("tune measured %d of %d grid points, over 15%%", len(rs), sp.Size())
				}
			})
		}
	}
}

// noisy wraps the synthetic model with ±spread multiplicative noise on
// throughput and latency, seeded, as a busy host adds.
type noisy struct {
	model
	spread float64
	state  uint64
}

func (n *noisy) jitter() float64 {
	n.state = n.state*6364136223846793005 + 1442695040888963407
	u := float64(n.state>>11) / float64(1<<53)
	return 1 + n.spread*(2*u-1)
}

// TestSearchHoldsUnderNoise: with ±3% noise on every measurement, the
// configuration and load the search picks are, measured without noise,
// within 5% of the grid's true best.
func TestSearchHoldsUnderNoise(t *testing.T) {
	t.Parallel()
	m := model{FixedMS: 2, PerItemMS: 0.45, Overlap: 0.3}
	sp := testSpace()
	slo := 30 * time.Millisecond
	o := SearchOptions{Objective: Throughput, Space: sp, Threshold: slo, Baseline: Point{Instances: 2, MaxBatch: 4, Delay: 0, Preferred: PreferMax}}
	for seed := range uint64(20) {
		n := &noisy{model: m, spread: 0.03, state: seed}
		x, err := NewSearch(o)
		if err != nil {
			t.Fatal(err)
		}
		for {
			tr, ok := x.Next()
			if !ok {
				break
			}
			me := m.measure(tr.Point, tr.Concurrency, slo)
			j := n.jitter()
			me.Throughput *= j
			me.Latency, me.P99 = time.Duration(float64(me.Latency)/j), time.Duration(float64(me.P99)/j)
			me.Pass = me.Latency < slo
			x.Record(me, nil)
		}
		rs, best, _ := x.State()
		if best < 0 {
			t.Fatalf("seed %d: no best", seed)
		}
		truth := m.measure(rs[best].Point, rs[best].Concurrency, slo)
		o2 := o
		o2.Exhaustive = true
		bv, _ := bestOf(drive(t, o2, m), Throughput)
		if !truth.Pass || truth.Throughput < 0.95*bv {
			t.Errorf("seed %d: tune picked %v at %d, truly %.0f infer/s (pass %v), the grid's best %.0f", seed,
				rs[best].Point, rs[best].Concurrency, truth.Throughput, truth.Pass, bv)
		}
	}
}

// TestSearchBudgets: the trial budget stops the search at that many
// trials, the time budget before a trial that would run past it.
func TestSearchBudgets(t *testing.T) {
	t.Parallel()
	m := model{FixedMS: 2, PerItemMS: 0.45, Overlap: 0.3}
	o := SearchOptions{Objective: Throughput, Space: testSpace(), Threshold: 50 * time.Millisecond,
		Baseline: Point{Instances: 1, MaxBatch: 1}, MaxTrials: 5}
	rs, _, why := drive(t, o, m).State()
	if len(rs) != 5 || why != StopTrialBudget {
		t.Errorf("trial budget 5: %d trials, stopped %q", len(rs), why)
	}
	now := time.Unix(0, 0)
	o.MaxTrials, o.MaxTime = 0, 10*time.Second
	o.Now = func() time.Time { return now }
	x, err := NewSearch(o)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		tr, ok := x.Next()
		if !ok {
			break
		}
		now = now.Add(3 * time.Second) // every trial takes 3 s
		x.Record(m.measure(tr.Point, tr.Concurrency, o.Threshold), nil)
		n++
	}
	if _, _, why := x.State(); n != 3 || why != StopTimeBudget {
		t.Errorf("10 s of 3 s trials: %d trials, stopped %q; want 3, the fourth would end at 12 s", n, why)
	}
}

// TestSearchSkipsConfigurationsThatDoNotLoad: a configuration the server
// refuses costs one trial, and the best is one that loaded.
func TestSearchSkipsConfigurationsThatDoNotLoad(t *testing.T) {
	t.Parallel()
	m := model{FixedMS: 2, PerItemMS: 0.45, Overlap: 0.3, MaxLoadable: 16}
	o := SearchOptions{Objective: Throughput, Space: testSpace(), Threshold: 200 * time.Millisecond,
		Baseline: Point{Instances: 1, MaxBatch: 8, Preferred: PreferMax}}
	x := drive(t, o, m)
	rs, best, _ := x.State()
	refused := map[Point]int{}
	for _, r := range rs {
		if r.LoadError != "" {
			refused[r.Point]++
		}
	}
	if len(refused) == 0 {
		t.Fatal("the search never tried a batch size over 16: the test shows nothing")
	}
	for p, n := range refused {
		if n != 1 {
			t.Errorf("%v refused %d times, want one trial", p, n)
		}
	}
	if best < 0 || rs[best].Point.MaxBatch > 16 {
		t.Errorf("best %d: %+v", best, rs[max(best, 0)])
	}
}

// TestSearchLatencyObjective: with a throughput floor, the best is within
// 5% of the lowest latency any grid point gives at the floor or more, and
// it meets the floor.
func TestSearchLatencyObjective(t *testing.T) {
	t.Parallel()
	m := model{FixedMS: 2, PerItemMS: 0.45, Overlap: 0.3}
	o := SearchOptions{Objective: Latency, Space: testSpace(), Threshold: 100 * time.Millisecond,
		Baseline: Point{Instances: 1, MaxBatch: 8, Preferred: PreferMax}, MinThroughput: 1500}
	tuned := drive(t, o, m)
	o.Exhaustive = true
	brute := drive(t, o, m)
	tv, tr := bestOf(tuned, Latency)
	bv, br := bestOf(brute, Latency)
	rs, _, _ := tuned.State()
	t.Logf("tune %v (%v at %d, %.0f infer/s) in %d trials; brute force %v (%v at %d)", tr.Latency, tr.Point, tr.Concurrency,
		tr.Throughput, len(rs), br.Latency, br.Point, br.Concurrency)
	if math.IsInf(tv, -1) || -tv > -bv*1.05 || tr.Throughput < 1500 {
		t.Errorf("tune's best latency %v at %.0f infer/s; the grid's %v", tr.Latency, tr.Throughput, br.Latency)
	}
}

// TestSearchWithoutPassingLoad: when no load of any configuration meets
// the SLO, the search ends with no best, having measured little.
func TestSearchWithoutPassingLoad(t *testing.T) {
	t.Parallel()
	m := model{FixedMS: 20, PerItemMS: 6, Overlap: 0.1}
	o := SearchOptions{Objective: Throughput, Space: testSpace(), Threshold: time.Millisecond,
		Baseline: Point{Instances: 1, MaxBatch: 8, Preferred: PreferMax}}
	rs, best, why := drive(t, o, m).State()
	if best != -1 || why != StopConverged || len(rs) > 40 {
		t.Errorf("best %d after %d trials, %q", best, len(rs), why)
	}
}
