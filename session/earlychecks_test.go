package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
)

// earlyConfig is a run of the simple model against a port where no server
// listens, with a short connect timeout: a check that came too late would
// fail on the connection instead.
func earlyConfig() session.Config {
	c := session.Defaults()
	c.Model, c.URL, c.Headless, c.ConnectTimeout = "simple", "127.0.0.1:1", true, 100*time.Millisecond
	return c
}

// TestEarlyChecks: options a run would silently bend (a fractional
// concurrency, a rate too low to measure, a start years ahead) are refused
// before anything runs, with the real limit in one line.
func TestEarlyChecks(t *testing.T) {
	t.Parallel()
	years := time.Now().Add(3 * 365 * 24 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name string
		set  func(c *session.Config)
		want string
	}{
		{"--concurrency-range 1.5:3", func(c *session.Config) { c.ConcurrencyRange = "1.5:3" }, "1.5 is not a whole number"},
		{"--concurrency-range 1:3.5", func(c *session.Config) { c.ConcurrencyRange = "1:3.5" }, "3.5 is not a whole number"},
		{"--concurrency-range 1:8:0.5", func(c *session.Config) { c.ConcurrencyRange = "1:8:0.5" }, "0.5 is not a whole number"},
		{"--request-rate-range 1e-300:1", func(c *session.Config) { c.RequestRateRange = "1e-300:1" }, "below the least rate, 0.001"},
		{"--request-rate-range 0.0001:1", func(c *session.Config) { c.RequestRateRange = "0.0001:1" }, "below the least rate"},
		{"--request-rate 1e-9", func(c *session.Config) { c.RequestRate = 1e-9 }, "at least 0.001"},
		{"--start-at years ahead", func(c *session.Config) { c.Workers.StartAt = years }, "ahead: at most 24h"},
		{"-u user:pw@h:8001", func(c *session.Config) { c.URLs = []string{"user:pw@h:8001"} }, "user information"},
		{"-m simple@concurrency=2,concurrency=3", func(c *session.Config) { c.ModelArgs = []string{"simple@concurrency=2,concurrency=3"} }, "concurrency given twice"},
		{"-m simple@c=2,concurrency=3", func(c *session.Config) { c.ModelArgs = []string{"simple@c=2,concurrency=3"} }, "concurrency given twice"},
		{"-m simple@rate=2,request-rate=3", func(c *session.Config) { c.ModelArgs = []string{"simple@rate=2,request-rate=3"} }, "rate given twice"},
		{"-m simple@rate=2,poisson,constant", func(c *session.Config) { c.ModelArgs = []string{"simple@rate=2,poisson,constant"} }, "distribution given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := earlyConfig()
			tc.set(&c)
			err, _, _ := runConfig(t, c)
			wantRefused(t, err, tc.want)
		})
	}
}

// TestPlanSLOChecks: contradictory SLOs and an SLO too long for a duration
// are refused by tritontop plan before it connects.
func TestPlanSLOChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		slos                  []string
		deployment, namespace string
		want                  string
	}{
		{[]string{"p99:10ms", "p99:20ms"}, "", "", "both bound p99"},
		{[]string{"avg:10ms", "avg:1s"}, "", "", "both bound avg"},
		{[]string{"p99:9999999h"}, "", "", "longer than the longest duration"},
		{[]string{"ttft-p99:3000000h"}, "", "", "longer than the longest duration"},
		{[]string{"p99:100ms"}, "", "Bad_NS!", "is not a Kubernetes namespace"},
		{[]string{"p99:100ms"}, "Triton Server", "", "is not a Kubernetes name"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			c := earlyConfig()
			pc := session.DefaultPlan()
			pc.TargetRate = 100
			if tc.deployment != "" {
				pc.Deployment = tc.deployment
			}
			if tc.namespace != "" {
				pc.Namespace = tc.namespace
			}
			c.Plan, c.SLO.Specs = &pc, tc.slos
			err, _, _ := runConfig(t, c)
			wantRefused(t, err, tc.want)
		})
	}
}

// TestLoadFileChecks: a second YAML document is refused rather than left
// out, and a huge value in an error is quoted cut short.
func TestLoadFileChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	huge := strings.Repeat("x", 10<<20)
	for _, tc := range []struct {
		file, want string
	}{
		{writeFile(t, dir, "two.yaml", "models:\n  - model: simple\n---\nmodels:\n  - model: other\n"), "second YAML document"},
		{writeFile(t, dir, "huge.yaml", "models:\n  - model: simple\n    concurrency: "+huge+"\n"), "cannot unmarshal"},
		{writeFile(t, dir, "hugedist.yaml", "models:\n  - model: simple\n    distribution: "+huge+"\n"), "bytes in all"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			c := earlyConfig()
			c.Model, c.LoadFile = "", tc.file
			err, _, stderr := runConfig(t, c)
			wantRefused(t, err, tc.want)
			if err != nil && len(err.Error())+len(stderr) > 2000 {
				t.Errorf("%s: %d bytes of error and %d of stderr, want short: %.300q", tc.file, len(err.Error()), len(stderr), err.Error())
			}
		})
	}
}

// TestPlanTTFTOnAModelNotDecoupled: tritontop plan with a time-to-first-
// token SLO on a model that is not decoupled stops right after connecting,
// before any load: the simulator has served no inference.
func TestPlanTTFTOnAModelNotDecoupled(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := session.Defaults()
	c.Model, c.URL = "simple", srv.GRPCAddr()
	pc := session.DefaultPlan()
	pc.TargetRate = 100
	c.Plan, c.SLO.Specs = &pc, []string{"ttft-p99:500ms"}
	began := time.Now()
	err, _, _ := runConfig(t, c)
	wantRefused(t, err, "needs a decoupled (streaming) model")
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
