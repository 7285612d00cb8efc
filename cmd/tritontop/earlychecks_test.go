package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestEarlyChecks: options a run would silently bend (a fractional
// concurrency, a rate too low to measure, a start years ahead) are refused
// before anything runs, with the real limit in one line. No server listens
// at -u: a check that came too late would fail on the connection instead.
func TestEarlyChecks(t *testing.T) {
	base := []string{"-m", "simple", "-u", "127.0.0.1:1", "--headless", "--connect-timeout", "100ms"}
	years := time.Now().Add(3 * 365 * 24 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency-range", "1.5:3"}, "1.5 is not a whole number"},
		{[]string{"--concurrency-range", "1:3.5"}, "3.5 is not a whole number"},
		{[]string{"--concurrency-range", "1:8:0.5"}, "0.5 is not a whole number"},
		{[]string{"--request-rate-range", "1e-300:1"}, "below the least rate, 0.001"},
		{[]string{"--request-rate-range", "0.0001:1"}, "below the least rate"},
		{[]string{"--request-rate", "1e-9"}, "at least 0.001"},
		{[]string{"--start-at", years}, "ahead: at most 24h"},
		{[]string{"-u", "user:pw@h:8001"}, "user information"},
		{[]string{"-m", "simple@concurrency=2,concurrency=3"}, "concurrency given twice"},
		{[]string{"-m", "simple@c=2,concurrency=3"}, "concurrency given twice"},
		{[]string{"-m", "simple@rate=2,request-rate=3"}, "rate given twice"},
		{[]string{"-m", "simple@rate=2,poisson,constant"}, "distribution given twice"},
	} {
		code, _, stderr := runCLI(append(append([]string{}, base...), tc.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.Contains(first, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestPlanSLOChecks: contradictory SLOs and an SLO too long for a duration
// are refused by tritontop plan before it connects.
func TestPlanSLOChecks(t *testing.T) {
	for _, tc := range []struct {
		slos []string
		want string
	}{
		{[]string{"p99:10ms", "p99:20ms"}, "both bound p99"},
		{[]string{"avg:10ms", "avg:1s"}, "both bound avg"},
		{[]string{"p99:9999999h"}, "longer than the longest duration"},
		{[]string{"ttft-p99:3000000h"}, "longer than the longest duration"},
		{[]string{"p99:100ms", "--namespace", "Bad_NS!"}, "is not a Kubernetes namespace"},
		{[]string{"p99:100ms", "--deployment", "Triton Server"}, "is not a Kubernetes name"},
	} {
		args := []string{"plan", "-m", "simple", "-u", "127.0.0.1:1", "--connect-timeout", "100ms", "--target-rate", "100"}
		for i, s := range tc.slos {
			if strings.HasPrefix(s, "--") {
				args = append(args, tc.slos[i:]...)
				break
			}
			args = append(args, "--slo", s)
		}
		code, _, stderr := runCLI(args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.Contains(first, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.slos, code, stderr, tc.want)
		}
	}
}

// TestLoadFileChecks: a second YAML document is refused rather than left
// out, and a huge value in an error is quoted cut short.
func TestLoadFileChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := strings.Repeat("x", 10<<20)
	for _, tc := range []struct {
		file, want string
	}{
		{write("two.yaml", "models:\n  - model: simple\n---\nmodels:\n  - model: other\n"), "second YAML document"},
		{write("huge.yaml", "models:\n  - model: simple\n    concurrency: "+huge+"\n"), "cannot unmarshal"},
		{write("hugedist.yaml", "models:\n  - model: simple\n    distribution: "+huge+"\n"), "bytes in all"},
	} {
		code, _, stderr := runCLI("--load-file", tc.file, "-u", "127.0.0.1:1", "--headless", "--connect-timeout", "100ms")
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.Contains(first, tc.want) || len(stderr) > 2000 {
			t.Errorf("%s: exit %d, %d bytes of stderr %.300q; want 2, short, with %q", tc.file, code, len(stderr), stderr, tc.want)
		}
	}
}

// TestPlanTTFTOnAModelNotDecoupled: tritontop plan with a time-to-first-
// token SLO on a model that is not decoupled stops right after connecting,
// before any load: the simulator has served no inference.
func TestPlanTTFTOnAModelNotDecoupled(t *testing.T) {
	srv := startSim(t)
	began := time.Now()
	code, _, stderr := runCLI("plan", "-m", "simple", "-u", srv.GRPCAddr(), "--target-rate", "100", "--slo", "ttft-p99:500ms")
	first, _, _ := strings.Cut(stderr, "\n")
	if code != 2 || !strings.Contains(first, "needs a decoupled (streaming) model") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	st, err := srv.Engine().ModelStatistics("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.GetModelStats() {
		if m.GetInferenceCount() != 0 {
			t.Fatalf("the simulator served %d inferences before the refusal", m.GetInferenceCount())
		}
	}
	t.Logf("refused %v after the start", time.Since(began).Round(time.Millisecond))
}
