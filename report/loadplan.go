package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// writePlanned adds a load plan's mean target over the tick (--stages) to a
// progress line: "plan 249.9/s" or "plan 3.5"; nothing without a plan.
func writePlanned(b *strings.Builder, l stats.Load) {
	if l.Planned <= 0 || l.Drain {
		return
	}
	b.WriteString("  plan " + strconv.FormatFloat(l.Planned, 'f', 1, 64))
	if l.Mode == load.Rate {
		b.WriteString("/s")
	}
}

// plannedMean averages a load plan's per-tick target (stats.Load.Planned)
// over a step's ticks, weighted by their length.
type plannedMean struct{ sum, span float64 }

func (m *plannedMean) add(s stats.Snapshot) {
	m.sum += s.Load.Planned * s.Interval.Seconds()
	m.span += s.Interval.Seconds()
}

// of is l with the mean planned target over the ticks added; l as it is
// without a plan.
func (m *plannedMean) of(l stats.Load) stats.Load {
	l.Planned = 0
	if m.span > 0 && m.sum > 0 {
		l.Planned = m.sum / m.span
	}
	return l
}

// loadCell names a step's load; under a load plan, the stage's target and
// the plan's mean over the step: "rate 1000/s, plan 500".
func loadCell(l stats.Load) string {
	if l.Planned <= 0 {
		return l.String()
	}
	return l.String() + ", plan " + strconv.FormatFloat(l.Planned, 'f', 1, 64)
}

// plannedMetric is a level's planned load under a plan or a trace, so that
// a comparison sets the target beside what was achieved.
var plannedMetric = compared{"planned", "planned load", "", func(n levelNumbers) (float64, bool) {
	return n.planned, n.planned > 0
}}

// withPlanned puts plannedMetric first when either run followed a plan.
func withPlanned(a, b record.Summary, metrics []compared) []compared {
	planned := func(s record.Summary) bool {
		return slices.ContainsFunc(s.Steps, func(st record.Step) bool { return st.Load.Planned > 0 })
	}
	if !planned(a) && !planned(b) {
		return metrics
	}
	return slices.Concat([]compared{plannedMetric}, metrics)
}

// runPlanned is a run's planned load over its steps, weighted by their
// length; 0 without a plan.
func runPlanned(s record.Summary) float64 {
	var sum, span float64
	for _, st := range s.Steps {
		sum += st.Load.Planned * st.Duration.Seconds()
		span += st.Duration.Seconds()
	}
	if span == 0 {
		return 0
	}
	return sum / span
}
