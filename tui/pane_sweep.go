package tui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/plan"
)

// sweepPane follows a stepped run (a range or an SLO search): the step,
// its level, the time left in the step and in the run, and the latency–
// throughput curve, one point per measured step.
type sweepPane struct {
	b    *board
	w, h int
}

func (p *sweepPane) SetSize(w, h int) { p.w, p.h = w, h }

func (p *sweepPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusSweep
	pr := &p.b.ui.sweep
	if ts, ok := tuneSource(pr); ok {
		return p.tuneView(ts.TuneView())
	}
	step, total := pr.Position()
	title := "Sweep · step " + strconv.Itoa(step) + "/" + strconv.Itoa(total)
	iw, rows := p.w-4, p.h-2
	var lines []string
	if pr.Done {
		lines = append(lines, st.Good.Render("done")+": "+strconv.Itoa(len(pr.Levels))+" steps measured")
	} else {
		lines = append(lines, join(st.Value.Render(pr.Level.String()),
			st.Label.Render("measured ")+strconv.Itoa(pr.Trials)+"/"+strconv.Itoa(pr.MaxTrials)))
		stepLeft, runLeft := sweepLeft(pr)
		lines = append(lines, st.Label.Render("left ")+"step ≤ "+st.Value.Render(fmtElapsed(stepLeft))+
			"  run ≤ "+st.Value.Render(fmtElapsed(runLeft)))
	}
	if left := rows - len(lines); left >= 3 {
		lines = append(lines, sweepPlot(st, pr.Levels, iw, left)...)
	}
	return box(st, title, focused, p.w, p.h, lines)
}

// sweepLeft is the most time the step and the run still take: the step's
// own estimate, and as long again as the whole step for each step the
// search may still measure. A step that settles early ends sooner, so both
// are upper bounds.
func sweepLeft(pr *plan.Progress) (step, run time.Duration) {
	_, total := pr.Position()
	per := pr.InStep + pr.Left
	return pr.Left, pr.Left + time.Duration(max(0, total-pr.Step))*per
}

// sweepPlot draws the measured steps as points, throughput across and p99
// latency up (from the schedule in open loop), rows high with the x axis's
// labels in the last row. A step that failed the SLO is a hollow point.
func sweepPlot(st *Styles, levels []plan.Level, width, rows int) []string {
	out := make([]string, rows)
	plot, cols := rows-1, width-chartAxis
	if cols < 8 || plot < 2 {
		return out
	}
	if len(levels) == 0 {
		out[0] = st.Dim.Render("p99 against infer/s, a point per measured step")
		return out
	}
	maxX, maxY := 0.0, 0.0
	for _, l := range levels {
		maxX = max(maxX, l.Step.Client.InferPerS)
		maxY = max(maxY, float64(stepP99(&l))/1e6)
	}
	maxX, maxY = niceCeil(maxX), niceCeil(maxY)
	grid := make([]rune, plot*cols)
	paint := make([]int8, plot*cols) // 0 empty, 1 pass, 2 fail
	for i := range grid {
		grid[i] = ' '
	}
	for _, l := range levels {
		c := int(math.Round(l.Step.Client.InferPerS / maxX * float64(cols-1)))
		r := plot - 1 - int(math.Round(float64(stepP99(&l))/1e6/maxY*float64(plot-1)))
		c, r = min(cols-1, max(0, c)), min(plot-1, max(0, r))
		grid[r*cols+c], paint[r*cols+c] = '●', 1
		if m := l.Step.Measurement; m != nil && m.SLO != nil && !m.SLO.Pass {
			grid[r*cols+c], paint[r*cols+c] = '○', 2
		}
	}
	for r := range plot {
		var b strings.Builder
		switch r {
		case 0:
			b.WriteString(st.Dim.Render(fit(fmtAxis(maxY)+" ms", chartAxis-2) + " ┤"))
		case plot - 1:
			b.WriteString(st.Dim.Render(fit("0", chartAxis-2) + " ┤"))
		default:
			b.WriteString(st.Dim.Render("       │"))
		}
		for c := range cols {
			p := Paint{}
			switch paint[r*cols+c] {
			case 1:
				p = st.Series[0]
			case 2:
				p = st.Bad
			}
			b.WriteString(p.pre)
			b.WriteRune(grid[r*cols+c])
			b.WriteString(p.post)
		}
		out[r] = b.String()
	}
	axis := "x infer/s, y p99"
	right := fmtAxis(maxX)
	pad := cols - len(axis) - len(right) - 1
	if pad < 1 {
		axis, pad = "", cols-len(right)-1
	}
	out[plot] = st.Dim.Render(strings.Repeat(" ", chartAxis) + "0" + strings.Repeat(" ", max(0, pad/2)) + axis +
		strings.Repeat(" ", max(0, pad-pad/2)) + right)
	return out
}

// stepP99 is a measured step's p99 latency, from the schedule in open
// loop.
func stepP99(l *plan.Level) time.Duration {
	c := &l.Step.Client
	if c.Scheduled != nil && c.Scheduled.Count > 0 {
		return c.Scheduled.P99
	}
	return c.Latency.P99
}
