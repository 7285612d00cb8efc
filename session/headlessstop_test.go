package session_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
)

// TestHeadlessStopsOnSignal: a headless run without a duration runs until
// it is stopped (the command line's SIGINT, SIGTERM and SIGHUP end its
// context; cmd/tritontop tests the signals themselves), then drains,
// writes the run file's summary line and the CSV, prints the summary and
// ends without an error.
func TestHeadlessStopsOnSignal(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	c := quickConfig(srv, "simple")
	c.Duration, c.Concurrency = 0, 2
	c.Record, c.CSV = filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- session.Run(ctx, c, &stdout, &stderr) }()
	// The stop comes once the run file holds its header and three ticks.
	lines := func() int { b, _ := os.ReadFile(c.Record); return strings.Count(string(b), "\n") }
	if !eventually(t, 30*time.Second, func() bool { return lines() >= 4 }) {
		cancel()
		<-done
		t.Fatalf("%d lines in the run file after 30 s: %s", lines(), stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a stopped run: %v: %s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the run did not stop")
	}
	run, err := record.ReadAll(c.Record)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary == nil || run.Truncated || len(run.Snapshots) < 3 {
		t.Errorf("summary %v, truncated %v, %d ticks", run.Summary != nil, run.Truncated, len(run.Snapshots))
	}
	if !strings.Contains(stdout.String(), "Request count") {
		t.Errorf("no summary printed:\n%s", stdout.String())
	}
	if b, err := os.ReadFile(c.CSV); err != nil || !strings.HasPrefix(string(b), "Concurrency,") || strings.Count(string(b), "\n") != 2 {
		t.Errorf("CSV %q, %v", b, err)
	}
}
