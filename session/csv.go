package session

import (
	"io"
	"path/filepath"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// writeCSVFile writes the run's perf_analyzer-style CSV (one row per load
// step) from the run's summary. perf_analyzer's CSV is of one model: a run
// over several models writes one file per model, path with the model's
// name before its extension (out.csv: out.resnet50.csv, out.bert.csv). A
// pipeline's CSV has a file per composing model beside it, as
// perf_analyzer writes them (out.csv: preprocess_v1.out.csv).
func writeCSVFile(path string, sum record.Summary, o report.CSVOptions, force bool) error {
	if len(sum.Models) == 0 {
		return writeOneCSV(path, sum.Steps, o, force)
	}
	for i, m := range sum.Models {
		if err := writeOneCSV(csvPathFor(path, m.Name), report.ModelRun(sum, i).Steps, o, force); err != nil {
			return err
		}
	}
	return nil
}

// writeOneCSV writes one model's CSV file, and its composing models' when
// it is a pipeline, by the output-file rule: whole, through a temporary
// file renamed into place.
func writeOneCSV(path string, steps []record.Step, o report.CSVOptions, force bool) error {
	err := outfile.Write("-f", path, force, func(w io.Writer) error {
		return report.WriteCSVSteps(w, steps, o)
	})
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	for _, c := range report.ComposingModels(steps) {
		p := filepath.Join(dir, report.ComposingCSVName(fileSafe(c.Name), fileSafe(c.Version), base))
		err := outfile.Write("-f", p, force, func(w io.Writer) error {
			return report.WriteComposingCSV(w, steps, c.Name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
