package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// corpusLine is one perf_analyzer command line of the corpus and what
// tritontop must do with it.
type corpusLine struct {
	want string // run or refuse
	args []string
	line int
}

// readCorpus reads testdata/perfanalyzer/corpus.txt.
func readCorpus(t *testing.T) []corpusLine {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", "perfanalyzer", "corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []corpusLine
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		want, cmd, ok := strings.Cut(text, "\t")
		if !ok || (want != "run" && want != "refuse") {
			t.Fatalf("corpus line %d: want run or refuse, a tab, then the command: %q", n, text)
		}
		fields := strings.Fields(cmd)
		if len(fields) == 0 || filepath.Base(fields[0]) != "perf_analyzer" {
			t.Fatalf("corpus line %d does not start with perf_analyzer: %q", n, text)
		}
		out = append(out, corpusLine{want: want, args: fields[1:], line: n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// startPASim starts the simulator with Triton's example repository and the
// models the corpus names that it lacks.
func startPASim(t *testing.T) *sim.Server {
	t.Helper()
	extra, err := sim.LoadRepository(filepath.Join("testdata", "perfanalyzer", "models.json"))
	if err != nil {
		t.Fatal(err)
	}
	repo := sim.ExampleRepository()
	repo.Models = append(repo.Models, extra.Models...)
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: repo,
		// The corpus's --shared-memory lines need it, as tritonserver
		// --allow-client-shm=true.
		Engine: sim.EngineOptions{MetricsInterval: 100 * time.Millisecond, AllowClientShm: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// pointAtSim rewrites a corpus command line for the test: -u names the
// simulator's endpoint of the line's protocol (perf_analyzer's -u=ADDR too),
// file outputs go to dir, and the run is cut short.
func pointAtSim(args []string, srv *sim.Server, dir string) []string {
	protocol := "grpc"
	for i, a := range args {
		if a == "-i" && i+1 < len(args) {
			protocol = args[i+1]
		}
	}
	addr := srv.GRPCAddr()
	if protocol == "http" {
		addr = srv.HTTPAddr()
	}
	out := make([]string, 0, len(args)+6)
	hasURL := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-u" && i+1 < len(args):
			out = append(out, "-u", addr)
			hasURL = true
			i++
		case strings.HasPrefix(a, "-u="):
			out = append(out, "-u="+addr)
			hasURL = true
		case (a == "-f" || a == "--profile-export-file" || a == "--latency-report-file") && i+1 < len(args):
			out = append(out, a, filepath.Join(dir, filepath.Base(args[i+1])))
			i++
		case strings.HasPrefix(a, "--profile-export-file="):
			out = append(out, "--profile-export-file="+filepath.Join(dir, filepath.Base(strings.TrimPrefix(a, "--profile-export-file="))))
		default:
			out = append(out, a)
		}
	}
	if !hasURL {
		out = append(out, "-u", addr)
	}
	return append(out, "--duration", "400ms", "--tick", "100ms", "--headless", "--drain", "1s")
}

// TestPerfAnalyzerCorpus runs every perf_analyzer command line of the
// corpus (taken from perf_analyzer's and Triton's documentation) against the
// simulator: each one runs, or is refused with one line that says why;
// none fails on a flag tritontop does not know.
func TestPerfAnalyzerCorpus(t *testing.T) {
	t.Parallel()
	corpus := readCorpus(t)
	if len(corpus) < 30 {
		t.Fatalf("the corpus has %d command lines, want at least 30", len(corpus))
	}
	for _, c := range corpus {
		t.Run("line "+strconv.Itoa(c.line), func(t *testing.T) {
			t.Parallel()
			checkCorpusLine(t, c)
		})
	}
}

// checkCorpusLine runs one command line of the corpus against a simulator
// of its own.
func checkCorpusLine(t *testing.T, c corpusLine) {
	srv := startPASim(t)
	{
		dir := t.TempDir()
		args := pointAtSim(c.args, srv, dir)
		before := simSuccesses(t, srv, modelOf(c.args))
		code, _, stderr := runCLI(args...)
		desc := "perf_analyzer " + strings.Join(c.args, " ")
		if strings.Contains(stderr, "flag provided but not defined") {
			t.Errorf("line %d: %s: %s", c.line, desc, stderr)
			return
		}
		switch c.want {
		case "run":
			if code != exitOK {
				t.Errorf("line %d: %s: exit %d, want 0; stderr:\n%s", c.line, desc, code, stderr)
			} else if after := simSuccesses(t, srv, modelOf(c.args)); after <= before {
				t.Errorf("line %d: %s: the simulator served no request of %s (%d before, %d after)", c.line, desc, modelOf(c.args), before, after)
			}
		case "refuse":
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != exitUsage {
				t.Errorf("line %d: %s: exit %d, want %d (refused); stderr:\n%s", c.line, desc, code, exitUsage, stderr)
				return
			}
			// One line with the reason, and at most the hint after it.
			if len(lines) > 2 || (len(lines) == 2 && !strings.Contains(lines[1], "-h for help")) {
				t.Errorf("line %d: %s: refused in %d lines, want one:\n%s", c.line, desc, len(lines), stderr)
			}
			// It names the flag and says why after a colon.
			if !strings.Contains(lines[0], "-") || strings.Count(lines[0], ": ") < 2 {
				t.Errorf("line %d: %s: refusal gives no reason: %s", c.line, desc, lines[0])
			}
		}
	}
}

// modelOf is the -m of a command line.
func modelOf(args []string) string {
	for i, a := range args {
		if a == "-m" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// simSuccesses is the simulator's count of successful inferences of model,
// over its versions; 0 for a model it does not serve.
func simSuccesses(t *testing.T, srv *sim.Server, model string) int64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		return 0
	}
	var n int64
	for _, m := range st.GetModelStats() {
		n += int64(m.GetInferenceStats().GetSuccess().GetCount())
	}
	return n
}
