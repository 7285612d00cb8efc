package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
)

// MergeWorkers is tritontop merge: the run files of one run's workers
// (--workers) added up tick by tick into one run file at out ("-":
// stdout), which replays, reports and compares like any other.
func MergeWorkers(files []string, out string, stdout, stderr io.Writer) error {
	if len(files) < 2 {
		return usage.Error{Err: errors.New("merge needs the run files of two workers or more: tritontop merge W0.jsonl W1.jsonl... -o all.jsonl")}
	}
	if out == "" {
		return usage.Error{Err: errors.New("merge needs -o FILE, the merged run file to write (-o - writes it to standard output)")}
	}
	runs := make([]*record.Run, len(files))
	for i, f := range files {
		run, err := ReadRun(f, stderr)
		if err != nil {
			return err
		}
		runs[i] = run
	}
	merged, err := record.Merge(runs, files)
	if err != nil {
		return usage.Error{Err: err}
	}
	m := merged.Header.Merged
	if missing := missingWorkers(m); len(missing) > 0 {
		fmt.Fprintf(stderr, "tritontop: warning: merging %d of %d workers (missing: %s): the merged load is not the whole\n",
			len(m.Workers), m.Count, strings.Join(missing, ", "))
	}
	sum := Summarize(merged.Header, merged.Snapshots, merged.Steps...)
	sum.Search = mergedSearch(runs, sum.Steps)
	if err := writeRun(out, merged, sum, stdout); err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(stdout, "wrote %s: %d of %d workers, %d ticks, %d steps\n", out, len(m.Workers), m.Count,
			len(merged.Snapshots), len(merged.Steps))
	}
	return nil
}

// missingWorkers names the workers of the run whose files were not given.
func missingWorkers(m *record.Merged) []string {
	var out []string
	for i := range m.Count {
		if !slices.Contains(m.Workers, i) {
			out = append(out, strconv.Itoa(i))
		}
	}
	return out
}

// mergedSearch is what the merged steps show: the workers' search mode,
// the knee and the highest throughput of the whole load. The workers'
// verdicts on an SLO judged their own shares and are not carried over.
func mergedSearch(runs []*record.Run, steps []record.Step) *record.Search {
	var mode string
	for _, r := range runs {
		if r.Summary != nil && r.Summary.Search != nil {
			mode = r.Summary.Search.Mode
			break
		}
	}
	if mode == "" {
		return nil
	}
	s := &record.Search{Mode: mode, Best: -1, Knee: Knee(steps)}
	for _, st := range steps {
		s.MaxThroughput = max(s.MaxThroughput, st.Client.InferPerS)
	}
	return s
}

// writeRun writes a whole run file: the header, each tick, each measured
// step after its last tick, and the summary. An existing file is refused,
// as --record refuses one.
func writeRun(path string, run *record.Run, sum record.Summary, stdout io.Writer) error {
	var w *record.Writer
	var err error
	if path == "-" {
		w, err = record.NewWriter(stdout, run.Header)
	} else {
		w, err = record.Create(path, run.Header)
	}
	if err != nil {
		return usage.Error{Err: fmt.Errorf("cannot write -o %s: %w", path, err)}
	}
	next := 0
	for _, s := range run.Snapshots {
		if err := w.WriteSnapshot(s); err != nil {
			w.Close(sum)
			return err
		}
		for next < len(run.Steps) && run.Steps[next].LastSeq <= s.Seq {
			if err := w.WriteStep(run.Steps[next]); err != nil {
				w.Close(sum)
				return err
			}
			next++
		}
	}
	for _, st := range run.Steps[next:] {
		if err := w.WriteStep(st); err != nil {
			w.Close(sum)
			return err
		}
	}
	return w.Close(sum)
}
