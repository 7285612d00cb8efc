package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// Frozen run files of the report package's tests, recorded by tritontop
// against its simulator.
const testdata = "../../report/testdata/"

// TestReportCommand writes the HTML report of two runs, labelled, to a
// file: self-contained, with both runs on its charts.
func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr := runCLI("report", testdata+"c1.jsonl", "-o", out, testdata+"c16.jsonl", "--label", "sync", "--label", "async")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "wrote "+out) {
		t.Errorf("stdout %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!doctype html>", `data-series="sync"`, `data-series="async"`, "Made by tritontop " + version} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("the report has a script")
	}

	// -o - writes the page to standard output.
	code, stdout, _ = runCLI("report", "-o", "-", testdata+"sweep.jsonl")
	if code != 0 || !strings.HasPrefix(stdout, "<!doctype html>") || !strings.Contains(stdout, `id="curve"`) {
		t.Errorf("report -o -: exit %d, %d bytes", code, len(stdout))
	}
}

// TestReportCompareBadInput: bad input to report and compare gets one line
// that says what to do, and exit code 2; no file is left behind.
func TestReportCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	notRun := filepath.Join(dir, "notes.txt")
	os.WriteFile(notRun, []byte("not a run\n"), 0o644)
	headerOnly := filepath.Join(dir, "empty.jsonl")
	w, err := record.Create(headerOnly, record.Header{Model: record.ModelInfo{Name: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Close(record.Summary{})
	out := filepath.Join(dir, "r.html")
	c1, c16, rate := testdata+"c1.jsonl", testdata+"c16.jsonl", testdata+"rate.jsonl"
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"report: missing file", []string{"report", filepath.Join(dir, "nope.jsonl"), "-o", out}, []string{"nope.jsonl", "no such file"}},
		{"report: not a run", []string{"report", notRun, "-o", out}, []string{"notes.txt", "not a tritontop run file"}},
		{"report: no ticks", []string{"report", headerOnly, "-o", out}, []string{"empty.jsonl", "no ticks"}},
		{"report: no -o", []string{"report", c1}, []string{"-o FILE.html"}},
		{"report: no file", []string{"report", "-o", out}, []string{"at least one run file"}},
		{"report: unwritable -o", []string{"report", c1, "-o", filepath.Join(dir, "missing", "r.html")}, []string{"cannot write -o", "missing"}},
		{"report: same labels", []string{"report", c1, c16, "--label", "x", "--label", "x", "-o", out}, []string{`labelled "x"`, "--label"}},
		{"report: too many labels", []string{"report", c1, "--label", "a", "--label", "b", "-o", out}, []string{"2 --label flags for 1 run file"}},
		{"report: bad flag", []string{"report", c1, "--nope", "-o", out}, []string{"nope"}},
		{"compare: one file", []string{"compare", c1}, []string{"two run files, got 1"}},
		{"compare: modes differ", []string{"compare", c1, rate}, []string{"closed loop", "open loop", "same load mode"}},
		{"compare: not a run", []string{"compare", c1, notRun}, []string{"notes.txt", "not a tritontop run file"}},
		{"compare: missing file", []string{"compare", filepath.Join(dir, "a.jsonl"), c1}, []string{"a.jsonl"}},
		{"compare: json and markdown", []string{"compare", c1, c16, "--json", "--markdown"}, []string{"--json or --markdown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			// One error line, and the hint after a flag error.
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[0]
			if len(lines) > 2 || len(lines) == 2 && !strings.HasSuffix(lines[1], "-h for help") {
				t.Errorf("stderr is not one line and a hint: %q", stderr)
			}
			if !strings.HasPrefix(last, "tritontop: ") {
				t.Errorf("error line %q", last)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("error line %q does not mention %q", last, w)
				}
			}
			if stdout != "" || strings.Contains(stderr, "panic") {
				t.Errorf("stdout %q, stderr %q", stdout, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestCompareCommand: text by default, JSON and Markdown on request, flags
// anywhere.
func TestCompareCommand(t *testing.T) {
	code, stdout, stderr := runCLI("compare", testdata+"grpc.jsonl", testdata+"http.jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"A  grpc: resnet50", "B  http: resnet50", "concurrency 11", "client CPU per request (µs)", "whole run"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCLI("compare", "--json", testdata+"grpc.jsonl", testdata+"http.jsonl", "--label", "unary", "--label", "rest")
	var c struct {
		A, B  struct{ Label string }
		Steps []struct{ Level string }
	}
	if err := json.Unmarshal([]byte(stdout), &c); code != 0 || err != nil || c.A.Label != "unary" || c.B.Label != "rest" || len(c.Steps) != 4 {
		t.Errorf("compare --json: exit %d, %v, %+v", code, err, c)
	}
	code, stdout, _ = runCLI("compare", testdata+"grpc.jsonl", testdata+"http.jsonl", "--markdown")
	if code != 0 || !strings.Contains(stdout, "| load | metric | grpc | http | change |") {
		t.Errorf("compare --markdown: exit %d:\n%s", code, stdout)
	}
}

// TestReplayExports: replay takes its flags before or after the file
// (`tritontop replay sweep.jsonl --speed 4`, the README's example), and
// gives the CSV, JSON and Markdown of any record.
func TestReplayExports(t *testing.T) {
	sweep := testdata + "sweep.jsonl"
	// Without a terminal, replay prints the summary, here with its steps
	// and what the search found.
	code, stdout, stderr := runCLI("replay", sweep, "--speed", "4")
	if code != 0 {
		t.Fatalf("replay FILE --speed 4: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "8 load steps") || !strings.Contains(stdout, "Highest level meeting p99 < 80.0 ms: concurrency 49") {
		t.Errorf("summary:\n%s", stdout)
	}
	if code, again, _ := runCLI("replay", "--speed", "4", sweep); code != 0 || again != stdout {
		t.Errorf("flags before the file: exit %d, or another summary", code)
	}

	csvPath := filepath.Join(t.TempDir(), "out.csv")
	code, stdout, stderr = runCLI("replay", sweep, "-f", csvPath, "--json")
	if code != 0 {
		t.Fatalf("replay -f --json: exit %d: %s", code, stderr)
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Steps) != 8 || sum.Search == nil || sum.Search.Knee != 2 {
		t.Errorf("JSON summary: %v, %d steps, search %+v", err, len(sum.Steps), sum.Search)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		rows = append(rows, sc.Text())
	}
	if len(rows) != 9 || !strings.HasPrefix(rows[0], "Concurrency,Inferences/Second,") || !strings.HasPrefix(rows[1], "1,") || !strings.HasPrefix(rows[8], "57,") {
		t.Errorf("CSV rows %d: %q … %q", len(rows), rows[0], rows[len(rows)-1])
	}

	code, stdout, _ = runCLI("replay", "--markdown", testdata+"c1.jsonl")
	if code != 0 || !strings.HasPrefix(stdout, "### resnet50 on ") || !strings.Contains(stdout, "| Throughput | ") {
		t.Errorf("replay --markdown: exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = runCLI("replay", testdata+"c1.jsonl", "-f", "-")
	if code != 0 || !strings.HasPrefix(stdout, "Concurrency,") || strings.Count(stdout, "\n") != 2 {
		t.Errorf("replay -f -: exit %d:\n%s", code, stdout)
	}
	code, _, stderr = runCLI("replay", testdata+"c1.jsonl", "-f", filepath.Join(t.TempDir(), "no", "x.csv"))
	if code != exitUsage || !strings.Contains(stderr, "cannot write -f") {
		t.Errorf("unwritable -f: exit %d, %q", code, stderr)
	}
}
