package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// sloExitSimulated is what every reader of a run file says of a run against
// the simulator.
const sloExitSimulated = "tritontop simulator (numbers are simulated, not a real GPU)"

// TestSLOMissExits99: a range against the simulator whose SLO no level can
// meet ends with a verdict (the command line's exit status 99) that says
// which SLO in one line; the same range with an SLO every level meets ends
// without error (stability is loosened: a busy test host's windows need not
// agree within 10%). replay, compare and the HTML report of the runs say
// the server was the simulator.
func TestSLOMissExits99(t *testing.T) {
	t.Parallel()
	// A model of small tensors and 5 ms batches: over the 1 ms SLO, and
	// each 300 ms window holds dozens of its requests. Each level is
	// measured until three windows in a row agree (up to 10 windows): a
	// window that a loaded host stalled for a good part of it only makes
	// the level take one more.
	srv := startSimWith(t, batchingModel("quick", 1, 8, 5, 0))
	dir := t.TempDir()
	cases := []struct {
		name      string
		threshold float64
		want      int
	}{
		{"impossible", 1, 99},
		{"met", 60000, 0},
	}
	// The two ranges run at the same time.
	type result struct {
		err            error
		stdout, stderr string
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		wg.Go(func() {
			c := quickConfig(srv, "quick")
			c.Duration, c.JSON = 0, true
			c.ConcurrencyRange, c.LatencyThreshold, c.MeasurementIntervalMS = "1:2", tc.threshold, 300
			c.StabilityPercent, c.Record = 100, filepath.Join(dir, tc.name+".jsonl")
			r := &results[i]
			r.err, r.stdout, r.stderr = runConfig(t, c)
		})
	}
	wg.Wait()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err, stdout, stderr := results[i].err, results[i].stdout, results[i].stderr
			if code := exitCode(err); code != tc.want {
				t.Fatalf("exit status %d (%v), want %d; stderr:\n%s", code, err, tc.want, stderr)
			}
			var sum record.Summary
			if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
				t.Fatalf("JSON summary: %v\n%s", err, stdout)
			}
			if !sum.Simulated {
				t.Errorf("the JSON summary does not say the server was the simulator")
			}
			if sum.Search == nil || sum.Search.SLO == nil {
				t.Fatalf("the summary has no search with an SLO: %+v", sum.Search)
			}
			missed := err != nil && strings.Contains(err.Error(), "no level met average latency < 1.00 ms (exit status 99") &&
				!strings.Contains(err.Error(), "\n")
			if missed != (tc.want == 99) || (sum.Search.Best < 0) != (tc.want == 99) {
				t.Errorf("best level %d; error %v", sum.Search.Best, err)
			}
			run, err := record.ReadAll(filepath.Join(dir, tc.name+".jsonl"))
			if err != nil || run.Summary == nil {
				t.Fatalf("the run file was not kept whole: %v", err)
			}
		})
	}
	if t.Failed() {
		return
	}
	// Every reader of the files says the server was the simulator: replay
	// (text and Markdown), compare (text and Markdown) and the HTML report,
	// as tritontop replay, compare and report write them.
	a, b := filepath.Join(dir, "impossible.jsonl"), filepath.Join(dir, "met.jsonl")
	for _, md := range []bool{false, true} {
		var out, errb bytes.Buffer
		if err := session.Replay(context.Background(), session.ReplayConfig{File: a, Markdown: md}, &out, &errb); err != nil {
			t.Fatalf("replay (Markdown %v): %v: %s", md, err, errb.String())
		}
		if !strings.Contains(out.String(), sloExitSimulated) {
			t.Errorf("replay (Markdown %v) does not say the server was the simulator:\n%s", md, out.String())
		}
	}
	ra, err := report.ReadRun(a, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := report.ReadRun(b, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := report.Compare(report.SummarizeRepeated(ra), report.SummarizeRepeated(rb), "impossible", "met")
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(io.Writer) error{"text": cmp.WriteText, "Markdown": cmp.WriteMarkdown} {
		var out bytes.Buffer
		if err := write(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), sloExitSimulated) {
			t.Errorf("compare (%s) does not say the server was the simulator:\n%s", name, out.String())
		}
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, []report.HTMLRun{{Label: "impossible", File: a, Run: ra}, {Label: "met", File: b, Run: rb}},
		report.HTMLOptions{Generator: "tritontop " + session.Version}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), sloExitSimulated) {
		t.Errorf("the HTML report does not say the server was the simulator")
	}
}
