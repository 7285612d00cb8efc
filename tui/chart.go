package tui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// chartAxis is the width of a chart's value axis: six cells of label and
// " ┤".
const chartAxis = 8

// chart is a band chart of up to three nested series over the history
// (each at most the next: p50 ≤ p90 ≤ p99, req/s ≤ infer/s, compute ≤
// compute+queue), with a value axis, optional marks where the load changed,
// and an optional time axis.
type chart struct {
	series [3]metric
	n      int
	// tick formats the value axis's labels; unit follows the top one when
	// it fits ("60 ms").
	tick func(float64) string
	unit string
	// top fixes the scale (100 % for utilization); zero scales to the
	// largest visible value, rounded up.
	top float64
	// markers marks the ticks where the load level changed, with the new
	// level; timeAxis adds a row of mm:ss under the chart when the plot
	// keeps minPlot rows (chartTimeRows when zero).
	markers, timeAxis bool
	minPlot           int
}

// newChart is a chart of series, lowest first, with markers and a time
// axis.
func newChart(tick func(float64) string, unit string, series ...metric) chart {
	c := chart{tick: tick, unit: unit, markers: true, timeAxis: true}
	c.n = copy(c.series[:], series)
	return c
}

// chartTimeRows is the least number of rows a chart keeps for its plot
// before it also draws its time axis.
const chartTimeRows = 4

// hasTimeAxis reports whether draw gives the time axis a row at this
// height.
func (c chart) hasTimeAxis(rows int) bool {
	least := c.minPlot
	if least <= 0 {
		least = chartTimeRows
	}
	return c.timeAxis && rows > least
}

// draw returns the chart as rows lines of width cells, top first: the last
// width−chartAxis ticks, now at the right edge. A cell belongs to the
// lowest band covering at least half of it; a single series is drawn with
// eighth-block precision instead. Ticks missing a value are gaps.
func (c chart) draw(st *Styles, h *history, width, rows int) []string {
	out := make([]string, rows)
	if rows <= 0 || width <= chartAxis+1 || c.n == 0 {
		return out
	}
	plot := rows
	if c.hasTimeAxis(rows) {
		plot--
	}
	cols := width - chartAxis
	n := min(cols, h.len())
	series := c.series[:c.n]
	top := c.top
	if top <= 0 {
		for i := range n {
			for _, m := range series {
				if v, ok := m(h.fromEnd(i)); ok && v > top {
					top = v
				}
			}
		}
		top = niceCeil(top)
	}
	// levels[col*n+k] is series k's height in rows at col; -1 is missing.
	levels := make([]float64, cols*c.n)
	for col := range cols {
		i := cols - 1 - col // ticks before now
		for k, m := range series {
			levels[col*c.n+k] = -1
			if i >= n {
				continue
			}
			if v, ok := m(h.fromEnd(i)); ok {
				levels[col*c.n+k] = v / top * float64(plot)
			}
		}
	}
	var marks []chartMark
	if c.markers {
		marks = loadMarks(h, cols, n, levels, c.n, float64(plot-1))
	}
	ticks := c.valueTicks(top, plot)

	for r := range plot {
		y := float64(plot - 1 - r) // the cell spans [y, y+1)
		var b strings.Builder
		b.Grow(chartAxis + cols*3 + 40)
		b.WriteString(st.Dim.pre)
		if label, ok := ticks.at(r); ok {
			b.WriteString(fit(label, chartAxis-2))
			b.WriteString(" ┤")
		} else {
			b.WriteString("       │")
		}
		b.WriteString(st.Dim.post)
		pen := penNone
		mk := 0 // the next mark at or right of col
		for col := 0; col < cols; col++ {
			for mk < len(marks) && marks[mk].col < col {
				mk++
			}
			onMark := mk < len(marks) && marks[mk].col == col
			if r == 0 && onMark && marks[mk].label != "" {
				// The new level, right of its mark, in free cells.
				pen = penTo(&b, st, pen, penMark)
				b.WriteRune('┊')
				pen = penTo(&b, st, pen, penLabel)
				b.WriteString(marks[mk].label)
				col += len(marks[mk].label)
				continue
			}
			g, k := cellGlyph(levels[col*c.n:(col+1)*c.n], y)
			switch {
			case k >= 0:
				pen = penTo(&b, st, pen, k)
			case onMark:
				g = '┊'
				pen = penTo(&b, st, pen, penMark)
			default:
				pen = penTo(&b, st, pen, penNone)
			}
			b.WriteRune(g)
		}
		penTo(&b, st, pen, penNone)
		out[r] = b.String()
	}
	if plot < rows {
		out[rows-1] = timeAxis(st, h, cols, n)
	}
	return out
}

// Pens of a chart row: the series' bands (0..2) and these.
const (
	penNone  = -1
	penMark  = -2
	penLabel = -3
)

// penTo closes the pen in use and opens next, writing the escape
// sequences straight into b: a row is built once, not concatenated from
// painted pieces.
func penTo(b *strings.Builder, st *Styles, cur, next int) int {
	if cur == next {
		return cur
	}
	paint := func(p int) Paint {
		switch {
		case p >= 0:
			return st.Series[p]
		case p == penMark:
			return st.Dim
		case p == penLabel:
			return st.Label
		}
		return Paint{}
	}
	b.WriteString(paint(cur).post)
	b.WriteString(paint(next).pre)
	return next
}

// chartMark is a change of load level at a chart column, with the new
// level when there is room to say it.
type chartMark struct {
	col   int
	label string
}

// loadMarks finds the columns (left to right) whose tick ran at another
// load level than the tick before it: a key press or a step starts a new
// tick, so a level holds exactly from its first tick on. A mark's label
// goes in the top row right of it, where the cells are free and no later
// mark's label needs them.
func loadMarks(h *history, cols, n int, levels []float64, series int, topY float64) []chartMark {
	var marks []chartMark
	for col := range cols {
		i := cols - 1 - col
		if i >= n || i+1 >= h.len() {
			continue
		}
		if s := h.fromEnd(i); !s.Load.SameLevel(h.fromEnd(i + 1).Load) {
			marks = append(marks, chartMark{col: col})
		}
	}
	free := cols // the first column taken by a label to the right
	for j := len(marks) - 1; j >= 0; j-- {
		m := &marks[j]
		label := levelLabel(h.fromEnd(cols - 1 - m.col).Load)
		end := m.col + 1 + len(label) // one past the label
		if end > free || end > cols {
			continue
		}
		clear := true
		for col := m.col; col < end && clear; col++ {
			_, k := cellGlyph(levels[col*series:(col+1)*series], topY)
			clear = k < 0
		}
		if clear {
			m.label = label
			free = m.col - 1
		}
	}
	return marks
}

// levelLabel is a load level as a chart mark says it: "32" in flight,
// "800/s", or "stop" for the drain after the load stopped.
func levelLabel(l stats.Load) string {
	switch {
	case l.Drain:
		return "stop"
	case l.Mode == load.Rate:
		return fmtRate(l.Rate) + "/s"
	}
	return strconv.Itoa(l.Concurrency)
}

// axisTicks are a value axis's labels by row.
type axisTicks struct {
	rows   [8]int
	labels [8]string
	n      int
}

func (t *axisTicks) at(r int) (string, bool) {
	for i := range t.n {
		if t.rows[i] == r {
			return t.labels[i], true
		}
	}
	return "", false
}

// valueTicks labels the top and the bottom of the scale and round values
// between them, about every four rows, never on neighbouring rows.
func (c chart) valueTicks(top float64, plot int) axisTicks {
	var t axisTicks
	add := func(r int, label string) {
		for i := range t.n {
			if d := t.rows[i] - r; d >= -1 && d <= 1 {
				return
			}
		}
		if t.n < len(t.rows) {
			t.rows[t.n], t.labels[t.n] = r, label
			t.n++
		}
	}
	topLabel := c.tick(top)
	if c.unit != "" {
		switch {
		case len(topLabel)+1+len(c.unit) <= chartAxis-2:
			topLabel += " " + c.unit
		case len(topLabel)+len(c.unit) <= chartAxis-2:
			topLabel += c.unit
		}
	}
	add(0, topLabel)
	add(plot-1, "0")
	if plot < 8 {
		return t
	}
	step := niceStep(top / float64(plot/4))
	for v := step; v < top*(1-1e-9); v += step {
		r := plot - 1 - int(math.Floor(v/top*float64(plot)))
		add(min(plot-1, max(0, r)), c.tick(v))
	}
	return t
}

// niceStep rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range [...]float64{1, 2, 2.5, 5, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// fmtAxis formats a value-axis label briefly: 1,500, 50, 12.5, 0.25, 128k.
func fmtAxis(v float64) string {
	switch {
	case v >= 100_000:
		return fmtRate(v)
	case v == math.Trunc(v):
		return fmtInt(int64(v))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtAxisPct formats a 0..1 axis value as a percentage.
func fmtAxisPct(v float64) string { return strconv.Itoa(int(math.Round(v*100))) + "%" }

// timeSteps are the spans between time-axis labels, in seconds.
var timeSteps = [...]int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400}

// timeAxis is the row under a chart: the run time (mm:ss) at round
// instants, each under the column of the tick it fell in, at least eight
// columns apart.
func timeAxis(st *Styles, h *history, cols, n int) string {
	var b strings.Builder
	b.Grow(chartAxis + cols + 16)
	b.WriteString(strings.Repeat(" ", chartAxis))
	if n == 0 {
		b.WriteString(strings.Repeat(" ", cols))
		return b.String()
	}
	interval := h.latest().Interval
	if interval <= 0 {
		interval = time.Second
	}
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if time.Duration(s)*time.Second >= 8*interval {
			step = s
			break
		}
	}
	// A label goes where a round instant fell in the tick: "╵01:00"
	// from its column on, or "01:00╵" up to it near the right edge; one
	// cell clear of the label before it (ticks cut short by a load change
	// can bring two instants close).
	span := time.Duration(step) * time.Second
	type label struct {
		col  int
		text string
	}
	var labels [16]label
	nl, free := 0, 0
	for col := 0; col < cols && nl < len(labels); col++ {
		i := cols - 1 - col
		if i >= n || i+1 >= h.len() {
			continue
		}
		k := h.fromEnd(i).Elapsed / span
		if k <= 0 || k <= h.fromEnd(i+1).Elapsed/span {
			continue
		}
		t := fmtElapsed(k * span)
		w := len(t) + 1
		switch {
		case col >= free && col+w <= cols:
			labels[nl] = label{col, "╵" + t}
		case col-w+1 >= free:
			labels[nl] = label{col - w + 1, t + "╵"}
		default:
			continue
		}
		free = labels[nl].col + w + 1
		nl++
	}
	b.WriteString(st.Dim.pre)
	col := 0
	for _, l := range labels[:nl] {
		for ; col < l.col; col++ {
			b.WriteByte(' ')
		}
		b.WriteString(l.text)
		col += len(l.text) - 2 // ╵ is three bytes, one cell
	}
	for ; col < cols; col++ {
		b.WriteByte(' ')
	}
	b.WriteString(st.Dim.post)
	return b.String()
}
