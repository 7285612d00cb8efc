package session_test

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
)

// TestDiagnosisNamesItsSpan runs against a simulator that fails 20% of
// requests, headless with a run file: the progress line's errors finding
// names its span ("· last N s"), the text summary's and the Markdown
// replay's name theirs ("· last N s of load"), where N s is the time of
// the last stats.DiagnoseTicks ticks under load, recomputed from the run
// file; and the summary's diagnosis is stats.Diagnose over the run file's
// ticks.
func TestDiagnosisNamesItsSpan(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{Models: []sim.ModelSpec{batchingModel("quick", 1, 8, 5, 0)}},
		Engine:     sim.EngineOptions{MetricsInterval: 100 * time.Millisecond, Faults: sim.Faults{ErrorRate: 0.2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := quickConfig(srv, "quick")
	c.Concurrency = 4
	c.Record = filepath.Join(t.TempDir(), "run.jsonl")
	stdout, stderr := runOK(t, c)
	run, err := record.ReadAll(c.Record)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	var load []stats.Snapshot
	for _, s := range run.Snapshots {
		if !s.Load.Drain {
			load = append(load, s)
		}
	}
	want := stats.Diagnose(load, stats.DiagnoseOptions{SharedProcess: run.Header.Server.InProcess})
	if !reflect.DeepEqual(run.Summary.Diagnosis, want) {
		t.Errorf("the summary's diagnosis\n%+v\nis not stats.Diagnose over the run file's ticks\n%+v", run.Summary.Diagnosis, want)
	}
	errs := -1
	for i, f := range want {
		if f.Verdict == stats.Failing {
			errs = i
		}
	}
	if errs < 0 {
		t.Fatalf("no errors finding at a 20%% error rate: %+v", want)
	}
	// The ticks the finding read: the last DiagnoseTicks under load, all
	// at one level here.
	var d time.Duration
	for _, s := range load[max(0, len(load)-stats.DiagnoseTicks):] {
		d += s.Interval
	}
	span := "last " + strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s of load"
	if got := run.Summary.DiagnosisSpans; len(got) != len(want) || got[errs] != span {
		t.Errorf("the summary's spans are %q, want %q for the errors finding", got, span)
	}
	line := "⚠ " + want[errs].Message + " · " + span
	if !strings.Contains(stdout, line) {
		t.Errorf("the text summary does not name the errors finding's span (%q):\n%s", line, stdout)
	}
	var md, mdErr bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: c.Record, Markdown: true}, &md, &mdErr); err != nil {
		t.Fatalf("replay --markdown: %v: %s", err, mdErr.String())
	}
	if !strings.Contains(md.String(), "- "+want[errs].Message+" · "+span) {
		t.Errorf("the Markdown summary does not name the errors finding's span (%q):\n%s", span, md.String())
	}
	// Each progress line with the errors finding names the span it read.
	named := 0
	for _, l := range strings.Split(stderr, "\n") {
		i := strings.Index(l, "⚠ errors: ")
		if i < 0 {
			continue
		}
		rest := l[i:]
		if j := strings.Index(rest, "  ⚠"); j > 0 {
			rest = rest[:j]
		}
		if !strings.Contains(rest, " · last ") || !strings.HasSuffix(strings.TrimSpace(rest), " s") {
			t.Errorf("a progress line's errors finding names no span: %q", l)
		}
		named++
	}
	if named == 0 {
		t.Errorf("no progress line shows the errors finding:\n%s", stderr)
	}
}
