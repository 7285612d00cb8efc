package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestMannWhitneyExact: p-values of small samples, counted by hand from the
// C(n+m, n) arrangements of the ranks.
func TestMannWhitneyExact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		// 3 against 3, all of B above A: 2 of 20 arrangements are as far.
		{"3v3 apart", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		// 5 against 5 apart: 2 of 252.
		{"5v5 apart", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		// Interleaved: U = 6 of 9; the arrangements with U <= 3 or >= 6
		// are 7 + 7 of 20.
		{"3v3 interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 0.7},
		// 4 against 4 apart: 2 of 70.
		{"4v4 apart, B below", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 2.0 / 70},
	} {
		if got := MannWhitneyP(tc.xs, tc.ys); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: p = %.6f, want %.6f", tc.name, got, tc.want)
		}
		if strings.HasSuffix(tc.name, "apart") || strings.Contains(tc.name, "apart,") {
			if least := leastMannWhitneyP(len(tc.xs), len(tc.ys)); math.Abs(least-tc.want) > 1e-12 {
				t.Errorf("%s: least p %.6f, want %.6f", tc.name, least, tc.want)
			}
		}
	}
}

// TestMannWhitneyNormal: with ties or large samples the normal
// approximation is used; it agrees with the exact test where both apply
// and tells a shift from none.
func TestMannWhitneyNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	same := func(shift float64) (xs, ys []float64) {
		for range 40 {
			xs = append(xs, rng.NormFloat64())
			ys = append(ys, rng.NormFloat64()+shift)
		}
		return xs, ys
	}
	if p := MannWhitneyP(same(0)); p < 0.05 {
		t.Errorf("no shift: p = %.4f", p)
	}
	if p := MannWhitneyP(same(1)); p > 0.001 {
		t.Errorf("a shift of one standard deviation over 40 samples: p = %.4f", p)
	}
	// Ties: all equal is no evidence at all.
	if p := MannWhitneyP([]float64{1, 1, 1}, []float64{1, 1, 1}); p != 1 {
		t.Errorf("all tied: p = %v", p)
	}
	xs, ys := []float64{1, 2, 3, 4, 5, 6, 7, 8}, []float64{5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5}
	exact := MannWhitneyP(xs, ys)
	u := 0.0
	for _, x := range xs {
		for _, y := range ys {
			if x < y {
				u++
			}
		}
	}
	if approx := normalMannWhitney(xs, ys, u); math.Abs(approx-exact) > 0.01 {
		t.Errorf("normal %.4f, exact %.4f", approx, exact)
	}
}

// TestBootstrapChange: the interval holds the true change of a shifted
// sample and leaves out zero; for two samples of one distribution it holds
// zero.
func TestBootstrapChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var xs, ys, zs []float64
	for range 60 {
		xs = append(xs, 100+5*rng.NormFloat64())
		ys = append(ys, 120+5*rng.NormFloat64())
		zs = append(zs, 100+5*rng.NormFloat64())
	}
	lo, hi, ok := BootstrapChange(xs, ys, 0.05, 2000)
	if !ok || lo > 20 || hi < 20 || lo <= 0 {
		t.Errorf("+20%%: interval [%.1f, %.1f]", lo, hi)
	}
	lo, hi, _ = BootstrapChange(xs, zs, 0.05, 2000)
	if lo > 0 || hi < 0 {
		t.Errorf("same distribution: interval [%.1f, %.1f] leaves out 0", lo, hi)
	}
	if _, _, ok := BootstrapChange([]float64{0, 0}, ys, 0.05, 100); ok {
		t.Error("a zero mean has no change in percent")
	}
}

// repeatedRun is a run file of n repeats of 4 ticks at concurrency 4, each
// repeat's ticks at throughput tput(i) and p99 p99(i) ms.
func repeatedRun(n int, tput, p99 func(int) float64) *record.Run {
	run := &record.Run{Header: record.Header{Model: record.ModelInfo{Name: "m"}}}
	for r := 1; r <= n; r++ {
		for k := 1; k <= 4; k++ {
			d := time.Duration(p99(r) * float64(time.Millisecond))
			c := stats.ClientStats{Duration: time.Second, Requests: int64(tput(r)), Successes: int64(tput(r)),
				Inferences: int64(tput(r)), InferPerS: tput(r), RequestsPerS: tput(r),
				Latency: stats.Latency{Count: int64(tput(r)), Mean: d / 2, P50: d / 2, P90: d, P95: d, P99: d, Max: d}}
			run.Snapshots = append(run.Snapshots, stats.Snapshot{Seq: k, Repeat: r, Elapsed: time.Duration(k) * time.Second,
				Interval: time.Second, Load: stats.Load{Mode: load.Concurrency, Concurrency: 4}, Tick: c, Window: c, Run: c})
		}
	}
	return run
}

// TestAddNoiseRepeats: with repeats on both sides each figure is tested
// over them; a shift every repeat shows is significant, jitter is not.
func TestAddNoiseRepeats(t *testing.T) {
	a := repeatedRun(5, func(i int) float64 { return 100 + float64(i%3) }, func(i int) float64 { return 10 + float64(i%2) })
	b := repeatedRun(5, func(i int) float64 { return 100 + float64((i+1)%3) }, func(i int) float64 { return 13 + float64(i%2) })
	if rs := Repeats(a); len(rs) != 5 || rs[2].Ticks != 4 {
		t.Fatalf("repeats: %d", len(rs))
	}
	c, err := Compare(SummarizeRun(a), SummarizeRun(b), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	c.AddNoise(a, b, DefaultAlpha)
	got := map[string]*Noise{}
	for _, m := range c.Overall.Metrics {
		got[m.Metric] = m.Noise
	}
	if n := got["throughput"]; n == nil || n.Test != TestMannWhitney || n.Significant || n.NA != 5 {
		t.Errorf("throughput (same in every repeat but for jitter): %+v", n)
	}
	if n := got["p99_latency"]; n == nil || !n.Significant || *n.PValue > 0.01 {
		t.Errorf("p99 (+3 ms in every repeat): %+v", n)
	}

	failed := c.CheckFailIf([]FailIf{mustFailIf(t, "p99:+10%"), mustFailIf(t, "throughput:-5%"), mustFailIf(t, "p99:+50%")})
	if len(failed) != 1 || failed[0].Expr != "p99:+10%" {
		t.Errorf("failed: %+v", failed)
	}
	var txt strings.Builder
	c.writeFailIf(&txt, false)
	if !strings.Contains(txt.String(), "p99:+10% at whole run: +") || !strings.Contains(txt.String(), "significant (mann-whitney): FAIL") {
		t.Errorf("fail-if lines:\n%s", txt.String())
	}
}

func mustFailIf(t *testing.T, expr string) FailIf {
	t.Helper()
	f, err := ParseFailIf(expr)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestParseFailIf: bounds as written, and malformed ones refused naming
// the bad part.
func TestParseFailIf(t *testing.T) {
	for expr, want := range map[string]FailIf{
		"p99:+10%":         {Expr: "p99:+10%", Metric: "p99_latency", Percent: 10},
		"throughput:-5%":   {Expr: "throughput:-5%", Metric: "throughput", Percent: -5},
		"ttft-p99:+2.5%":   {Expr: "ttft-p99:+2.5%", Metric: "ttft_p99", Percent: 2.5},
		"p50_latency:+20%": {Expr: "p50_latency:+20%", Metric: "p50_latency", Percent: 20},
	} {
		if got, err := ParseFailIf(expr); err != nil || got != want {
			t.Errorf("%q: %+v, %v", expr, got, err)
		}
	}
	for expr, names := range map[string]string{
		"p99+10%":     "write METRIC:+N%",
		"p98:+10%":    `unknown metric "p98"`,
		"p99:10%":     `"10%" has no direction`,
		"p99:+10":     `"+10" is not a percentage`,
		"p99:+ten%":   `"+ten%" is not a non-zero percentage`,
		"p99:+0%":     `"+0%" is not a non-zero percentage`,
		"throughput:": `"" has no direction`,
	} {
		_, err := ParseFailIf(expr)
		if err == nil || !strings.Contains(err.Error(), names) || !strings.Contains(err.Error(), expr) {
			t.Errorf("%q: %v, want it to name %q", expr, err, names)
		}
	}
}

// TestFailIfNeedsSignificance: a change past the bound within noise does
// not fail, nor does a significant change inside the bound.
func TestFailIfNeedsSignificance(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	c := &Comparison{Overall: LevelComparison{Level: wholeRun, Metrics: []Change{
		{Metric: "p99_latency", Percent: pct(25), Noise: &Noise{Test: TestBootstrapTicks}},
		{Metric: "throughput", Percent: pct(-3), Noise: &Noise{Test: TestBootstrapTicks, Significant: true}},
		{Metric: "queue", Percent: pct(40)},
	}}}
	failed := c.CheckFailIf([]FailIf{mustFailIf(t, "p99:+10%"), mustFailIf(t, "throughput:-5%"), mustFailIf(t, "queue:+10%")})
	if len(failed) != 0 || len(c.FailIf) != 3 {
		t.Fatalf("failed %+v of %+v", failed, c.FailIf)
	}
	if !c.FailIf[0].Past || c.FailIf[0].Note != "past the bound, but within noise" || !strings.HasPrefix(c.FailIf[2].Note, "untested") {
		t.Errorf("notes: %+v", c.FailIf)
	}
	// Significant and past the bound: a failure; with BeyondNoise, only
	// when the interval is wholly past the bound.
	lo, hi := 5.0, 40.0
	ch := &c.Overall.Metrics[0]
	ch.Noise = &Noise{Test: TestBootstrapTicks, Significant: true, Low: &lo, High: &hi}
	ch.samplesA, ch.samplesB = []float64{1, 2}, []float64{1, 2}
	if failed := c.CheckFailIf([]FailIf{mustFailIf(t, "p99:+10%")}); len(failed) != 1 {
		t.Errorf("significant +25%% against +10%%: %+v", failed)
	}
	strict := mustFailIf(t, "p99:+10%")
	strict.BeyondNoise = true
	c.FailIf = nil
	if failed := c.CheckFailIf([]FailIf{strict}); len(failed) != 0 || c.FailIf[0].Note != "significant, but the noise reaches inside the bound" {
		t.Errorf("beyond noise, interval [5%%, 40%%] against +10%%: %+v", c.FailIf)
	}
	lo = 12
	if failed := c.CheckFailIf([]FailIf{strict}); len(failed) != 1 {
		t.Errorf("beyond noise, interval [12%%, 40%%] against +10%%: %+v", failed)
	}
}

// BenchmarkAddNoiseTicks is compare's noise test over one run a side: the
// bootstrap over 300 ticks (five minutes at one per second) for every
// metric of the whole run and one level.
func BenchmarkAddNoiseTicks(b *testing.B) {
	mk := func(shift float64) *record.Run {
		run := &record.Run{}
		for k := 1; k <= 300; k++ {
			d := time.Duration((10 + shift + float64(k%7)) * float64(time.Millisecond))
			c := stats.ClientStats{Duration: time.Second, Requests: 100, Successes: 100, Inferences: 100, InferPerS: 100 + float64(k%5),
				Latency: stats.Latency{Count: 100, Mean: d, P50: d, P99: 2 * d}}
			run.Snapshots = append(run.Snapshots, stats.Snapshot{Seq: k, Interval: time.Second, Elapsed: time.Duration(k) * time.Second,
				Load: stats.Load{Mode: load.Concurrency, Concurrency: 4}, Tick: c, Window: c, Run: c,
				Server: stats.ServerStats{Available: true, SuccessCount: 100, Queue: time.Millisecond}})
		}
		return run
	}
	a, bb := mk(0), mk(1)
	sa, sb := SummarizeRun(a), SummarizeRun(bb)
	b.ResetTimer()
	for b.Loop() {
		c, err := Compare(sa, sb, "a", "b")
		if err != nil {
			b.Fatal(err)
		}
		c.AddNoise(a, bb, DefaultAlpha)
	}
}

// BenchmarkMannWhitneyExact is the exact test of 30 repeats a side, the
// largest it counts every arrangement for.
func BenchmarkMannWhitneyExact(b *testing.B) {
	xs, ys := make([]float64, 30), make([]float64, 30)
	for i := range xs {
		xs[i], ys[i] = float64(2*i), float64(2*i+1)
	}
	for b.Loop() {
		MannWhitneyP(xs, ys)
	}
}

// TestAddNoiseModels: a comparison of runs over several models without
// repeats tests each model on its own share of the ticks; the same run
// against itself is within noise everywhere.
func TestAddNoiseModels(t *testing.T) {
	h, snaps := modelsRun(t)
	run := &record.Run{Header: h, Snapshots: snaps}
	sum := Summarize(h, snaps)
	c, err := Compare(sum, sum, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	c.AddNoise(run, run, DefaultAlpha)
	tested := 0
	for _, mc := range c.Models {
		for _, lc := range append(append([]LevelComparison(nil), mc.Steps...), mc.Overall) {
			for _, ch := range lc.Metrics {
				// The highest step's throughput is a maximum over
				// levels, which no test here reads.
				if ch.Percent == nil || ch.Metric == "peak_throughput" {
					continue
				}
				if ch.Noise == nil || ch.Noise.Test != TestBootstrapTicks || ch.Noise.Significant {
					t.Errorf("model %s, %s, %s: %+v", mc.Model, lc.Level, ch.Metric, ch.Noise)
				}
				tested++
			}
		}
	}
	if tested == 0 {
		t.Fatal("no change of a model was tested")
	}
}

// TestAddNoiseFewRepeats: with 3 repeats a side no Mann–Whitney U test can
// be significant at 0.05 (the least p is 0.100), so a --fail-if on such
// runs could never fail: the repeats' ticks are bootstrapped instead, the
// gate fails on a change every tick shows, and the notes say which test
// judged it and why.
func TestAddNoiseFewRepeats(t *testing.T) {
	a := repeatedRun(3, func(i int) float64 { return 100 + float64(i%3) }, func(i int) float64 { return 10 + float64(i%2) })
	b := repeatedRun(3, func(i int) float64 { return 100 + float64((i+1)%3) }, func(i int) float64 { return 16 + float64(i%2) })
	c, err := Compare(SummarizeRun(a), SummarizeRun(b), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	c.AddNoise(a, b, DefaultAlpha)
	if !strings.Contains(c.FewRepeats, "3 and 3 repeats cannot make a Mann-Whitney U test significant at 0.05 (the least p is 0.100; 4 and 4 repeats can)") {
		t.Errorf("FewRepeats %q", c.FewRepeats)
	}
	for _, m := range c.Overall.Metrics {
		if m.Metric == "p99_latency" && (m.Noise == nil || m.Noise.Test != TestBootstrapTicks || !m.Noise.Significant) {
			t.Errorf("p99 (+6 ms in every tick): %+v", m.Noise)
		}
	}
	if failed := c.CheckFailIf([]FailIf{mustFailIf(t, "p99:+10%")}); len(failed) != 1 {
		t.Errorf("a p99 50%% higher in every tick passed the gate: %+v", c.FailIf)
	}
	notes := strings.Join(c.noiseNotes(), "\n")
	if !strings.Contains(notes, "block bootstrap over the repeats' ticks judged the changes instead") {
		t.Errorf("notes:\n%s", notes)
	}
	// Four repeats a side can be tested as repeats.
	a, b = repeatedRun(4, func(int) float64 { return 100 }, func(int) float64 { return 10 }), repeatedRun(4, func(int) float64 { return 100 }, func(int) float64 { return 16 })
	if c, _ = Compare(SummarizeRun(a), SummarizeRun(b), "a", "b"); c != nil {
		c.AddNoise(a, b, DefaultAlpha)
		if c.FewRepeats != "" {
			t.Errorf("4 and 4 repeats: %q", c.FewRepeats)
		}
	}
}
