package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// stepRows caches the server pane's rows of a pipeline's composing models
// for one tick and width: the pane draws every frame, the rows change once
// a tick.
type stepRows struct {
	seq, repeat int
	elapsed     time.Duration
	width       int
	lines       []string
}

// rows are s's composing models' rows, iw cells wide, from the cache when
// s and iw are the ones it was made for.
func (c *stepRows) rows(st *Styles, s *stats.Snapshot, iw int) []string {
	if c.lines != nil && c.seq == s.Seq && c.repeat == s.Repeat && c.elapsed == s.Elapsed && c.width == iw {
		return c.lines
	}
	c.seq, c.repeat, c.elapsed, c.width = s.Seq, s.Repeat, s.Elapsed, iw
	c.lines = pipelineRows(st, s.Server.Steps, iw)
	return c.lines
}

// pipelineRows are a row per composing model of a pipeline, a composing
// ensemble's own steps under it: the model's name, then its queue,
// compute and batch size per request it served, then its batch sizes as
// far as the width goes. The numbers come first: on a narrow pane the
// labels shrink to q, c and b before any number is cut.
func pipelineRows(st *Styles, steps []stats.ServerStats, iw int) []string {
	flat := flatten(steps, 0, nil)
	nameW := 0
	for _, f := range flat {
		nameW = max(nameW, 2*f.depth+len([]rune(f.s.Model)))
	}
	nameW = min(nameW, max(8, iw/4))
	wide := iw >= 100
	out := make([]string, 0, len(flat))
	for i, f := range flat {
		glyph := "├ "
		if i == len(flat)-1 {
			glyph = "└ "
		}
		name := st.Label.Render(glyph) + fit(strings.Repeat("  ", f.depth)+f.s.Model, nameW)
		out = append(out, name+"  "+stepFigures(st, &f.s, wide))
	}
	return out
}

// stepFigures are one composing model's numbers on its row.
func stepFigures(st *Styles, s *stats.ServerStats, wide bool) string {
	switch {
	case !s.Available:
		return st.Warn.Render("no statistics")
	case s.Reset:
		return st.Warn.Render("counters went back")
	case s.SuccessCount == 0:
		return st.Dim.Render("no request finished")
	}
	labels := [3]string{"queue ", "compute ", "batch "}
	if !wide {
		labels = [3]string{"q ", "c ", "b "}
	}
	batch := st.Dim.Render("-")
	if s.ExecutionCount > 0 {
		batch = st.Value.Render(strconv.FormatFloat(s.AvgBatch, 'f', 1, 64))
	}
	return join(
		st.Label.Render(labels[0])+st.Value.Render(fit(fmtDur(s.Queue), 6)),
		st.Label.Render(labels[1])+st.Value.Render(fit(fmtDur(s.Compute()), 6)),
		st.Label.Render(labels[2])+batch,
		batchShares(st, s.Batches),
	)
}

// flatStep is a composing model and how deep it sits.
type flatStep struct {
	s     stats.ServerStats
	depth int
}

// flatten lists steps, each composing ensemble's own steps after it one
// level deeper.
func flatten(steps []stats.ServerStats, depth int, into []flatStep) []flatStep {
	for _, s := range steps {
		into = append(into, flatStep{s, depth})
		if s.Pipeline() {
			into = flatten(s.Steps, depth+1, into)
		}
	}
	return into
}

// stepCount is how many rows a pipeline's composing models take.
func stepCount(steps []stats.ServerStats) int {
	n := len(steps)
	for i := range steps {
		n += stepCount(steps[i].Steps)
	}
	return n
}
