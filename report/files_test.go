package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// The frozen run files of testdata/, recorded by tritontop against its
// simulator.
const td = "testdata/"

// TestWriteHTMLFiles writes the HTML report of two runs, labelled, to a
// file: self-contained, with both runs on its charts; "-" writes the page
// to standard output.
func TestWriteHTMLFiles(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	err := report.WriteHTMLFiles([]string{td + "c1.jsonl", td + "c16.jsonl"}, []string{"sync", "async"}, out, "", "tritontop 9.9", false, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "wrote "+out) {
		t.Errorf("stdout %q", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!doctype html>", `data-series="sync"`, `data-series="async"`, "Made by tritontop 9.9"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("the report has a script")
	}
	stdout.Reset()
	if err := report.WriteHTMLFiles([]string{td + "sweep.jsonl"}, nil, "-", "", "tritontop", false, &stdout, &stderr); err != nil ||
		!strings.HasPrefix(stdout.String(), "<!doctype html>") || !strings.Contains(stdout.String(), `id="curve"`) {
		t.Errorf("-o -: %v, %d bytes", err, stdout.Len())
	}
}

// TestReportCompareBadInput: bad input to report and compare is a usage
// error of one line that says what to do; no file is left behind.
func TestReportCompareBadInput(t *testing.T) {
	t.Parallel()
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
	c1, c16, rate := td+"c1.jsonl", td+"c16.jsonl", td+"rate.jsonl"
	htmlForce := func(files, labels []string, out string, force bool) func() error {
		return func() error {
			return report.WriteHTMLFiles(files, labels, out, "", "tritontop", force, &bytes.Buffer{}, &bytes.Buffer{})
		}
	}
	htmlOf := func(files, labels []string, out string) func() error { return htmlForce(files, labels, out, false) }
	cmp := func(c report.CompareFiles) func() error {
		if c.Alpha == 0 {
			c.Alpha = report.DefaultAlpha
		}
		return func() error { return c.Run(&bytes.Buffer{}, &bytes.Buffer{}) }
	}
	cases := []struct {
		name string
		run  func() error
		want []string
	}{
		{"report: missing file", htmlOf([]string{filepath.Join(dir, "nope.jsonl")}, nil, out), []string{"nope.jsonl", "no such file"}},
		{"report: not a run", htmlOf([]string{notRun}, nil, out), []string{"notes.txt", "not a tritontop run file"}},
		{"report: no ticks", htmlOf([]string{headerOnly}, nil, out), []string{"empty.jsonl", "no ticks"}},
		{"report: no -o", htmlOf([]string{c1}, nil, ""), []string{"-o FILE.html"}},
		{"report: no file", htmlOf(nil, nil, out), []string{"at least one run file"}},
		{"report: unwritable -o", htmlOf([]string{c1}, nil, filepath.Join(dir, "missing", "r.html")), []string{"cannot write -o", "missing"}},
		{"report: -o is a run file", htmlForce([]string{c1}, nil, c1, true), []string{"also a run file"}},
		{"report: -o exists", htmlOf([]string{c1}, nil, c16), []string{"already exists", "--force"}},
		{"report: same labels", htmlOf([]string{c1, c16}, []string{"x", "x"}, out), []string{`labelled "x"`, "--label"}},
		{"report: too many labels", htmlOf([]string{c1}, []string{"a", "b"}, out), []string{"2 --label flags for 1 run file"}},
		{"compare: one file", cmp(report.CompareFiles{Files: []string{c1}}), []string{"two run files, got 1"}},
		{"compare: modes differ", cmp(report.CompareFiles{Files: []string{c1, rate}}), []string{"closed loop", "open loop", "same load mode"}},
		{"compare: not a run", cmp(report.CompareFiles{Files: []string{c1, notRun}}), []string{"notes.txt", "not a tritontop run file"}},
		{"compare: missing file", cmp(report.CompareFiles{Files: []string{filepath.Join(dir, "a.jsonl"), c1}}), []string{"a.jsonl"}},
		{"compare: json and markdown", cmp(report.CompareFiles{Files: []string{c1, c16}, JSON: true, Markdown: true}), []string{"--json or --markdown"}},
		{"compare: bad alpha", cmp(report.CompareFiles{Files: []string{c1, c16}, Alpha: 0.7}), []string{"--alpha 0.7"}},
		{"compare: junit without a bound", cmp(report.CompareFiles{Files: []string{c1, c16}, JUnit: filepath.Join(dir, "j.xml")}), []string{"--junit needs a --fail-if"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !usage.Is(err) {
				t.Fatalf("got %v, want a usage error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
				t.Errorf("not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestCompareFiles: text by default, JSON and Markdown on request, labels
// from the files or given.
func TestCompareFiles(t *testing.T) {
	t.Parallel()
	run := func(c report.CompareFiles) string {
		t.Helper()
		c.Files, c.Alpha = []string{td + "grpc.jsonl", td + "http.jsonl"}, report.DefaultAlpha
		var stdout, stderr bytes.Buffer
		if err := c.Run(&stdout, &stderr); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		return stdout.String()
	}
	text := run(report.CompareFiles{})
	for _, want := range []string{"A  grpc: resnet50", "B  http: resnet50", "concurrency 11", "client CPU per request (µs)", "whole run"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var c struct {
		A, B  struct{ Label string }
		Steps []struct{ Level string }
	}
	js := run(report.CompareFiles{JSON: true, Labels: []string{"unary", "rest"}})
	if err := json.Unmarshal([]byte(js), &c); err != nil || c.A.Label != "unary" || c.B.Label != "rest" || len(c.Steps) != 4 {
		t.Errorf("JSON: %v, %+v", err, c)
	}
	if md := run(report.CompareFiles{Markdown: true}); !strings.Contains(md, "| load | metric | grpc | http | change |") {
		t.Errorf("Markdown:\n%s", md)
	}
}
