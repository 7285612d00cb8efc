package main

import (
	"fmt"
	"os"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// writeCSVFile writes the run's perf_analyzer-style CSV (one row per load
// step) from the run's summary. perf_analyzer's CSV is of one model: a run
// over several models writes one file per model, path with the model's
// name before its extension (out.csv: out.resnet50.csv, out.bert.csv).
func writeCSVFile(path string, sum record.Summary, o report.CSVOptions) error {
	if len(sum.Models) == 0 {
		return writeOneCSV(path, sum.Steps, o)
	}
	for i, m := range sum.Models {
		if err := writeOneCSV(csvPathFor(path, m.Name), report.ModelRun(sum, i).Steps, o); err != nil {
			return err
		}
	}
	return nil
}

func writeOneCSV(path string, steps []record.Step, o report.CSVOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write -f %s: %w", path, err)
	}
	if err := report.WriteCSVSteps(f, steps, o); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
