package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tritontop/tritontop/record"
)

// RepeatSpread is each compared figure over a run's repeats (Repeats): the
// repeats' values, their median, least, greatest and spread. Figures no
// repeat measured are left out.
func RepeatSpread(rs []record.Summary) []record.RepeatFigure {
	if len(rs) == 0 {
		return nil
	}
	streaming, sequences := true, true
	for _, r := range rs {
		streaming = streaming && r.Client.Streaming != nil
		sequences = sequences && r.Client.Sequences != nil
	}
	var out []record.RepeatFigure
	for _, m := range metricsFor(streaming, sequences) {
		vs := values(m, rs, summaryNumbers)
		if len(vs) == 0 {
			continue
		}
		sorted := slices.Sorted(slices.Values(vs))
		f := record.RepeatFigure{Figure: m.metric, Unit: m.unit, Values: vs, Median: median(sorted),
			Min: sorted[0], Max: sorted[len(sorted)-1]}
		if f.Median != 0 {
			f.SpreadPercent = (f.Max - f.Min) / f.Median * 100
		}
		out = append(out, f)
	}
	return out
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// repeatName is a figure's heading, as compare's tables write it.
func repeatName(f record.RepeatFigure) Change {
	for _, m := range metricsFor(true, true) {
		if m.metric == f.Figure {
			return Change{Metric: m.metric, Name: m.name, Unit: m.unit}
		}
	}
	return Change{Metric: f.Figure, Name: f.Figure, Unit: f.Unit}
}

// writeRepeats is the text table of a repeated run's figures.
func writeRepeats(b *strings.Builder, fs []record.RepeatFigure) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "Over %d repeats:\n", len(fs[0].Values))
	rows := [][]string{{"metric", "median", "min", "max", "spread"}}
	for _, f := range fs {
		c := repeatName(f)
		rows = append(rows, []string{c.heading(), c.cell(&f.Median), c.cell(&f.Min), c.cell(&f.Max), fmt.Sprintf("%.1f%%", f.SpreadPercent)})
	}
	writeTable(b, "  ", rows)
}

// mdRepeats is the Markdown table of a repeated run's figures.
func mdRepeats(b *strings.Builder, fs []record.RepeatFigure) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**Over %d repeats**\n\n| metric | median | min | max | spread |\n|---|---:|---:|---:|---:|\n", len(fs[0].Values))
	for _, f := range fs {
		c := repeatName(f)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %.1f%% |\n", mdCell(c.heading()), c.cell(&f.Median), c.cell(&f.Min), c.cell(&f.Max), f.SpreadPercent)
	}
}

// SummarizeRepeated summarizes a run for compare: SummarizeRun, but for a
// run of --repeat N with one step per load level pooled over the repeats
// (the level's ticks of every repeat), in the order the levels first ran,
// so that a level is compared once, not repeat by repeat; the noise tests
// read the repeats apart (Repeats).
func SummarizeRepeated(run *record.Run) record.Summary {
	sum := SummarizeRun(run)
	if run.Header.Repeats == 0 && len(Repeats(run)) == 0 {
		return sum
	}
	var order []levelKey
	ranges := map[levelKey][]record.Step{}
	for _, st := range sum.Steps {
		k := levelOf(st.Load)
		if _, seen := ranges[k]; !seen {
			order = append(order, k)
		}
		ranges[k] = append(ranges[k], st)
	}
	pooled := make([]record.Step, 0, len(order))
	for _, k := range order {
		steps := ranges[k]
		b := NewStepBuilder(steps[0].Load)
		for _, s := range run.Snapshots {
			if s.Load.Drain || levelOf(s.Load) != k {
				continue
			}
			for _, st := range steps {
				if s.Seq >= st.FirstSeq && s.Seq <= st.LastSeq {
					b.Add(s)
					break
				}
			}
		}
		pooled = append(pooled, b.Step())
	}
	sum.Steps = pooled
	return sum
}
