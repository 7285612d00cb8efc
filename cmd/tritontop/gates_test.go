package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// runBinary runs the built tritontop and returns its exit code and output.
func runBinary(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", bin, err)
	}
	return code, out.String(), errb.String()
}

// validateJUnit checks a --junit file against the Ant JUnit schema that CI
// systems read (gate/testdata/JUnit.xsd) with xmllint, which .ci/run
// installs; outside CI the check is skipped where xmllint is missing.
func validateJUnit(t *testing.T, path string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint is not installed: .ci/run installs libxml2-utils")
		}
		t.Log("xmllint not installed: the JUnit file is not validated against the schema")
		return
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "..", "gate", "testdata", "JUnit.xsd"), path).CombinedOutput(); err != nil {
		t.Fatalf("%s does not validate against the JUnit schema: %v\n%s", path, err, out)
	}
}

// junitCounts reads a JUnit file's tests and failures.
func junitCounts(t *testing.T, path string) (tests, failures int, names []string) {
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

// TestThresholdsEndToEnd is a CI job's gate, run by the real binary against
// the simulator: thresholds that hold exit 0, one that breaks exits 99 and
// says which, the run file's summary and the JUnit file list every check,
// and --abort-on-fail ends a long run at a breach that holds for a window.
func TestThresholdsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	srv := startSim(t)
	dir := t.TempDir()
	base := []string{"-m", "resnet50", "-u", srv.GRPCAddr(), "--metrics-url", "http://" + srv.MetricsAddr() + "/metrics",
		"--concurrency", "2", "--headless", "--tick", "500ms"}

	t.Run("pass", func(t *testing.T) {
		junit, runFile, summary := filepath.Join(dir, "pass.xml"), filepath.Join(dir, "pass.jsonl"), filepath.Join(dir, "step-summary.md")
		if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runBinary(t, bin, append(base, "--duration", "2s", "--record", runFile, "--junit", junit, "--step-summary", summary,
			"--threshold", "p99<10s", "--threshold", "errors<1%", "--threshold", "throughput>1", "--threshold", "queue<10s")...)
		if code != exitOK {
			t.Fatalf("exit %d, want 0: %s", code, stderr)
		}
		if !strings.Contains(stdout, "Thresholds: 4 of 4 passed") {
			t.Errorf("summary does not list the thresholds:\n%s", stdout)
		}
		// The job summary is appended to, as GitHub Actions' steps do.
		if md, _ := os.ReadFile(summary); !strings.HasPrefix(string(md), "earlier step\n### resnet50") ||
			!strings.Contains(string(md), "**Thresholds: 4 of 4 passed**") {
			t.Errorf("--step-summary file:\n%s", md)
		}
		tests, failures, _ := junitCounts(t, junit)
		if tests != 4 || failures != 0 {
			t.Errorf("JUnit: %d tests, %d failures; want 4, 0", tests, failures)
		}
		validateJUnit(t, junit)
		run, err := record.ReadAll(runFile)
		if err != nil || run.Summary == nil {
			t.Fatalf("run file: %v", err)
		}
		if n := len(run.Summary.Thresholds); n != 4 {
			t.Errorf("run file's summary has %d threshold checks, want 4", n)
		}
	})

	t.Run("fail", func(t *testing.T) {
		junit, runFile := filepath.Join(dir, "fail.xml"), filepath.Join(dir, "fail.jsonl")
		code, stdout, stderr := runBinary(t, bin, append(base, "--duration", "2s", "--record", runFile, "--junit", junit,
			"--threshold", "p99<1us", "--threshold", "errors<1%", "--markdown")...)
		if code != exitSLO {
			t.Fatalf("exit %d, want %d: %s", code, exitSLO, stderr)
		}
		if !strings.Contains(stderr, "1 of 2 threshold checks failed: p99<1us over run") {
			t.Errorf("stderr does not name the failed threshold: %q", stderr)
		}
		if !strings.Contains(stdout, "| p99&lt;1us | run |") || !strings.Contains(stdout, "**FAIL**") {
			t.Errorf("Markdown summary lacks the failing row:\n%s", stdout)
		}
		tests, failures, names := junitCounts(t, junit)
		if tests != 2 || failures != 1 || names[0] != "p99<1us over run" {
			t.Errorf("JUnit: %d tests, %d failures, %q", tests, failures, names)
		}
		validateJUnit(t, junit)
		run, err := record.ReadAll(runFile)
		if err != nil || run.Summary == nil {
			t.Fatalf("run file: %v", err)
		}
		th := run.Summary.Thresholds
		if len(th) != 2 || th[0].Pass || th[0].Value == nil || *th[0].Value <= 0.001 || !th[1].Pass {
			t.Errorf("run file's threshold checks: %+v", th)
		}
	})

	t.Run("per-step", func(t *testing.T) {
		junit := filepath.Join(dir, "steps.xml")
		code, stdout, stderr := runBinary(t, bin, "-m", "resnet50", "-u", srv.GRPCAddr(), "--headless", "--tick", "500ms",
			"--concurrency-range", "1:4:3", "--step-duration", "1s", "--threshold-per-step", "--junit", junit,
			"--threshold", "throughput>1", "--threshold", "p99<10s")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, want := range []string{"Thresholds: 6 of 6 passed", "throughput>1 over step concurrency 1:", "p99<10s over step concurrency 4:"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("summary lacks %q:\n%s", want, stdout)
			}
		}
		if tests, failures, _ := junitCounts(t, junit); tests != 6 || failures != 0 {
			t.Errorf("JUnit: %d tests, %d failures", tests, failures)
		}
		validateJUnit(t, junit)
	})

	t.Run("abort-on-fail", func(t *testing.T) {
		runFile := filepath.Join(dir, "abort.jsonl")
		code, _, stderr := runBinary(t, bin, append(base, "--duration", "60s", "--window", "1s", "--record", runFile,
			"--threshold", "p99<1us", "--abort-on-fail")...)
		if code != exitSLO {
			t.Fatalf("exit %d, want %d: %s", code, exitSLO, stderr)
		}
		if !strings.Contains(stderr, "--abort-on-fail ended the run: p99<1us over window") {
			t.Errorf("stderr does not say the run was aborted: %q", stderr)
		}
		run, err := record.ReadAll(runFile)
		if err != nil || run.Summary == nil {
			t.Fatalf("run file: %v", err)
		}
		// A window of two ticks over the limit ends the run; it would
		// run 60 s otherwise. Everything measured up to then is kept.
		if d := run.Summary.Duration.Seconds(); d > 30 || run.Summary.Client.Successes == 0 {
			t.Errorf("aborted run lasted %.1f s with %d successes", d, run.Summary.Client.Successes)
		}
	})
}

// TestThresholdFlagsRefused: a bad threshold, a per-model one in a
// --load-file, or a gate flag without a threshold is a usage error (exit 2)
// in one line naming the bad part, before anything runs.
func TestThresholdFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	lf := filepath.Join(dir, "models.yaml")
	if err := os.WriteFile(lf, []byte("models:\n  - model: resnet50\n    thresholds: [\"p99<fast\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-m", "resnet50", "--threshold", "p98<1ms"}, `unknown metric "p98"`},
		{[]string{"-m", "resnet50", "--threshold", "p99<100"}, `limit "100" has no unit`},
		{[]string{"--load-file", lf}, `model resnet50: bad threshold "p99<fast"`},
		{[]string{"-m", "resnet50", "--abort-on-fail"}, "--abort-on-fail needs a --threshold"},
		{[]string{"-m", "resnet50", "--threshold-per-step"}, "--threshold-per-step needs a --threshold"},
		{[]string{"-m", "resnet50", "--junit", filepath.Join(dir, "j.xml")}, "--junit writes the thresholds' checks"},
		{[]string{"-m", "resnet50", "--threshold", "p99<1s", "--junit", dir}, "is a directory"},
		{[]string{"-m", "resnet50", "--threshold", "p99<1s", "--junit", filepath.Join(dir, "no", "j.xml")}, "there is no directory"},
		{[]string{"-m", "resnet50", "--repeat", "0"}, "--repeat 0 is out of range"},
		{[]string{"-m", "resnet50", "--repeat", "500"}, "--repeat 500 is out of range"},
		{[]string{"-m", "resnet50", "--repeat", "2", "-f", filepath.Join(dir, "out.csv")}, "--repeat and -f"},
		{[]string{"-m", "resnet50", "--repeat", "2", "--record", "-"}, "give --record FILE, not -"},
		{[]string{"demo", "--repeat", "2"}, "tritontop demo runs once"},
		{[]string{"plan", "-m", "resnet50", "--slo", "p99:100ms", "--target-rate", "10", "--repeat", "0"}, "--repeat 0: give how many times"},
	} {
		code, _, stderr := runCLI(append(tc.args, "-u", "127.0.0.1:1", "--connect-timeout", "100ms")...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") > 2 {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRepeatRecordsEveryRepeat: --repeat 3 runs the load three times into
// one run file, each tick and step marked with its repeat and numbered on;
// the summary gives each figure over the repeats, and compare tests two
// such runs over their repeats.
func TestRepeatRecordsEveryRepeat(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	record1 := func(name string) string {
		path := filepath.Join(dir, name)
		code, stdout, stderr := runCLI("-m", "resnet50", "-u", srv.GRPCAddr(), "--concurrency", "2", "--duration", "1s",
			"--tick", "250ms", "--repeat", "3", "--repeat-pause", "100ms", "--record", path, "--threshold", "errors<1%")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "Over 3 repeats:") || !strings.Contains(stdout, "Thresholds: 1 of 1 passed") {
			t.Errorf("summary lacks the repeats or the thresholds:\n%s", stdout)
		}
		if strings.Count(stderr, "tritontop: repeat ") != 3 {
			t.Errorf("stderr does not announce each repeat:\n%s", stderr)
		}
		return path
	}
	a := record1("a.jsonl")
	run, err := record.ReadAll(a)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	if run.Header.Repeats != 3 {
		t.Errorf("header repeats %d", run.Header.Repeats)
	}
	seen := map[int]int{}
	last := 0
	for _, s := range run.Snapshots {
		seen[s.Repeat]++
		if s.Seq <= last {
			t.Fatalf("tick %d after %d: ticks are numbered on across repeats", s.Seq, last)
		}
		last = s.Seq
	}
	if len(seen) != 3 || seen[1] < 3 || seen[2] < 3 || seen[3] < 3 {
		t.Errorf("ticks per repeat: %v", seen)
	}
	// The simulator served every request the repeats counted.
	st, err := srv.Engine().ModelStatistics("resnet50", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, served := run.Summary.Client.Successes, int64(st.ModelStats[0].InferenceStats.Success.Count); got != served {
		t.Errorf("run file counts %d successes over the repeats, the simulator %d", got, served)
	}
	var tput *record.RepeatFigure
	for i, f := range run.Summary.Repeats {
		if f.Figure == "throughput" {
			tput = &run.Summary.Repeats[i]
		}
	}
	if tput == nil || len(tput.Values) != 3 || tput.Min > tput.Median || tput.Median > tput.Max || tput.Min <= 0 {
		t.Fatalf("throughput over repeats: %+v", tput)
	}

	b := record1("b.jsonl")
	code, stdout, stderr := runCLI("compare", a, b, "--fail-if", "p99:+50%", "--json")
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"test": "mann-whitney"`) || !strings.Contains(stdout, `"n_a": 3`) || !strings.Contains(stdout, `"fail_if"`) {
		t.Errorf("compare JSON does not test over the repeats:\n%s", stdout)
	}
	code, _, stderr = runCLI("-m", "resnet50", "-u", srv.GRPCAddr(), "--repeat", "2", "--record", a)
	if code != exitUsage || !strings.Contains(stderr, "already exists") {
		t.Errorf("--repeat over an existing run file: exit %d, %q", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "--repeats", "-o", filepath.Join(dir, "j.jsonl"), a, b}, "already holds 3 repeats"},
		{[]string{"merge", "--repeats", "-o", filepath.Join(dir, "j.jsonl"), a}, "needs two run files or more"},
		{[]string{"merge", "--repeats", a, b}, "needs -o FILE"},
	} {
		if code, _, stderr := runCLI(tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q", tc.args, code, stderr)
		}
	}
}
