package main

import (
	"fmt"
	"os"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// writeCSVFile writes the run's perf_analyzer-style CSV (one row per load
// step) from the run's summary.
func writeCSVFile(path string, sum record.Summary) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write -f %s: %w", path, err)
	}
	if err := report.WriteCSVSteps(f, sum.Steps); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
