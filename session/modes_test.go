package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
)

// TestConcurrencyRange: a stepped run ends by itself after its last step,
// and the CSV has one row per step, as perf_analyzer's has one per level.
func TestConcurrencyRange(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := quickConfig(srv, "simple")
	c.Duration, c.ConcurrencyRange, c.StepDuration = 0, "1:3:2", 500*time.Millisecond
	c.CSV = filepath.Join(t.TempDir(), "range.csv")
	stdout, _ := runOK(t, c)
	if !strings.Contains(stdout, "2 load steps") {
		t.Errorf("summary does not report two steps:\n%s", stdout)
	}
	b, err := os.ReadFile(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(rows) != 3 {
		t.Fatalf("CSV has %d lines, want a header and 2 rows:\n%s", len(rows), b)
	}
	levels := map[string]bool{}
	for _, r := range rows[1:] {
		levels[strings.SplitN(r, ",", 2)[0]] = true
	}
	if !levels["1"] || !levels["3"] {
		t.Errorf("CSV rows are not concurrency 1 and 3:\n%s", b)
	}
}

// TestRequestRateRecordToStdout: an open-loop run recorded to stdout keeps
// stdout for JSON lines only (the summary goes to stderr), and the CSV
// starts with perf_analyzer's Request Rate column.
func TestRequestRateRecordToStdout(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := quickConfig(srv, "simple")
	c.RequestRate, c.Record = 100, "-"
	c.CSV = filepath.Join(t.TempDir(), "rate.csv")
	stdout, stderr := runOK(t, c)
	r, err := record.NewReader(strings.NewReader(stdout), "stdout")
	if err != nil {
		t.Fatalf("stdout is not a run file: %v\n%s", err, stdout)
	}
	n := 0
	for {
		s, err := r.Next()
		if err != nil {
			break
		}
		n++
		if s.Load.Mode != "rate" || s.Tick.Scheduled == nil {
			t.Errorf("tick %d: load %+v, scheduled latency %v", s.Seq, s.Load, s.Tick.Scheduled)
		}
	}
	if n < 2 || r.Summary() == nil {
		t.Errorf("%d snapshots, summary %v", n, r.Summary() != nil)
	}
	if !strings.Contains(stderr, "Request count") {
		t.Errorf("summary not on stderr:\n%s", stderr)
	}
	b, err := os.ReadFile(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "Request Rate,Inferences/Second,") {
		t.Errorf("CSV header: %q", strings.SplitN(string(b), "\n", 2)[0])
	}
}
