package session

import (
	"fmt"
	"io"

	"github.com/tritontop/tritontop/report"
)

// paFlags are perf_analyzer's flags that tritontop has no flag of its own
// for, so that perf_analyzer's command lines run unchanged: each one does
// what perf_analyzer's does, or is accepted with a note printed on stderr,
// or is refused with one line saying why and what to use instead.
// docs/perf-analyzer.md has the table of every perf_analyzer flag.
type PerfAnalyzerConfig struct {
	// serviceKind is --service-kind; only triton is served.
	ServiceKind string
	// verbose counts -v (perf_analyzer's -v -v is extra verbose).
	Verbose int
	// sync is --sync: one blocking request per worker thread; --async and
	// -a (the default) keep requests in flight over callbacks.
	Sync bool
	// maxThreads is --max-threads (0: not given).
	MaxThreads int
	// measurementMode is time_windows or count_windows;
	// measurementRequestCount the requests of a count window.
	MeasurementMode         string
	MeasurementRequestCount int
	// sharedMemory is none or system; outputSharedMemorySize the bytes of
	// each output's region (--output-shared-memory-size).
	SharedMemory           string
	OutputSharedMemorySize int
	// profileExport is --profile-export-file; export writes it.
	ProfileExportFile string
	export            *report.ProfileExport
	// stringLength is --string-length (0: the default).
	StringLength int
}

// Defaults of perf_analyzer's flags.
const (
	defaultMeasurementRequestCount = 50
	defaultOutputShmSize           = 100 * 1024
)

// Measurement modes.
const (
	TimeWindows  = "time_windows"
	CountWindows = "count_windows"
)

// check validates the combination of perf_analyzer's flags once they are
// all parsed; set is the flags given.
func (p *PerfAnalyzerConfig) check(f *Config, notes io.Writer) error {
	if p.MaxThreads < 0 || (f.Given["max-threads"] && p.MaxThreads == 0) {
		return fmt.Errorf("--max-threads %d: the value must be > 0", p.MaxThreads)
	}
	if p.MeasurementRequestCount <= 0 {
		return fmt.Errorf("--measurement-request-count %d: the value must be > 0", p.MeasurementRequestCount)
	}
	if f.Given["measurement-request-count"] && p.MeasurementMode != CountWindows {
		fmt.Fprintln(notes, "note: --measurement-request-count is used only with --measurement-mode count_windows")
	}
	if p.OutputSharedMemorySize < 0 {
		return fmt.Errorf("--output-shared-memory-size %d must not be negative", p.OutputSharedMemorySize)
	}
	if p.Sync && f.Given["max-threads"] {
		most := float64(f.Concurrency)
		if f.ConcurrencyRange != "" {
			if _, end, _, err := parseRange("--concurrency-range", f.ConcurrencyRange); err == nil {
				most = end
			}
		}
		if most > float64(p.MaxThreads) {
			return fmt.Errorf("--sync sends one request per thread: concurrency %v needs --max-threads %v or more (given %d)", most, most, p.MaxThreads)
		}
	}
	if err := p.checkProfileExport(f); err != nil {
		return err
	}
	if err := p.checkSharedMemory(f, notes); err != nil {
		return err
	}
	if p.StringLength < 0 {
		return fmt.Errorf("--string-length %d must not be negative", p.StringLength)
	}
	if f.Given["sync"] && (f.Given["async"] || f.Given["a"]) {
		return fmt.Errorf("--sync and --async both given: pick one")
	}
	return nil
}

// countWindow is the requests of a count window with --measurement-mode
// count_windows, 0 in time windows.
func (p *PerfAnalyzerConfig) countWindow() int {
	if p.MeasurementMode != CountWindows {
		return 0
	}
	return p.MeasurementRequestCount
}
