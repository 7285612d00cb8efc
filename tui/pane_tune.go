package tui

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
)

// TuneView is what the tune pane shows of a tritontop tune run.
type TuneView struct {
	// Tune is the search so far: its trials, the best, the frontier.
	Tune record.Tune
	// Current is the trial under way (its configuration and
	// concurrency), nil when none; Loading says its configuration is
	// being loaded into the server.
	Current *record.TuneTrial
	Loading bool
}

// TuneSource is a stepped run's search that is tritontop tune's (as
// plan.Progress.Search carries it): the sweep pane then shows the tune
// pane instead. It is read every frame.
type TuneSource interface {
	TuneView() TuneView
}

// tuneSource is the stepped run's tune search, if it is one.
func tuneSource(pr *plan.Progress) (TuneSource, bool) {
	ts, ok := pr.Search.(TuneSource)
	return ts, ok
}

// tuneView is the tune pane: the trial under way, the best so far, the
// configurations tried (each at its best load) when there is room, and
// the frontier of throughput against p99 latency, a point per trial.
func (p *sweepPane) tuneView(v TuneView) string {
	st := p.b.common.Styles
	pr := &p.b.ui.sweep
	t := &v.Tune
	iw, rows := p.w-4, p.h-2
	title := "Tune · trial " + strconv.Itoa(len(t.Trials)+btoi(v.Current != nil)) + " · " +
		strconv.Itoa(t.Configurations) + " configs"
	if n := t.Grid.Points; n > 0 && p.w >= 60 {
		title += " · grid of " + strconv.Itoa(n) + " points"
	}
	var lines []string
	switch {
	case pr.Done:
		lines = append(lines, st.Good.Render("done")+": "+strconv.Itoa(len(t.Trials))+" trials")
	case v.Current != nil:
		now := st.Label.Render("now  ") + st.Value.Render(shortConfig(v.Current.Config)) + " @" + strconv.Itoa(v.Current.Concurrency)
		if v.Loading {
			now += st.Dim.Render("  loading")
		} else {
			now += st.Dim.Render("  " + strconv.Itoa(pr.Trials) + "/" + strconv.Itoa(pr.MaxTrials))
		}
		lines = append(lines, now)
	}
	lines = append(lines, tuneBest(st, t))
	left := rows - len(lines)
	if left < 3 {
		return box(st, title, p.b.ui.focus == focusSweep, p.w, p.h, lines)
	}
	if iw >= 90 && left >= 4 {
		// Room for the configurations beside the plot.
		lw := min(44, iw/2)
		list := tuneConfigs(st, t, lw, left)
		plot := tunePlot(st, t, iw-lw-1, left)
		for i := range left {
			lines = append(lines, fit(list[i], lw)+" "+plot[i])
		}
	} else {
		lines = append(lines, tunePlot(st, t, iw, left)...)
	}
	return box(st, title, p.b.ui.focus == focusSweep, p.w, p.h, lines)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shortConfig is a configuration in a dozen cells: "2i b16 d500µs ½".
func shortConfig(c record.TuneConfig) string {
	s := strconv.Itoa(c.Instances) + "i b" + strconv.Itoa(c.MaxBatchSize)
	if c.MaxBatchSize > 1 {
		s += " d" + strconv.Itoa(c.QueueDelayUS) + "µs"
		if c.Preferred == "half" {
			s += " ½"
		}
	}
	return s
}

// tuneBest is the best line: the best passing trial so far.
func tuneBest(st *Styles, t *record.Tune) string {
	if t.Best < 0 || t.Best >= len(t.Trials) {
		return st.Label.Render("best ") + st.Dim.Render("none met the SLO yet")
	}
	b := t.Trials[t.Best]
	return st.Label.Render("best ") + st.Good.Render(shortConfig(b.Config)) + " @" + strconv.Itoa(b.Concurrency) + " " +
		st.Value.Render(fmtRate(b.Throughput)) + st.Dim.Render("/s") + " p99 " + st.Value.Render(fmtDur(b.P99))
}

// configBest is one configuration's best trial: its most throughput among
// the trials that met the SLO, else among all.
type configBest struct {
	cfg    record.TuneConfig
	trial  int
	pass   bool
	loaded bool
}

// tuneConfigs lists the configurations tried, best first: each at its
// best trial, "not loaded" for those the server refused.
func tuneConfigs(st *Styles, t *record.Tune, width, rows int) []string {
	var cs []configBest
	for i, tr := range t.Trials {
		k := slices.IndexFunc(cs, func(c configBest) bool { return c.cfg == tr.Config })
		if k < 0 {
			cs = append(cs, configBest{cfg: tr.Config, trial: i, pass: tr.Pass, loaded: tr.LoadError == ""})
			continue
		}
		c := &cs[k]
		cur := t.Trials[c.trial]
		if tr.Pass && (!c.pass || tr.Throughput > cur.Throughput) || !c.pass && !tr.Pass && tr.Throughput > cur.Throughput {
			c.trial, c.pass = i, tr.Pass
		}
	}
	slices.SortStableFunc(cs, func(a, b configBest) int {
		if a.pass != b.pass {
			return btoi(b.pass) - btoi(a.pass)
		}
		return int(math.Copysign(1, t.Trials[b.trial].Throughput-t.Trials[a.trial].Throughput))
	})
	out := make([]string, rows)
	for i := range min(rows, len(cs)) {
		c := cs[i]
		tr := t.Trials[c.trial]
		line := fit(shortConfig(c.cfg), 16) + " "
		switch {
		case !c.loaded:
			line += st.Bad.Render("not loaded")
		case c.pass:
			line += st.Value.Render(fit(fmtRate(tr.Throughput), 7)) + " p99 " + fmtDur(tr.P99) + st.Dim.Render(" @"+strconv.Itoa(tr.Concurrency))
		default:
			line += st.Bad.Render("miss") + st.Dim.Render(" p99 "+fmtDur(tr.P99))
		}
		if c.trial == t.Best {
			line = st.Good.Render("★ ") + line
		} else {
			line = "  " + line
		}
		out[i] = fit(line, width)
	}
	if len(cs) > rows && rows > 0 {
		out[rows-1] = st.Dim.Render(fit("  … "+strconv.Itoa(len(cs)-rows+1)+" more", width))
	}
	return out
}

// tunePlot draws every trial as a point, infer/s across and p99 up: the
// frontier's points filled, the others dots, those that missed the SLO
// hollow, the best a star; rows high with the x axis's labels last.
func tunePlot(st *Styles, t *record.Tune, width, rows int) []string {
	out := make([]string, rows)
	plot, cols := rows-1, width-chartAxis
	if cols < 8 || plot < 2 {
		return out
	}
	maxX, maxY := 0.0, 0.0
	for _, tr := range t.Trials {
		if tr.LoadError == "" {
			maxX = max(maxX, tr.Throughput)
			maxY = max(maxY, float64(tr.P99)/1e6)
		}
	}
	if maxX <= 0 || maxY <= 0 {
		out[0] = st.Dim.Render("p99 against infer/s, a point per trial")
		return out
	}
	maxX, maxY = niceCeil(maxX), niceCeil(maxY)
	grid, paint := tuneGrid(st, t, plot, cols, maxX, maxY)
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
			b.WriteString(paint[r*cols+c].Render(string(grid[r*cols+c])))
		}
		out[r] = b.String()
	}
	axis, right := "x infer/s, y p99, ● frontier", fmtAxis(maxX)
	pad := cols - len([]rune(axis)) - len(right) - 1
	if pad < 1 {
		axis, pad = "", cols-len(right)-1
	}
	out[plot] = st.Dim.Render(strings.Repeat(" ", chartAxis) + "0" + strings.Repeat(" ", max(0, pad/2)) + axis +
		strings.Repeat(" ", max(0, pad-pad/2)) + right)
	return out
}

// tuneGrid places the trials on a plot×cols grid of runes and their
// paints, maxX infer/s across and maxY ms of p99 up.
func tuneGrid(st *Styles, t *record.Tune, plot, cols int, maxX, maxY float64) ([]rune, []Paint) {
	grid := make([]rune, plot*cols)
	paint := make([]Paint, plot*cols)
	for i := range grid {
		grid[i] = ' '
	}
	put := func(i int, r rune, p Paint) {
		tr := t.Trials[i]
		c := int(math.Round(tr.Throughput / maxX * float64(cols-1)))
		y := plot - 1 - int(math.Round(float64(tr.P99)/1e6/maxY*float64(plot-1)))
		c, y = min(cols-1, max(0, c)), min(plot-1, max(0, y))
		grid[y*cols+c], paint[y*cols+c] = r, p
	}
	for i, tr := range t.Trials {
		switch {
		case tr.LoadError != "":
		case !tr.Pass:
			put(i, '○', st.Bad)
		default:
			put(i, '·', st.Dim)
		}
	}
	for _, i := range t.Frontier {
		if i >= 0 && i < len(t.Trials) && t.Trials[i].Pass {
			put(i, '●', st.Series[0])
		}
	}
	if t.Best >= 0 && t.Best < len(t.Trials) {
		put(t.Best, '★', st.Good)
	}
	return grid, paint
}
