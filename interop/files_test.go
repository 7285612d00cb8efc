package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// TestRecordReplayReportCompare records two runs against a real Triton
// (identity_int32 at concurrency 1, then 4) and reads them back the ways a
// user does:
//
//   - tritontop replay (session.Replay, not on a terminal: the summary as
//     JSON) gives each run's counts and server times as Triton's deltas
//     over it (checkExact);
//   - tritontop report (report.WriteHTMLFiles) writes one page with both
//     runs, their labels and Triton's request counts;
//   - tritontop compare --json (report.CompareFiles) sets the two side by
//     side: each run's whole-run queue, compute and batch size are
//     perf_analyzer's formulas on that run's deltas.
func TestRecordReplayReportCompare(t *testing.T) {
	t.Parallel()
	wallTime(t)
	srv := interop.Start(t, interop.Options{Models: []string{identity}})
	dir := t.TempDir()
	var files []string
	var deltas []interop.ModelStats
	for _, conc := range []int{1, 4} {
		c := configFor(srv, "grpc", identity)
		c.Shapes, c.Concurrency = []string{"INPUT0:16"}, conc
		c.Record = filepath.Join(dir, "c"+string(rune('0'+conc))+".jsonl")
		_, d, _ := measure(t, srv, identity, c)
		files, deltas = append(files, c.Record), append(deltas, d)
	}
	labels := []string{"one", "four"}

	for i, f := range files {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := session.Replay(ctx, session.ReplayConfig{File: f, JSON: true}, &stdout, &stderr)
		cancel()
		if err != nil {
			t.Fatalf("replay %s: %v\n%s", f, err, stderr.String())
		}
		var sum record.Summary
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			t.Fatalf("replay %s: its JSON summary: %v\n%s", f, err, stdout.String())
		}
		checkExact(t, "the replay of "+labels[i], sum.Client, sum.Server, deltas[i])
	}

	page := filepath.Join(dir, "report.html")
	var out, errb bytes.Buffer
	if err := report.WriteHTMLFiles(files, labels, page, "interop", "tritontop", false, &out, &errb); err != nil {
		t.Fatalf("report: %v\n%s", err, errb.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, string(html), labels, deltas)

	out.Reset()
	errb.Reset()
	cf := report.CompareFiles{Files: files, Labels: labels, JSON: true, Alpha: report.DefaultAlpha}
	if err := cf.Run(&out, &errb); err != nil {
		t.Fatalf("compare: %v\n%s", err, errb.String())
	}
	var cmp report.Comparison
	if err := json.Unmarshal(out.Bytes(), &cmp); err != nil {
		t.Fatalf("compare's JSON: %v\n%s", err, out.String())
	}
	checkCompared(t, cmp.Overall, deltas)
}

// checkReport holds the HTML report to the runs: each run's heading (its
// label) and its requests, Triton's count, without error.
func checkReport(t *testing.T, html string, labels []string, deltas []interop.ModelStats) {
	t.Helper()
	for i, l := range labels {
		if !strings.Contains(html, `<span class="swatch"></span>`+l+`<span class="file">`) {
			t.Errorf("the report has no heading for run %q", l)
		}
		want := fmt.Sprintf("<dt>requests</dt><dd>%d, no errors,", deltas[i].Inference.Success.Count)
		if !strings.Contains(html, want) {
			t.Errorf("the report does not show run %q's requests as Triton counted them: no %q", l, want)
		}
	}
}

// checkCompared holds compare's whole-run queue, compute and batch size of
// each run to perf_analyzer's formulas on its deltas (the JSON's
// milliseconds as float64: within a nanosecond and its rounding).
func checkCompared(t *testing.T, overall report.LevelComparison, deltas []interop.ModelStats) {
	t.Helper()
	want := map[string][2]float64{}
	for i, d := range deltas {
		a := d.Averages()
		for metric, v := range map[string]float64{"queue": float64(a.Queue) / 1e6, "compute": float64(a.Compute) / 1e6, "batch_size": d.AvgBatch()} {
			w := want[metric]
			w[i] = v
			want[metric] = w
		}
	}
	seen := 0
	for _, m := range overall.Metrics {
		w, ok := want[m.Metric]
		if !ok {
			continue
		}
		seen++
		for i, got := range []*float64{m.A, m.B} {
			slack := 1e-9 * w[i]
			if m.Unit == "ms" {
				slack = 6e-6 // compute: up to 5 ns under, and float rounding
			}
			if got == nil || math.Abs(*got-w[i]) > slack {
				t.Errorf("compare's %s of run %d: %v, Triton's deltas give %v", m.Metric, i, deref(got), w[i])
			}
		}
	}
	if seen != len(want) {
		t.Errorf("compare's whole run has %d of the metrics %v: %+v", seen, want, overall.Metrics)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
