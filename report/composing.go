package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// composingHead is the heading of the table of a pipeline's steps per load
// step: each composing model's requests, queue and compute per request
// (ms) and batch size.
var composingHead = []string{"step", "model", "requests", "queue", "compute", "batch"}

// composingRows are the rows of the table of a pipeline's composing models
// per load step (a composing ensemble's own steps named parent/step); nil
// when no step measured a pipeline.
func composingRows(steps []record.Step) [][]string {
	var rows [][]string
	for i, st := range steps {
		if !st.Server.Available {
			continue
		}
		for _, leaf := range flatSteps("", st.Server.Steps) {
			rows = append(rows, []string{strconv.Itoa(i + 1), leaf.Model, strconv.FormatInt(leaf.SuccessCount, 10),
				msCell(leaf.Queue), msCell(leaf.Compute()), batchCell(leaf)})
		}
	}
	return rows
}

// flatSteps is steps and a composing ensemble's steps after it, named
// parent/step.
func flatSteps(parent string, steps []stats.ServerStats) []stats.ServerStats {
	var out []stats.ServerStats
	for _, st := range steps {
		if parent != "" {
			st.Model = parent + "/" + st.Model
		}
		out = append(out, st)
		if st.Pipeline() {
			out = append(out, flatSteps(st.Model, st.Steps)...)
		}
	}
	return out
}

// writeComposingTable writes the table of a pipeline's composing models
// per load step, when the steps measured one.
func writeComposingTable(b *strings.Builder, steps []record.Step) {
	rows := composingRows(steps)
	if rows == nil {
		return
	}
	b.WriteString("  Composing models (queue and compute in ms per request of each):\n")
	writeTable(b, "    ", append([][]string{composingHead}, rows...))
}

// mdComposingTable is writeComposingTable's table in Markdown.
func mdComposingTable(b *strings.Builder, steps []record.Step) {
	rows := composingRows(steps)
	if rows == nil {
		return
	}
	b.WriteString("\n| step | composing model | requests | queue ms | compute ms | batch |\n|---:|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		for j := range r {
			r[j] = mdCell(r[j])
		}
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// mdComposingRows are a pipeline's rows of the one-level table: each
// composing model's queue, compute and batch.
func mdComposingRows(sv stats.ServerStats) [][2]string {
	var rows [][2]string
	for _, st := range flatSteps("", sv.Steps) {
		if !st.Available || st.Reset {
			continue
		}
		rows = append(rows, [2]string{"Composing model " + st.Model + " v" + st.Version,
			fmt.Sprintf("%d requests: queue %s + compute %s ms, batch %s", st.SuccessCount, msCell(st.Queue), msCell(st.Compute()), batchCell(st))})
	}
	return rows
}

// composingMetrics compare two runs of a pipeline step by step: each
// composing model both runs read (by name; a composing ensemble's steps as
// parent/step), its queue, compute and batch size ("queue:preprocess").
func composingMetrics(a, b record.Summary) []compared {
	var out []compared
	inB := flatSteps("", b.Server.Steps)
	for _, st := range flatSteps("", a.Server.Steps) {
		name := st.Model
		if !slices.ContainsFunc(inB, func(x stats.ServerStats) bool { return x.Model == name }) {
			continue
		}
		out = append(out,
			compared{"queue:" + name, "queue in " + name, "ms", stepValue(name, func(s stats.ServerStats) (float64, bool) {
				return millis(s.Queue), true
			})},
			compared{"compute:" + name, "compute in " + name, "ms", stepValue(name, func(s stats.ServerStats) (float64, bool) {
				return millis(s.Compute()), true
			})},
			compared{"batch_size:" + name, "batch size in " + name, "", stepValue(name, func(s stats.ServerStats) (float64, bool) {
				return s.AvgBatch, s.ExecutionCount > 0
			})})
	}
	return out
}

// stepValue reads a number of the composing model name of a level's
// pipeline; missing when the level has no statistics of it.
func stepValue(name string, get func(stats.ServerStats) (float64, bool)) func(levelNumbers) (float64, bool) {
	return func(n levelNumbers) (float64, bool) {
		if !n.server.Available {
			return 0, false
		}
		for _, st := range flatSteps("", n.server.Steps) {
			if st.Model == name && st.Available && !st.Reset && st.SuccessCount > 0 {
				return get(st)
			}
		}
		return 0, false
	}
}
