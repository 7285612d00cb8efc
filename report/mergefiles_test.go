package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// writeRunFile writes run, with its summary, as a run file in dir.
func writeRunFile(t *testing.T, dir, name string, run *record.Run) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := writeRun(path, run, SummarizeRun(run), io.Discard); err != nil {
		t.Fatal(err)
	}
	return path
}

// workerRun is worker i of n of the stepped run.
func workerRun(t *testing.T, i, n int) *record.Run {
	run := steppedRun(t)
	run.Header.Worker = &record.Worker{Index: i, Count: n, Load: run.Header.Load}
	return run
}

// TestMergeWorkersAddsTicks: tritontop merge adds the workers' ticks up
// into a run file that reads back; a worker left out is named in a
// warning, and what cannot be merged is a usage error of one line.
func TestMergeWorkersAddsTicks(t *testing.T) {
	dir := t.TempDir()
	w0 := writeRunFile(t, dir, "w0.jsonl", workerRun(t, 0, 2))
	w1 := writeRunFile(t, dir, "w1.jsonl", workerRun(t, 1, 2))
	out := filepath.Join(dir, "all.jsonl")
	var stdout, stderr bytes.Buffer
	if err := MergeWorkers([]string{w0, w1}, out, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "wrote "+out+": 2 of 2 workers, 5 ticks") || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	merged, err := record.ReadAll(out)
	if err != nil || merged.Summary == nil {
		t.Fatalf("the merged file: %v", err)
	}
	one := steppedRun(t)
	for i, s := range merged.Snapshots {
		if s.Tick.Requests != 2*one.Snapshots[i].Tick.Requests {
			t.Errorf("tick %d: %d requests, want twice the worker's %d", s.Seq, s.Tick.Requests, one.Snapshots[i].Tick.Requests)
		}
	}
	if m := merged.Header.Merged; m == nil || m.Count != 2 || len(m.Workers) != 2 || merged.Header.Load.Concurrency != 2 {
		t.Errorf("merged header %+v, load %+v", merged.Header.Merged, merged.Header.Load)
	}

	// To standard output, with one of three workers missing.
	w2 := writeRunFile(t, dir, "w2of3.jsonl", workerRun(t, 0, 3))
	w3 := writeRunFile(t, dir, "w3of3.jsonl", workerRun(t, 2, 3))
	stdout.Reset()
	stderr.Reset()
	if err := MergeWorkers([]string{w2, w3}, "-", &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "merging 2 of 3 workers (missing: 1)") {
		t.Errorf("no warning of the missing worker: %q", stderr.String())
	}
	if first, _, _ := strings.Cut(stdout.String(), "\n"); !json.Valid([]byte(first)) {
		t.Errorf("-o - did not write the run file: %.200q", stdout.String())
	}

	plain := writeRunFile(t, dir, "plain.jsonl", steppedRun(t))
	for _, c := range []struct {
		files []string
		out   string
		want  string
	}{
		{[]string{w0}, out, "merge needs the run files of two workers or more"},
		{[]string{w0, w1}, "", "merge needs -o FILE"},
		{[]string{w0, plain}, filepath.Join(dir, "x.jsonl"), "is not a worker's run file"},
		{[]string{w0, w0}, filepath.Join(dir, "y.jsonl"), "are both worker 0 of 2"},
		{[]string{w0, w1}, out, "cannot write -o " + out},
		{[]string{w0, filepath.Join(dir, "none.jsonl")}, filepath.Join(dir, "z.jsonl"), "none.jsonl"},
	} {
		err := MergeWorkers(c.files, c.out, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("merge %v -o %q: %v, want one line with %q", c.files, c.out, err, c.want)
		}
	}
	if err := MergeWorkers([]string{w0}, out, io.Discard, io.Discard); !usage.Is(err) {
		t.Errorf("a single file is not a usage error: %v", err)
	}
}

// TestJoinRepeatsPoolsRuns: tritontop merge --repeats joins runs of one
// load as the repeats of one run: each repeat's ticks in order, numbered
// on, the summary's spread over the repeats; runs that are not repeats of
// one load are refused in one line.
func TestJoinRepeatsPoolsRuns(t *testing.T) {
	dir := t.TempDir()
	r1 := writeRunFile(t, dir, "r1.jsonl", steppedRun(t))
	r2 := writeRunFile(t, dir, "r2.jsonl", steppedRun(t))
	out := filepath.Join(dir, "joined.jsonl")
	var stdout bytes.Buffer
	if err := JoinRepeats([]string{r1, r2}, out, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "wrote "+out+": 2 repeats, 10 ticks") {
		t.Errorf("stdout %q", stdout.String())
	}
	joined, err := record.ReadAll(out)
	if err != nil || joined.Summary == nil {
		t.Fatalf("the joined file: %v", err)
	}
	if joined.Header.Repeats != 2 || len(joined.Snapshots) != 10 || joined.Summary.Repeats == nil {
		t.Fatalf("joined: %d repeats, %d ticks, spread %+v", joined.Header.Repeats, len(joined.Snapshots), joined.Summary.Repeats)
	}
	for i, s := range joined.Snapshots {
		if want := i/5 + 1; s.Repeat != want || s.Seq != i+1 {
			t.Errorf("tick %d: repeat %d seq %d, want repeat %d seq %d", i, s.Repeat, s.Seq, want, i+1)
		}
	}

	other := steppedRun(t)
	other.Header.Load = stats.Load{Mode: load.Rate, Rate: 100}
	rate := writeRunFile(t, dir, "rate.jsonl", other)
	models := steppedRun(t)
	models.Header.Models = []record.ModelInfo{{Name: "a"}, {Name: "b"}}
	several := writeRunFile(t, dir, "models.jsonl", models)
	for _, c := range []struct {
		files []string
		out   string
		want  string
	}{
		{[]string{r1}, out, "needs two run files or more"},
		{[]string{r1, r2}, "-", "needs -o FILE"},
		{[]string{r1, rate}, filepath.Join(dir, "a.jsonl"), "repeats are of the same load"},
		{[]string{out, r1}, filepath.Join(dir, "b.jsonl"), "already holds 2 repeats"},
		{[]string{several, r1}, filepath.Join(dir, "c.jsonl"), "a run over several models"},
		{[]string{r1, r2}, out, out},
	} {
		err := JoinRepeats(c.files, c.out, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("merge --repeats %v -o %q: %v, want one line with %q", c.files, c.out, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.jsonl")); err == nil {
		t.Error("a refused join left a file")
	}
}

// TestWriteSummaryAsFormats: the summary as JSON, Markdown or text.
func TestWriteSummaryAsFormats(t *testing.T) {
	sum := SummarizeRun(steppedRun(t))
	var j, md, text bytes.Buffer
	for _, c := range []struct {
		b        *bytes.Buffer
		json, md bool
	}{{&j, true, false}, {&md, false, true}, {&text, false, false}} {
		if err := WriteSummaryAs(c.b, sum, c.json, c.md); err != nil {
			t.Fatal(err)
		}
	}
	var back record.Summary
	if err := json.Unmarshal(j.Bytes(), &back); err != nil || back.Ticks != sum.Ticks {
		t.Errorf("JSON summary: %v, %d ticks of %d", err, back.Ticks, sum.Ticks)
	}
	if !strings.Contains(md.String(), "|") || strings.Contains(text.String(), "| ---") || text.Len() == 0 {
		t.Errorf("Markdown %q\ntext %q", md.String(), text.String())
	}
}
