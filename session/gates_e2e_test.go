package session_test

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// gatesValidateJUnit checks a --junit file against the Ant JUnit schema that
// CI systems read (gate/testdata/JUnit.xsd) with xmllint, which .ci/run
// installs; outside CI the check is skipped where xmllint is missing.
func gatesValidateJUnit(t *testing.T, path string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint is not installed: .ci/run installs libxml2-utils")
		}
		t.Log("xmllint not installed: the JUnit file is not validated against the schema")
		return
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "gate", "testdata", "JUnit.xsd"), path).CombinedOutput(); err != nil {
		t.Fatalf("%s does not validate against the JUnit schema: %v\n%s", path, err, out)
	}
}

// gatesJUnitCounts reads a JUnit file's tests and failures.
func gatesJUnitCounts(t *testing.T, path string) (tests, failures int, names []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, s := range doc.Suites {
		tests += s.Tests
		failures += s.Failures
		for _, c := range s.Cases {
			names = append(names, c.Name)
		}
	}
	return tests, failures, names
}

// TestThresholdsEndToEnd is a CI job's gate against the simulator:
// thresholds that hold pass (exit 0), one that breaks is a verdict (exit
// 99) that says which, the run file's summary and the JUnit file list every
// check, and --abort-on-fail ends a long run at a breach that holds for a
// window.
func TestThresholdsEndToEnd(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, srv *sim.Server, dir string)
	}{
		{"pass", gatesPass}, {"fail", gatesFail}, {"per-step", gatesPerStep}, {"abort-on-fail", gatesAbortOnFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, srv, t.TempDir())
		})
	}
}

// gatesBase is the gate tests' run: two requests in flight for a second.
func gatesBase(srv *sim.Server) session.Config {
	c := quickConfig(srv, model)
	c.Concurrency = 2
	return c
}

// gatesPass: thresholds that hold pass, listed in the summary, the job
// summary appended to, the JUnit file and the run file.
func gatesPass(t *testing.T, srv *sim.Server, dir string) {
	c := gatesBase(srv)
	junit, runFile, summary := filepath.Join(dir, "pass.xml"), filepath.Join(dir, "pass.jsonl"), filepath.Join(dir, "step-summary.md")
	writeFile(t, dir, "step-summary.md", "earlier step\n")
	c.Record, c.Gates.JUnit, c.Gates.StepSummary = runFile, junit, summary
	c.Gates.Thresholds = []string{"p99<10s", "errors<1%", "throughput>1", "queue<10s"}
	err, stdout, stderr := runConfig(t, c)
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d, want 0: %v\n%s", code, err, stderr)
	}
	if !strings.Contains(stdout, "Thresholds: 4 of 4 passed") {
		t.Errorf("summary does not list the thresholds:\n%s", stdout)
	}
	// The job summary is appended to, as GitHub Actions' steps do.
	if md, _ := os.ReadFile(summary); !strings.HasPrefix(string(md), "earlier step\n### resnet50") ||
		!strings.Contains(string(md), "**Thresholds: 4 of 4 passed**") {
		t.Errorf("--step-summary file:\n%s", md)
	}
	tests, failures, _ := gatesJUnitCounts(t, junit)
	if tests != 4 || failures != 0 {
		t.Errorf("JUnit: %d tests, %d failures; want 4, 0", tests, failures)
	}
	gatesValidateJUnit(t, junit)
	run, err := record.ReadAll(runFile)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	if n := len(run.Summary.Thresholds); n != 4 {
		t.Errorf("run file's summary has %d threshold checks, want 4", n)
	}
}

// gatesFail: a threshold that breaks is a verdict naming it, a failing row
// of the Markdown summary, a failed JUnit test case and a failed check in
// the run file.
func gatesFail(t *testing.T, srv *sim.Server, dir string) {
	c := gatesBase(srv)
	junit, runFile := filepath.Join(dir, "fail.xml"), filepath.Join(dir, "fail.jsonl")
	c.Record, c.Gates.JUnit, c.Markdown = runFile, junit, true
	c.Gates.Thresholds = []string{"p99<1us", "errors<1%"}
	err, stdout, stderr := runConfig(t, c)
	if code := exitCode(err); code != 99 {
		t.Fatalf("exit %d, want 99: %v\n%s", code, err, stderr)
	}
	if !strings.Contains(err.Error(), "1 of 2 threshold checks failed: p99<1us over run") {
		t.Errorf("the error does not name the failed threshold: %q", err)
	}
	if !strings.Contains(stdout, "| p99&lt;1us | run |") || !strings.Contains(stdout, "**FAIL**") {
		t.Errorf("Markdown summary lacks the failing row:\n%s", stdout)
	}
	tests, failures, names := gatesJUnitCounts(t, junit)
	if tests != 2 || failures != 1 || len(names) == 0 || names[0] != "p99<1us over run" {
		t.Errorf("JUnit: %d tests, %d failures, %q", tests, failures, names)
	}
	gatesValidateJUnit(t, junit)
	run, err := record.ReadAll(runFile)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	th := run.Summary.Thresholds
	if len(th) != 2 || th[0].Pass || th[0].Value == nil || *th[0].Value <= 0.001 || !th[1].Pass {
		t.Errorf("run file's threshold checks: %+v", th)
	}
}

// gatesPerStep: --threshold-per-step checks each threshold over every step
// too.
func gatesPerStep(t *testing.T, srv *sim.Server, dir string) {
	junit := filepath.Join(dir, "steps.xml")
	c := quickConfig(srv, model)
	c.Duration = 0
	c.ConcurrencyRange, c.StepDuration = "1:4:3", 3*quickTick
	c.Gates.PerStep, c.Gates.JUnit = true, junit
	c.Gates.Thresholds = []string{"throughput>1", "p99<10s"}
	err, stdout, stderr := runConfig(t, c)
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	for _, want := range []string{"Thresholds: 6 of 6 passed", "throughput>1 over step concurrency 1:", "p99<10s over step concurrency 4:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if tests, failures, _ := gatesJUnitCounts(t, junit); tests != 6 || failures != 0 {
		t.Errorf("JUnit: %d tests, %d failures", tests, failures)
	}
	gatesValidateJUnit(t, junit)
}

// gatesAbortOnFail: --abort-on-fail ends a long run at a breach that holds
// for a window, keeping what was measured.
func gatesAbortOnFail(t *testing.T, srv *sim.Server, dir string) {
	c := gatesBase(srv)
	runFile := filepath.Join(dir, "abort.jsonl")
	c.Duration, c.Window, c.Record = 60*time.Second, 3*quickTick, runFile
	c.Gates.Thresholds, c.Gates.AbortOnFail = []string{"p99<1us"}, true
	err, _, stderr := runConfig(t, c)
	if code := exitCode(err); code != 99 {
		t.Fatalf("exit %d, want 99: %v\n%s", code, err, stderr)
	}
	if !strings.Contains(err.Error(), "--abort-on-fail ended the run: p99<1us over window") {
		t.Errorf("the error does not say the run was aborted: %q", err)
	}
	run, err := record.ReadAll(runFile)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	// A window of three ticks over the limit ends the run; it would
	// run 60 s otherwise. Everything measured up to then is kept.
	if d := run.Summary.Duration.Seconds(); d > 30 || run.Summary.Client.Successes == 0 {
		t.Errorf("aborted run lasted %.1f s with %d successes", d, run.Summary.Client.Successes)
	}
}
