package interop

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PerfResult is one perf_analyzer run: its printed report and its CSV.
type PerfResult struct {
	// Output is what it printed, standard output and error together.
	Output string
	// Server is the server block of its report for the (last) load level.
	Server PerfServer
	// CSVHeader is the CSV's first line as written, and CSV its rows
	// parsed, the header row first.
	CSVHeader string
	CSV       [][]string
}

// PerfServer is perf_analyzer's printed server block: the deltas' counts
// and its averages in whole microseconds.
type PerfServer struct {
	Inferences, Executions, Successes               uint64
	RequestUS, OverheadUS, QueueUS                  uint64
	ComputeInputUS, ComputeInferUS, ComputeOutputUS uint64
}

// Cell is the CSV's value in the column named col of data row row (0 the
// first after the header), or a test failure.
func (r PerfResult) Cell(t testing.TB, row int, col string) string {
	t.Helper()
	if len(r.CSV) < row+2 {
		t.Fatalf("interop: perf_analyzer's CSV has %d data rows, want row %d:\n%s", len(r.CSV)-1, row, r.Output)
	}
	for i, name := range r.CSV[0] {
		if name == col && i < len(r.CSV[row+1]) {
			return r.CSV[row+1][i]
		}
	}
	t.Fatalf("interop: perf_analyzer's CSV has no column %q: %q", col, r.CSV[0])
	return ""
}

// PerfAnalyzer runs the perf_analyzer beside the server against it over
// protocol ("grpc" or "http") with args (the model, the load, ...), its
// CSV going to a file of the test's (-f), and parses what it printed. It
// skips the test when perf_analyzer cannot run here, and fails it when
// perf_analyzer fails.
func (s *Server) PerfAnalyzer(t testing.TB, protocol string, args ...string) PerfResult {
	t.Helper()
	addr := s.GRPC
	if protocol == "http" {
		addr = s.HTTP
	}
	return s.PerfAnalyzerAt(t, protocol, addr, args...)
}

// PerfAnalyzerAt is PerfAnalyzer sent to addr, host:port, in place of the
// server's own endpoint: a proxy in front of it.
func (s *Server) PerfAnalyzerAt(t testing.TB, protocol, addr string, args ...string) PerfResult {
	t.Helper()
	if _, err := os.Stat(s.PerfAnalyzerBin); err != nil {
		t.Skipf("interop: no perf_analyzer at %s", s.PerfAnalyzerBin)
	}
	if missing := missingLibraries(s.PerfAnalyzerBin); len(missing) > 0 {
		t.Skipf("interop: perf_analyzer's runtime libraries are missing: %s", strings.Join(missing, ", "))
	}
	file := filepath.Join(t.TempDir(), "perf.csv")
	all := append([]string{"-i", protocol, "-u", addr, "-f", file}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.PerfAnalyzerBin, all...)
	cmd.SysProcAttr = dieWithParent()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("interop: perf_analyzer %s: %v\n%s", strings.Join(all, " "), err, out)
	}
	r := PerfResult{Output: string(out)}
	if r.Server, err = parsePerfServer(r.Output); err != nil {
		t.Fatalf("interop: perf_analyzer's report: %v\n%s", err, out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("interop: perf_analyzer's CSV: %v\n%s", err, out)
	}
	r.CSVHeader, _, _ = strings.Cut(string(b), "\n")
	if r.CSV, err = csv.NewReader(strings.NewReader(string(b))).ReadAll(); err != nil {
		t.Fatalf("interop: perf_analyzer's CSV: %v\n%s", err, b)
	}
	return r
}

// perfServerLines are the lines of perf_analyzer's server block.
var (
	perfCount   = regexp.MustCompile(`(?m)^\s+(Inference count|Execution count|Successful request count): (\d+)$`)
	perfLatency = regexp.MustCompile(`(?m)^\s+Avg request latency: (\d+) usec \(overhead (\d+) usec \+ queue (\d+) usec \+ ` +
		`compute input (\d+) usec \+ compute infer (\d+) usec \+ compute output (\d+) usec\)$`)
)

// parsePerfServer reads the last server block of perf_analyzer's report.
func parsePerfServer(out string) (PerfServer, error) {
	var s PerfServer
	counts := perfCount.FindAllStringSubmatch(out, -1)
	lat := perfLatency.FindAllStringSubmatch(out, -1)
	if len(counts) < 3 || len(lat) == 0 {
		return s, fmt.Errorf("no server block (Inference count ... Avg request latency) in it")
	}
	num := func(v string) uint64 { n, _ := strconv.ParseUint(v, 10, 64); return n }
	for _, m := range counts[len(counts)-3:] {
		switch m[1] {
		case "Inference count":
			s.Inferences = num(m[2])
		case "Execution count":
			s.Executions = num(m[2])
		default:
			s.Successes = num(m[2])
		}
	}
	l := lat[len(lat)-1]
	s.RequestUS, s.OverheadUS, s.QueueUS = num(l[1]), num(l[2]), num(l[3])
	s.ComputeInputUS, s.ComputeInferUS, s.ComputeOutputUS = num(l[4]), num(l[5]), num(l[6])
	return s, nil
}
