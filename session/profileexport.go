package session

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/report"
)

// checkProfileExport refuses --profile-export-file where it cannot be
// written, before anything is dialed.
func (p *PerfAnalyzerConfig) checkProfileExport(f *Config) error {
	if p.ProfileExportFile == "" {
		return nil
	}
	if f.several() {
		return errors.New("--profile-export-file exports one model's requests: give one -m")
	}
	if p.ProfileExportFile == f.Record || p.ProfileExportFile == f.CSV {
		return fmt.Errorf("--profile-export-file %s is also another output of the run: give it a file of its own", p.ProfileExportFile)
	}
	w, err := os.OpenFile(p.ProfileExportFile, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cannot write --profile-export-file %s: %v", p.ProfileExportFile, errors.Unwrap(err))
	}
	return w.Close()
}

// openProfileExport creates the export of --profile-export-file for the
// run of drv; nil without the flag.
func (p *PerfAnalyzerConfig) openProfileExport(drv *driver.Driver) error {
	if p.ProfileExportFile == "" {
		return nil
	}
	exp, err := report.CreateProfileExport(p.ProfileExportFile, drv.Epoch(), drv.State().Target, Version)
	if err != nil {
		return err
	}
	p.export = exp
	return nil
}

// tapResults is the results channel the collector reads: in, through the
// export when there is one.
func (p *PerfAnalyzerConfig) tapResults(in <-chan []driver.Result) <-chan []driver.Result {
	if p.export == nil {
		return in
	}
	return p.export.Tap(in)
}

// onLoadChange tells the export, then next, of every change of load.
func (p *PerfAnalyzerConfig) onLoadChange(next func(load.Change)) func(load.Change) {
	if p.export == nil {
		return next
	}
	return func(c load.Change) {
		p.export.LoadChanged(c)
		next(c)
	}
}

// exportSink is the export as a sink of the run's ticks (its window
// boundaries), or nil.
func (p *PerfAnalyzerConfig) exportSink() report.Sink {
	if p.export == nil {
		return nil
	}
	return p.export
}

// closeExport finishes the export once the run has ended (ran: its drivers
// ran and closed their results); a run that never started leaves no file.
func (p *PerfAnalyzerConfig) closeExport(stderr io.Writer, ran bool) {
	if p.export == nil {
		return
	}
	if !ran {
		os.Remove(p.ProfileExportFile)
		return
	}
	if err := p.export.Close(); err != nil {
		fmt.Fprintf(stderr, "tritontop: %v\n", err)
	}
}
