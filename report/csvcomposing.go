package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// csvComposingColumns are the columns of perf_analyzer's CSV of a
// composing model (report_writer.cc), after the first (Concurrency or
// Request Rate).
const csvComposingColumns = "Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue," +
	"Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv"

// ComposingModel names a composing model of a pipeline's run: the file
// perf_analyzer writes of it is ComposingCSVName(Name, Version, file).
type ComposingModel struct{ Name, Version string }

// ComposingModels are the composing models of a pipeline's steps (the
// first level, as perf_analyzer writes a CSV of each), from the first step
// that measured the pipeline; nil for a model that is no pipeline.
func ComposingModels(steps []record.Step) []ComposingModel {
	for _, st := range steps {
		if !st.Server.Available || !st.Server.Pipeline() {
			continue
		}
		out := make([]ComposingModel, len(st.Server.Steps))
		for i, c := range st.Server.Steps {
			out[i] = ComposingModel{Name: c.Model, Version: c.Version}
		}
		return out
	}
	return nil
}

// ComposingCSVName is perf_analyzer's name of a composing model's CSV
// beside the CSV named base: "<name>_v<version>.<base>".
func ComposingCSVName(name, version, base string) string { return name + "_v" + version + "." + base }

// WriteComposingCSV writes the CSV perf_analyzer writes beside a
// pipeline's (-f with server statistics) for one of its composing models:
// a row per load step, in the order they ran,
//
//	Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv
//
// where Inferences/Second is the step's client throughput times the
// composing model's share of the pipeline's requests (its successful
// requests over the pipeline's), Network+Server Send/Recv its overhead
// (request time less queue and compute, floored at 0), the server times
// its own per request in whole µs, and Client Send and Client Recv 0, as
// perf_analyzer writes them. A step in which the model had no statistics
// has 0 in every time.
func WriteComposingCSV(w io.Writer, steps []record.Step, model string) error {
	if len(steps) == 0 {
		return fmt.Errorf("report: no load steps to write as CSV")
	}
	var b strings.Builder
	if steps[0].Load.Open() {
		b.WriteString(csvRequestRate)
	} else {
		b.WriteString(csvConcurrency)
	}
	b.WriteString("," + csvComposingColumns + "\n")
	for _, st := range steps {
		if st.Load.Open() {
			b.WriteString(g6(st.Load.Rate))
		} else {
			b.WriteString(strconv.Itoa(st.Load.Concurrency))
		}
		sv := composingOf(st.Server.Steps, model)
		ratio := 0.0
		if st.Server.SuccessCount > 0 {
			ratio = float64(sv.SuccessCount) / float64(st.Server.SuccessCount)
		}
		overhead := max(sv.Request-sv.Queue-sv.Compute(), 0)
		fmt.Fprintf(&b, ",%s,0,%s,%s,%s,%s,%s,0\n", g6(ratio*st.Client.InferPerS), us(overhead), us(sv.Queue),
			us(sv.ComputeInput), us(sv.ComputeInfer), us(sv.ComputeOutput))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write CSV of %s: %w", model, err)
	}
	return nil
}

// composingOf is the step of model among steps, zero when absent or
// without statistics.
func composingOf(steps []stats.ServerStats, model string) stats.ServerStats {
	for _, st := range steps {
		if st.Model == model && st.Available && !st.Reset {
			return st
		}
	}
	return stats.ServerStats{}
}
