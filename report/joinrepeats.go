package report

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// MergeRepeats writes the repeats' parts as one run file (to out, when
// given) and returns its summary: every repeat's ticks and steps in order,
// marked with their repeat and numbered on from the repeat before, pause
// apart, with the gates checked over the pooled run.
func MergeRepeats(out string, pause time.Duration, gates gate.Gates, parts []string) (record.Summary, error) {
	first, err := record.ReadAll(parts[0])
	if err != nil {
		return record.Summary{}, fmt.Errorf("--repeat: %w", err)
	}
	h := first.Header
	h.Repeats = len(parts)
	var w *record.Writer
	if out != "" {
		if w, err = record.Create(out, h); err != nil {
			return record.Summary{}, usage.Error{Err: fmt.Errorf("cannot write %s: %w", out, err)}
		}
	}
	z := NewSummarizer(h)
	var (
		repeats []record.Summary
		seqOff  int
		timeOff time.Duration
	)
	for i, p := range parts {
		run, err := record.ReadAll(p)
		if err != nil {
			return record.Summary{}, fmt.Errorf("--repeat: %w", err)
		}
		repeats = append(repeats, SummarizeRun(run))
		var last stats.Snapshot
		for _, s := range run.Snapshots {
			s.Repeat, s.Seq, s.Elapsed = i+1, s.Seq+seqOff, s.Elapsed+timeOff
			z.Add(s)
			if w != nil {
				w.Add(s)
			}
			last = s
		}
		for _, st := range run.Steps {
			st.Repeat, st.FirstSeq, st.LastSeq = i+1, st.FirstSeq+seqOff, st.LastSeq+seqOff
			z.AddStep(st)
			if w != nil {
				if err := w.WriteStep(st); err != nil {
					return record.Summary{}, fmt.Errorf("writing the run: %w", err)
				}
			}
		}
		seqOff, timeOff = last.Seq, last.Elapsed+pause
	}
	sum := z.Summary()
	sum.Repeats = RepeatSpread(repeats)
	if !gates.Empty() {
		sum.Thresholds = gates.Evaluate(sum)
	}
	if w != nil {
		if err := w.Close(sum); err != nil {
			return sum, fmt.Errorf("writing the run: %w", err)
		}
	}
	return sum, nil
}

// JoinRepeats is `tritontop merge --repeats R1.jsonl R2.jsonl... -o
// run.jsonl`: runs of the same load recorded one by one, joined as the
// repeats of one run. Recording two set-ups' repeats in turn (A, B, A, B,
// ...) and joining each side's is how a shared CI runner compares them: a
// change in the runner's load during the job then falls on both.
func JoinRepeats(files []string, out string, stdout, stderr io.Writer) error {
	if len(files) < 2 {
		return usage.Error{Err: errors.New("merge --repeats needs two run files or more: tritontop merge --repeats R1.jsonl R2.jsonl... -o run.jsonl")}
	}
	if out == "" || out == "-" {
		return usage.Error{Err: errors.New("merge --repeats needs -o FILE, the run file to write")}
	}
	var load string
	for _, p := range files {
		run, err := ReadRun(p, stderr)
		if err != nil {
			return err
		}
		if run.Header.Repeats > 0 {
			return usage.Error{Err: fmt.Errorf("%s already holds %d repeats: join runs of one repeat each", p, run.Header.Repeats)}
		}
		if len(run.Header.Models) > 0 {
			return usage.Error{Err: fmt.Errorf("%s is a run over several models: merge --repeats joins runs of one model", p)}
		}
		l := run.Header.Model.Name + " " + run.Header.Load.Target().String()
		if load != "" && l != load {
			return usage.Error{Err: fmt.Errorf("%s ran %s, the first file %s: repeats are of the same load", p, l, load)}
		}
		load = l
	}
	if err := outfile.CheckPath("-o", out); err != nil {
		return usage.Error{Err: err}
	}
	sum, err := MergeRepeats(out, 0, gate.Gates{}, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d repeats, %d ticks\n", out, len(files), sum.Ticks)
	return nil
}
