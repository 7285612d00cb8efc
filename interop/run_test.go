package interop_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
)

// The tests of the features run tritontop in-process as the command line
// does (session.Run on a session.Config: every flag is a field of it)
// against a real Triton of their own, for a second or so of load with
// short ticks, and hold what tritontop says against the server's own
// statistics read before and after the run.

// quickTick is a feature test's tick: short, so that a run of a second
// has ticks enough.
const quickTick = 200 * time.Millisecond

// configFor is a headless run of model on srv over protocol: the command
// line's defaults, a short tick, a second's load, the server's metrics, a
// drain long enough for any request in flight on a busy host.
func configFor(srv *interop.Server, protocol, model string) session.Config {
	c := session.Defaults()
	c.URL, c.Protocol, c.Model = srv.GRPC, protocol, model
	if protocol == "http" {
		c.URL = srv.HTTP
	}
	c.MetricsURLs = []string{srv.MetricsURL()}
	c.Headless, c.Tick, c.Duration, c.Drain = true, quickTick, time.Second, 10*time.Second
	return c
}

// runConfig runs c as the command line does, within two minutes, and
// returns its error and what it printed.
func runConfig(t *testing.T, c session.Config) (err error, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	err = session.Run(ctx, c, &out, &errb)
	return err, out.String(), errb.String()
}

// recordRun runs c recording to a file of the test's and returns the run
// read back and the summary printed; the run must succeed and its file
// end with a summary.
func recordRun(t *testing.T, c session.Config) (*record.Run, string) {
	t.Helper()
	if c.Record == "" {
		c.Record = filepath.Join(t.TempDir(), "run.jsonl")
	}
	err, stdout, stderr := runConfig(t, c)
	if err != nil {
		t.Fatalf("the run failed: %v\nstderr:\n%s", err, stderr)
	}
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatalf("the run file: %v\nstderr:\n%s", err, stderr)
	}
	if run.Summary == nil || run.Truncated {
		t.Fatalf("the run file has no summary (truncated %v)\nstderr:\n%s", run.Truncated, stderr)
	}
	t.Logf("tritontop's summary:\n%s", stdout)
	return run, stdout
}

// measure reads model's statistics on srv, runs c recording it, reads them
// again, and returns the run and Triton's deltas over it.
func measure(t *testing.T, srv *interop.Server, model string, c session.Config) (*record.Run, interop.ModelStats, string) {
	t.Helper()
	before := srv.Statistics(t, model)
	run, stdout := recordRun(t, c)
	d := settled(t, srv, model, before, run.Summary.Client.Successes)
	t.Logf("Triton's deltas of %s: %v", model, d)
	return run, d, stdout
}

// settled is Triton's delta of model since before once it has counted the
// want requests a client saw succeed, or after 10 s: Triton counts a
// request only after its backend has sent the response, so a reading taken
// as the last answer arrives may not have it yet. A model that counts no
// requests at all (the square backend) is not waited for.
func settled(t *testing.T, srv *interop.Server, model string, before interop.ModelStats, want int64) interop.ModelStats {
	t.Helper()
	var d interop.ModelStats
	eventually(10*time.Second, func() bool {
		d = interop.Delta(before, srv.Statistics(t, model))
		n := int64(d.Inference.Success.Count)
		return n == 0 || n >= want
	})
	return d
}

// exitCode is the command line's exit code for a run's error: 0, 1 (the
// run failed), 2 (refused: usage) or 99 (a verdict), as cmd/tritontop
// picks it.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case usage.Is(err):
		return 2
	case session.IsVerdict(err):
		return 99
	}
	return 1
}

// oneLine fails the test unless msg is one line.
func oneLine(t *testing.T, what, msg string) {
	t.Helper()
	if strings.Contains(strings.TrimSpace(msg), "\n") {
		t.Errorf("%s is more than one line: %q", what, msg)
	}
}

// wallTime logs a test's wall time at its end.
func wallTime(t *testing.T) {
	begin := time.Now()
	t.Cleanup(func() { t.Logf("wall time %v", time.Since(begin).Round(time.Millisecond)) })
}

// eventually polls cond every 10 ms until it holds or limit passes.
func eventually(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
