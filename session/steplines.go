package session

import (
	"io"
	"time"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// stepLines prints a stepped run's line per measured step, named in the
// search's own terms when it has them (a capacity search's probes, steps
// and repeats). It keeps the levels it was shown, in order.
type stepLines struct {
	search plan.Search
	levels []plan.Level
}

// write prints step's line; it is the next level measured.
func (l *stepLines) write(w io.Writer, st *plan.Stepper, elapsed time.Duration, step record.Step) {
	pr := st.Progress()
	i, n := pr.Position()
	pass := step.Measurement != nil && step.Measurement.SLO != nil && step.Measurement.SLO.Pass
	// The progress still names the level just measured, with the target
	// the search set (the step's load is its record, not the same value).
	l.levels = append(l.levels, plan.Level{Target: pr.Level, Step: step, Pass: pass})
	if ph, ok := l.search.(phased); ok {
		report.WriteLabelledStepLine(w, ph.Phase(l.levels, len(l.levels)-1), i, n, elapsed, step)
		return
	}
	report.WriteStepLine(w, i, n, elapsed, step)
}

// phased is a search that names its levels (plan.Capacity).
type phased interface {
	Phase(done []plan.Level, i int) string
}
