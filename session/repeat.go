package session

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
	"github.com/tritontop/tritontop/report"
)

// checkRepeatFlags refuses what --repeat cannot do: a dashboard or a run
// file on standard output would mix the repeats, and -f's CSV comes from
// the run file afterwards (tritontop replay FILE -f out.csv).
func checkRepeatFlags(f *Config) error {
	switch {
	case f.Demo != nil || f.Plan != nil:
		return errRepeatLoadRunOnly
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
func runRepeats(ctx context.Context, f *Config, stdout, stderr io.Writer) error {
	n := f.Gates.Repeat
	if n < 1 || n > maxRepeats {
		return UsageError{Err: fmt.Errorf("--repeat %d is out of range: use 1 to %d", n, maxRepeats)}
	}
	if err := checkRepeatFlags(f); err != nil {
		return UsageError{Err: err}
	}
	// Each repeat is a run of one.
	f.Gates.Repeat = 1
	if err := checkGateFlags(f); err != nil {
		return UsageError{Err: err}
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
		err := runSession(ctx, &rf, io.Discard, stderr)
		if fi, serr := os.Stat(rf.Record); serr == nil && fi.Size() > 0 {
			parts = append(parts, rf.Record)
		}
		var se gate.Failure
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
	sum, err := report.MergeRepeats(f.Record, f.Gates.RepeatPause, f.Gates.gates, parts)
	if err != nil {
		return fmt.Errorf("%w (the repeats' files are kept in %s)", err, dir)
	}
	os.RemoveAll(dir)
	if err := report.WriteSummaryAs(stdout, sum, f.JSON, f.Markdown); err != nil {
		return err
	}
	g := &runGates{flags: &f.Gates}
	if f.Gates.gates.Empty() && f.Gates.StepSummary == "" {
		g = nil
	}
	verdict := g.verdict(sum, "tritontop "+f.Model)
	if abortErr != nil {
		return gate.Failure{Err: errors.Join(abortErr, verdict)}
	}
	return verdict
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
