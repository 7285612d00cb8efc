package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// The tests AddNoise names.
const (
	// TestMannWhitney is the Mann–Whitney U test over the repeats'
	// figures: each repeat of a run of --repeat N is one sample.
	TestMannWhitney = "mann-whitney"
	// TestBootstrapTicks is a block bootstrap over the ticks of one run a
	// side: weaker, as ticks of one run share its conditions (the host's
	// load, the server's state), so a change between two runs can be
	// "significant" when it is only the runs' difference.
	TestBootstrapTicks = "bootstrap-ticks"
)

// DefaultAlpha is the significance level of AddNoise's tests: a change is
// significant when its p-value is under it, or when the bootstrap's
// interval of 1 − DefaultAlpha leaves out zero.
const DefaultAlpha = 0.05

// bootstrapResamples is the number of bootstrap resamples: enough for the
// 2.5% and 97.5% points to be stable to a tenth of a percent.
const bootstrapResamples = 2000

// Noise is the verdict on one change: significant, or within the runs'
// noise, with the test that says so.
type Noise struct {
	// Test is TestMannWhitney or TestBootstrapTicks.
	Test string `json:"test"`
	// Significant is set when the change is more than the noise.
	Significant bool `json:"significant"`
	// PValue is the Mann–Whitney test's two-sided p-value.
	PValue *float64 `json:"p_value,omitempty"`
	// Low and High bound the change in percent (the bootstrap's interval
	// of the change of the ticks' mean).
	Low  *float64 `json:"low_percent,omitempty"`
	High *float64 `json:"high_percent,omitempty"`
	// NA and NB are the samples on each side: repeats or ticks.
	NA int `json:"n_a"`
	NB int `json:"n_b"`
}

// Word is the verdict in a word or two, for a table.
func (n *Noise) Word() string {
	if n == nil {
		return "untested"
	}
	if n.Significant {
		return "significant"
	}
	return "within noise"
}

// Repeats are a run's repeats, each summarized as a run of its own, in
// order; nil for a run without repeats.
func Repeats(run *record.Run) []record.Summary {
	byRepeat := map[int][]stats.Snapshot{}
	var order []int
	for _, s := range run.Snapshots {
		if s.Repeat <= 0 {
			continue
		}
		if _, seen := byRepeat[s.Repeat]; !seen {
			order = append(order, s.Repeat)
		}
		byRepeat[s.Repeat] = append(byRepeat[s.Repeat], s)
	}
	if len(order) == 0 {
		return nil
	}
	out := make([]record.Summary, 0, len(order))
	for _, r := range order {
		var steps []record.Step
		for _, st := range run.Steps {
			if st.Repeat == r {
				steps = append(steps, st)
			}
		}
		out = append(out, Summarize(run.Header, byRepeat[r], steps...))
	}
	return out
}

// AddNoise marks every change of c as significant or within noise. With
// two repeats or more on both sides (runs of --repeat N) each figure is
// tested over the repeats (Mann–Whitney U); otherwise over the runs' ticks
// (a block bootstrap), which is weaker. A comparison of several models is
// tested model by model on its repeats only.
func (c *Comparison) AddNoise(a, b *record.Run, alpha float64) {
	if alpha <= 0 || alpha >= 1 {
		alpha = DefaultAlpha
	}
	c.Alpha = alpha
	ra, rb := Repeats(a), Repeats(b)
	repeats := len(ra) >= 2 && len(rb) >= 2
	if least := leastMannWhitneyP(len(ra), len(rb)); repeats && least >= alpha {
		// A test that could call nothing significant would pass every
		// gate: the repeats' ticks are tested instead.
		c.FewRepeats = fmt.Sprintf("%d and %d repeats cannot make a Mann-Whitney U test significant at %.2f (the least p is %.3f; %d and %d repeats can): "+
			"the block bootstrap over the repeats' ticks judged the changes instead", len(ra), len(rb), alpha, least, repeatsFor(alpha), repeatsFor(alpha))
		repeats = false
	}
	if len(c.Models) > 0 {
		for _, mc := range c.Models {
			pa, pb := modelRepeats(ra, mc.Model), modelRepeats(rb, mc.Model)
			switch ma, mb := modelTicks(a, mc.Model), modelTicks(b, mc.Model); {
			case repeats && len(pa) >= 2 && len(pb) >= 2:
				mc.addNoise(a, b, pa, pb, alpha)
			case !repeats && ma != nil && mb != nil:
				mc.addNoise(ma, mb, nil, nil, alpha)
			}
		}
		if repeats {
			c.Overall.addNoise(metricsByID(), nil, nil, ra, rb, alpha)
		} else {
			c.Overall.addNoise(metricsByID(), loadTicks(a), loadTicks(b), nil, nil, alpha)
		}
		return
	}
	if !repeats {
		ra, rb = nil, nil
	}
	c.addNoise(a, b, ra, rb, alpha)
}

// addNoise tests one model's levels and whole run, from its repeats or, with
// none, the runs' ticks.
func (c *Comparison) addNoise(a, b *record.Run, ra, rb []record.Summary, alpha float64) {
	byID := metricsByID()
	for i := range c.Steps {
		lc := &c.Steps[i]
		if lc.stepA == nil || lc.stepB == nil {
			continue
		}
		var ta, tb []stats.Snapshot
		if ra == nil {
			ta, tb = stepTicks(a, *lc.stepA), stepTicks(b, *lc.stepB)
		}
		lc.addNoise(byID, ta, tb, repeatSteps(ra, lc.stepA.Load), repeatSteps(rb, lc.stepB.Load), alpha)
	}
	var ta, tb []stats.Snapshot
	if ra == nil {
		ta, tb = loadTicks(a), loadTicks(b)
	}
	c.Overall.addNoise(byID, ta, tb, ra, rb, alpha)
}

// levelKey matches a step of one repeat with the same level of another.
type levelKey struct {
	mode  load.Mode
	level float64
}

func levelOf(l stats.Load) levelKey { return levelKey{l.Mode, l.Target().Level()} }

// repeatSteps are, for each repeat, its first step at load l, as a summary
// of that step alone; nil without repeats.
func repeatSteps(rs []record.Summary, l stats.Load) []record.Summary {
	if rs == nil {
		return nil
	}
	k := levelOf(l)
	var out []record.Summary
	for _, r := range rs {
		for _, st := range r.Steps {
			if levelOf(st.Load) == k {
				out = append(out, record.Summary{Client: st.Client, Server: st.Server, Metrics: st.Metrics, ClientCPU: st.ClientCPU})
				break
			}
		}
	}
	return out
}

// modelRepeats are each repeat's share of one model.
func modelRepeats(rs []record.Summary, model string) []record.Summary {
	var out []record.Summary
	for _, r := range rs {
		for i, m := range r.Models {
			if m.Name == model {
				out = append(out, ModelRun(r, i))
			}
		}
		if len(r.Models) == 0 && r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

// metricsByID are the compared metrics by their JSON name.
func metricsByID() map[string]compared {
	m := map[string]compared{}
	for _, c := range metricsFor(true, true) {
		m[c.metric] = c
	}
	return m
}

// stepTicks are the ticks of a step (by sequence number).
func stepTicks(run *record.Run, st record.Step) []stats.Snapshot {
	var out []stats.Snapshot
	for _, s := range run.Snapshots {
		// A step pooled over repeats (SummarizeRepeated) spans other
		// levels' ticks: only its own level's count.
		if s.Seq >= st.FirstSeq && s.Seq <= st.LastSeq && !s.Load.Drain && levelOf(s.Load) == levelOf(st.Load) {
			out = append(out, s)
		}
	}
	return out
}

// loadTicks are a run's ticks under load: the drain is left out.
func loadTicks(run *record.Run) []stats.Snapshot {
	var out []stats.Snapshot
	for _, s := range run.Snapshots {
		if !s.Load.Drain {
			out = append(out, s)
		}
	}
	return out
}

// tickNumbers are one tick's numbers in the shape a compared metric reads.
func tickNumbers(s stats.Snapshot) levelNumbers {
	n := levelNumbers{client: s.Tick, server: record.ServerSummary{ServerStats: s.Server, Ticks: 1},
		cpu: record.ClientCPU{PerRequest: s.System.CPUPerRequest}}
	for _, g := range s.Metrics.GPUs {
		n.metrics.GPUs = append(n.metrics.GPUs, record.GPUSummary{UUID: g.UUID, UtilizationAvg: g.Utilization, HasUtilization: g.HasUtilization})
	}
	return n
}

func summaryNumbers(s record.Summary) levelNumbers {
	return levelNumbers{client: s.Client, server: s.Server, metrics: s.Metrics, cpu: s.ClientCPU}
}

// addNoise tests each change of the level: over the repeats when both
// sides have two or more, else over the ticks.
func (lc *LevelComparison) addNoise(byID map[string]compared, ta, tb []stats.Snapshot, ra, rb []record.Summary, alpha float64) {
	for i := range lc.Metrics {
		ch := &lc.Metrics[i]
		m, ok := byID[ch.Metric]
		if !ok || ch.Percent == nil {
			continue
		}
		if len(ra) >= 2 && len(rb) >= 2 {
			xa, xb := values(m, ra, summaryNumbers), values(m, rb, summaryNumbers)
			if len(xa) >= 2 && len(xb) >= 2 {
				p := MannWhitneyP(xa, xb)
				ch.Noise = &Noise{Test: TestMannWhitney, Significant: p < alpha, PValue: &p, NA: len(xa), NB: len(xb)}
				ch.samplesA, ch.samplesB = xa, xb
			}
			continue
		}
		xa, xb := values(m, ta, tickNumbers), values(m, tb, tickNumbers)
		if len(xa) >= 2 && len(xb) >= 2 {
			lo, hi, ok := BootstrapChange(xa, xb, alpha, bootstrapResamples)
			if ok {
				ch.Noise = &Noise{Test: TestBootstrapTicks, Significant: lo > 0 || hi < 0, Low: &lo, High: &hi, NA: len(xa), NB: len(xb)}
				ch.samplesA, ch.samplesB = xa, xb
			}
		}
	}
}

// values reads metric m from each sample that measured it.
func values[T any](m compared, samples []T, numbers func(T) levelNumbers) []float64 {
	var out []float64
	for _, s := range samples {
		if v, ok := m.value(numbers(s)); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// MannWhitneyP is the two-sided p-value of the Mann–Whitney U test that xs
// and ys come from the same distribution: exact (every arrangement of the
// ranks counted) for samples of up to 30 without ties, else the normal
// approximation with the tie correction.
func MannWhitneyP(xs, ys []float64) float64 {
	n, m := len(xs), len(ys)
	if n == 0 || m == 0 {
		return 1
	}
	// U counts the pairs where x < y, a tie counting a half.
	u := 0.0
	ties := false
	for _, x := range xs {
		for _, y := range ys {
			switch {
			case x < y:
				u++
			case x == y:
				u += 0.5
				ties = true
			}
		}
	}
	if !ties && n <= 30 && m <= 30 {
		return exactMannWhitney(n, m, int(u))
	}
	return normalMannWhitney(xs, ys, u)
}

// exactMannWhitney is the exact two-sided p-value of U = u for samples of
// n and m without ties: the share of the C(n+m, n) arrangements whose U is
// as far from its mean.
func exactMannWhitney(n, m, u int) float64 {
	// counts[k] is the number of arrangements with U = k, built up one
	// sample size at a time: f(i, j, k) = f(i−1, j, k−j) + f(i, j−1, k).
	f := make([][][]float64, n+1)
	for i := range f {
		f[i] = make([][]float64, m+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			if i == 0 || j == 0 {
				f[i][j][0] = 1
				continue
			}
			for k := range f[i][j] {
				if k-j >= 0 && k-j < len(f[i-1][j]) {
					f[i][j][k] += f[i-1][j][k-j]
				}
				if k < len(f[i][j-1]) {
					f[i][j][k] += f[i][j-1][k]
				}
			}
		}
	}
	counts := f[n][m]
	total := 0.0
	for _, c := range counts {
		total += c
	}
	lo, hi := min(u, n*m-u), max(u, n*m-u)
	tail := 0.0
	for k, c := range counts {
		if k <= lo || k >= hi {
			tail += c
		}
	}
	return min(1, tail/total)
}

// normalMannWhitney is the normal approximation of the test, with the
// variance corrected for ties and a continuity correction.
func normalMannWhitney(xs, ys []float64, u float64) float64 {
	n, m := float64(len(xs)), float64(len(ys))
	all := slices.Concat(xs, ys)
	slices.Sort(all)
	tieSum := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		tieSum += t*t*t - t
		i = j
	}
	N := n + m
	variance := n * m / 12 * ((N + 1) - tieSum/(N*(N-1)))
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(u-n*m/2) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		return 1
	}
	return min(1, math.Erfc(z/math.Sqrt2))
}

// BootstrapChange is the 1 − alpha interval, in percent, of the change of
// the mean from xs to ys, from resamples of both with replacement in
// blocks of about n^(1/3) consecutive values (ticks next to each other are
// alike, which resampling them one by one would hide). False when xs's
// mean is zero. The resamples are seeded, so a comparison prints the same
// every time.
func BootstrapChange(xs, ys []float64, alpha float64, resamples int) (low, high float64, ok bool) {
	rng := rand.New(rand.NewPCG(0x7417, 0x7099))
	changes := make([]float64, 0, resamples)
	for range resamples {
		ma, mb := blockMean(xs, rng), blockMean(ys, rng)
		if ma == 0 {
			return 0, 0, false
		}
		changes = append(changes, (mb-ma)/ma*100)
	}
	slices.Sort(changes)
	at := func(q float64) float64 {
		i := int(math.Round(q * float64(len(changes)-1)))
		return changes[min(max(i, 0), len(changes)-1)]
	}
	return at(alpha / 2), at(1 - alpha/2), true
}

// blockMean is the mean of one moving-block resample of xs.
func blockMean(xs []float64, rng *rand.Rand) float64 {
	n := len(xs)
	block := max(1, int(math.Round(math.Cbrt(float64(n)))))
	sum, k := 0.0, 0
	for k < n {
		start := rng.IntN(n - block + 1)
		for j := start; j < start+block && k < n; j++ {
			sum += xs[j]
			k++
		}
	}
	return sum / float64(n)
}

// noiseCell is the verdict on a change for a table: "within noise",
// "significant", with the p-value or the interval; "untested" when no test
// could be run (a side without two samples).
func (c Change) noiseCell() string {
	n := c.Noise
	if n == nil {
		if c.Percent == nil {
			return "-"
		}
		return "untested"
	}
	switch {
	case n.PValue != nil:
		return fmt.Sprintf("%s (p=%.3f)", n.Word(), *n.PValue)
	case n.Low != nil && n.High != nil:
		return fmt.Sprintf("%s [%s, %s]", n.Word(), signedPercent(*n.Low), signedPercent(*n.High))
	}
	return n.Word()
}

// signedPercent is "+1.2%" or "-3.4%".
func signedPercent(p float64) string {
	return fmt.Sprintf("%+.1f%%", p)
}

// noiseNotes say which test judged the changes, and how much to trust it.
func (c *Comparison) noiseNotes() []string {
	var test string
	na, nb := 0, 0
	for _, lc := range c.levels() {
		for _, m := range lc.Metrics {
			if m.Noise != nil && test == "" {
				test, na, nb = m.Noise.Test, m.Noise.NA, m.Noise.NB
			}
		}
	}
	switch test {
	case TestMannWhitney:
		note := fmt.Sprintf("Noise: Mann-Whitney U test over the repeats' figures (%d and %d repeats); significant when p < %.2f.", na, nb, c.alpha())
		if least := leastMannWhitneyP(na, nb); least >= c.alpha() {
			note += fmt.Sprintf(" With so few repeats no change can be significant (the least p is %.3f): record --repeat 5 or more.", least)
		}
		return []string{note}
	case TestBootstrapTicks:
		if c.FewRepeats != "" {
			return []string{fmt.Sprintf("Noise: %s, %.0f%% interval of the change of the ticks' mean (%d and %d ticks in the whole runs); significant when it leaves out 0.",
				c.FewRepeats, 100*(1-c.alpha()), na, nb)}
		}
		return []string{fmt.Sprintf("Noise: block bootstrap over the ticks (%d and %d ticks in the whole runs), %.0f%% interval of the change of the ticks' mean; significant when it leaves out 0. "+
			"Weaker than repeats: ticks of one run share its conditions; record both runs with --repeat 5 for a test over runs.", na, nb, 100*(1-c.alpha()))}
	}
	return nil
}

// alpha is the significance level the noise was tested at.
func (c *Comparison) alpha() float64 {
	if c.Alpha > 0 {
		return c.Alpha
	}
	return DefaultAlpha
}

// repeatsFor is the fewest repeats of each run with which a Mann–Whitney
// U test can find a change significant at alpha.
func repeatsFor(alpha float64) int {
	n := 2
	for leastMannWhitneyP(n, n) >= alpha && n < 100 {
		n++
	}
	return n
}

// leastMannWhitneyP is the smallest two-sided p-value samples of n and m
// can give (every B above every A): 2 / C(n+m, n).
func leastMannWhitneyP(n, m int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return min(1, 2/c)
}

// PastBound reports whether the change is past bound percent (above it
// for a positive bound, below for a negative one) by more than the noise:
// the change's own test applied to the bound. Over repeats, the
// Mann–Whitney test of B against A moved by the bound; over ticks, the
// bootstrap's interval wholly past the bound.
func (c Change) PastBound(bound, alpha float64) bool {
	n := c.Noise
	if n == nil || len(c.samplesA) < 2 || len(c.samplesB) < 2 {
		return false
	}
	switch n.Test {
	case TestMannWhitney:
		moved := make([]float64, len(c.samplesA))
		for i, v := range c.samplesA {
			moved[i] = v * (1 + bound/100)
		}
		ma, mb := median(slices.Sorted(slices.Values(moved))), median(slices.Sorted(slices.Values(c.samplesB)))
		if bound > 0 && mb <= ma || bound < 0 && mb >= ma {
			return false
		}
		return MannWhitneyP(moved, c.samplesB) < alpha
	case TestBootstrapTicks:
		if n.Low == nil || n.High == nil {
			return false
		}
		if bound > 0 {
			return *n.Low > bound
		}
		return *n.High < bound
	}
	return false
}

// modelTicks is one model's share of a run's ticks (Snapshot.ModelView), as
// a run of that model alone; the run itself when it is a run of that one
// model, nil when the model is not in it.
func modelTicks(run *record.Run, model string) *record.Run {
	if len(run.Snapshots) == 0 {
		return nil
	}
	idx := slices.IndexFunc(run.Snapshots[0].Models, func(m stats.Model) bool { return m.Name == model })
	if idx < 0 {
		if len(run.Snapshots[0].Models) == 0 && run.Header.Model.Name == model {
			return run
		}
		return nil
	}
	out := &record.Run{Header: run.Header}
	for i := range run.Snapshots {
		if idx < len(run.Snapshots[i].Models) {
			out.Snapshots = append(out.Snapshots, run.Snapshots[i].ModelView(idx))
		}
	}
	return out
}
