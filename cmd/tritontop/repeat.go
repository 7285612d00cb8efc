package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// checkRepeatFlags refuses what --repeat cannot do: a dashboard or a run
// file on standard output would mix the repeats, and -f's CSV comes from
// the run file afterwards (tritontop replay FILE -f out.csv).
func checkRepeatFlags(f *Config) error {
	switch {
	case f.Record == "-":
		return errors.New("--repeat writes one run file after the repeats: give --record FILE, not -")
	case f.CSV != "":
		return errors.New("--repeat and -f: write the CSV from the run file afterwards (tritontop replay FILE -f out.csv)")
	case f.Workers.distributed():
		return errors.New("--repeat and --workers: repeat the distributed run from the coordinating script instead")
	}
	if f.Record != "" {
		if fi, err := os.Stat(f.Record); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return fmt.Errorf("cannot write --record %s: it already exists and is not empty; choose another name or remove it", f.Record)
		}
		if err := outfile.CheckPath("--record", f.Record); err != nil {
			return err
		}
	}
	return nil
}

// runRepeats is a run of --repeat N: the same load N times, each a run of
// its own (fresh connections, its own statistics priming), --repeat-pause
// apart, each recorded to a part file; then one run file of them all, each
// tick and step marked with its repeat, whose summary pools the repeats and
// gives each figure's median and spread over them. The thresholds are
// checked over the pooled run (and, with --threshold-per-step, each
// repeat's steps). A signal ends the repeat under way and keeps the
// repeats done.
func runRepeats(ctx context.Context, f *Config, args []string, stdout, stderr io.Writer) error {
	n := f.Gates.Repeat
	if n < 1 || n > maxRepeats {
		return usageError{fmt.Errorf("--repeat %d is out of range: use 1 to %d", n, maxRepeats)}
	}
	if err := checkRepeatFlags(f); err != nil {
		return usageError{err}
	}
	// Each repeat is a run of one.
	f.Gates.Repeat = 1
	if err := checkGateFlags(f); err != nil {
		return usageError{err}
	}
	// Parts live beside the run file, so a killed series leaves them.
	dir, err := os.MkdirTemp(filepath.Dir(orTemp(f.Record)), "."+filepath.Base(orDefault(f.Record, "tritontop"))+".repeats-")
	if err != nil {
		return fmt.Errorf("--repeat: a directory for the repeats: %w", err)
	}
	var parts []string
	var abortErr error
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		if i > 1 && !sleepCtx(ctx, f.Gates.RepeatPause) {
			break
		}
		fmt.Fprintf(stderr, "tritontop: repeat %d of %d\n", i, n)
		rf := *f
		rf.Record = filepath.Join(dir, fmt.Sprintf("repeat-%d.jsonl", i))
		rf.Gates.JUnit, rf.Gates.StepSummary = "", ""
		rf.Headless, rf.JSON, rf.Markdown = true, false, false
		err := runSession(ctx, &rf, args, io.Discard, stderr)
		if fi, serr := os.Stat(rf.Record); serr == nil && fi.Size() > 0 {
			parts = append(parts, rf.Record)
		}
		var se sloError
		switch {
		case errors.As(err, &se):
			if f.Gates.AbortOnFail {
				abortErr = fmt.Errorf("repeat %d: %w", i, err)
			}
		case err != nil:
			return fmt.Errorf("repeat %d of %d: %w (the repeats' files are kept in %s)", i, n, err, dir)
		}
		if abortErr != nil {
			break
		}
	}
	if len(parts) == 0 {
		os.RemoveAll(dir)
		return errors.New("--repeat: no repeat recorded a tick")
	}
	sum, err := mergeRepeats(f.Record, f.Gates.RepeatPause, f.Gates.gates, parts)
	if err != nil {
		return fmt.Errorf("%w (the repeats' files are kept in %s)", err, dir)
	}
	os.RemoveAll(dir)
	if err := writeSummary(stdout, sum, f.JSON, f.Markdown); err != nil {
		return err
	}
	g := &runGates{flags: &f.Gates}
	if f.Gates.gates.Empty() && f.Gates.StepSummary == "" {
		g = nil
	}
	verdict := g.verdict(sum, "tritontop "+f.Model)
	if abortErr != nil {
		return sloError{errors.Join(abortErr, verdict)}
	}
	return verdict
}

// mergeRepeats writes the repeats' parts as one run file (to out, when
// given) and returns its summary: every repeat's ticks and steps in order,
// marked with their repeat and numbered on from the repeat before, pause
// apart, with the gates checked over the pooled run.
func mergeRepeats(out string, pause time.Duration, gates gate.Gates, parts []string) (record.Summary, error) {
	first, err := record.ReadAll(parts[0])
	if err != nil {
		return record.Summary{}, fmt.Errorf("--repeat: %w", err)
	}
	h := first.Header
	h.Repeats = len(parts)
	var w *record.Writer
	if out != "" {
		if w, err = record.Create(out, h); err != nil {
			return record.Summary{}, usageError{fmt.Errorf("cannot write %s: %w", out, err)}
		}
	}
	z := report.NewSummarizer(h)
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
		repeats = append(repeats, report.SummarizeRun(run))
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
	sum.Repeats = report.RepeatSpread(repeats)
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

// sleepCtx waits d, false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// orTemp is path, or a name in the temporary directory without one.
func orTemp(path string) string {
	if path == "" {
		return filepath.Join(os.TempDir(), "tritontop")
	}
	return path
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// joinRepeats is `tritontop merge --repeats R1.jsonl R2.jsonl... -o
// run.jsonl`: runs of the same load recorded one by one, joined as the
// repeats of one run. Recording two set-ups' repeats in turn (A, B, A, B,
// ...) and joining each side's is how a shared CI runner compares them: a
// change in the runner's load during the job then falls on both.
func joinRepeats(files []string, out string, stdout, stderr io.Writer) error {
	if len(files) < 2 {
		return usageError{errors.New("merge --repeats needs two run files or more: tritontop merge --repeats R1.jsonl R2.jsonl... -o run.jsonl")}
	}
	if out == "" || out == "-" {
		return usageError{errors.New("merge --repeats needs -o FILE, the run file to write")}
	}
	var load string
	for _, p := range files {
		run, err := readRunFile(p, stderr)
		if err != nil {
			return err
		}
		if run.Header.Repeats > 0 {
			return usageError{fmt.Errorf("%s already holds %d repeats: join runs of one repeat each", p, run.Header.Repeats)}
		}
		if len(run.Header.Models) > 0 {
			return usageError{fmt.Errorf("%s is a run over several models: merge --repeats joins runs of one model", p)}
		}
		l := run.Header.Model.Name + " " + run.Header.Load.Target().String()
		if load != "" && l != load {
			return usageError{fmt.Errorf("%s ran %s, the first file %s: repeats are of the same load", p, l, load)}
		}
		load = l
	}
	if err := outfile.CheckPath("-o", out); err != nil {
		return usageError{err}
	}
	sum, err := mergeRepeats(out, 0, gate.Gates{}, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d repeats, %d ticks\n", out, len(files), sum.Ticks)
	return nil
}
