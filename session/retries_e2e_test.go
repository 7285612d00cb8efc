package session_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// retriesTries is the simulator's own count of the requests it served to
// model, successes and failures.
func retriesTries(t *testing.T, srv *sim.Server, model string) int64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics(model, "")
	if err != nil || len(st.GetModelStats()) == 0 {
		t.Fatalf("statistics of %s: %v", model, err)
	}
	is := st.GetModelStats()[0].GetInferenceStats()
	return int64(is.GetSuccess().GetCount() + is.GetFail().GetCount())
}

// TestRetriesShown runs against the simulator failing a fifth of its
// requests (with INTERNAL, as tritontop sim --error-rate 0.2 does): with
// --retries 3 --retry-codes INTERNAL the retries are every try the
// simulator counted past the requests, and they show in the progress
// line, the text and Markdown summaries, compare and the HTML report; with
// the default codes INTERNAL is not retried.
func TestRetriesShown(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Engine: sim.EngineOptions{MetricsInterval: 100 * time.Millisecond, Faults: sim.Faults{ErrorRate: 0.2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	retried, plain := filepath.Join(dir, "retried.jsonl"), filepath.Join(dir, "plain.jsonl")
	common := func() session.Config {
		c := quickConfig(srv, model)
		c.Concurrency, c.Retries, c.Retry.Backoff = 4, 3, time.Millisecond
		return c
	}

	before := retriesTries(t, srv, model)
	c := common()
	if err := c.Retry.Codes.Set("INTERNAL"); err != nil {
		t.Fatal(err)
	}
	c.Record = retried
	stdout, stderr := runOK(t, c)
	tries := retriesTries(t, srv, model) - before
	run, err := record.ReadAll(retried)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	cs := run.Summary.Client
	if cs.Retries == 0 || cs.Requests+cs.Cancelled+cs.Retries != tries {
		t.Errorf("client: %d requests + %d cancelled + %d retries; the simulator served %d tries", cs.Requests, cs.Cancelled, cs.Retries, tries)
	}
	if !strings.Contains(stderr, "  retries ") {
		t.Errorf("the progress line does not show retries:\n%s", stderr)
	}
	if !strings.Contains(stdout, "retries: ") {
		t.Errorf("the text summary does not show retries:\n%s", stdout)
	}

	c = common()
	c.Record = plain
	runOK(t, c)
	pr, err := record.ReadAll(plain)
	if err != nil || pr.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	if pc := pr.Summary.Client; pc.Retries != 0 || pc.Errors == 0 {
		t.Errorf("default retry codes: %d retries, %d errors; INTERNAL should fail without a retry", pc.Retries, pc.Errors)
	}

	var md, page bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: retried, Markdown: true}, &md, io.Discard); err != nil {
		t.Fatalf("replay --markdown: %v", err)
	}
	compared, _ := repeatCompare(t, retried, plain, false)
	if err := report.WriteHTML(&page, []report.HTMLRun{{Label: "retried", File: retried, Run: run}}, report.HTMLOptions{}); err != nil {
		t.Fatalf("report: %v", err)
	}
	for what, out := range map[string]string{"replay --markdown": md.String(), "compare": compared, "report": page.String()} {
		if !strings.Contains(out, "retries") {
			t.Errorf("%s does not show the retries:\n%s", what, out)
		}
	}
}
