package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/tritontop/tritontop/record"
)

// replaceRunFile makes way for the run file under Config.Force: an
// existing file is removed just before the new one is created (the checks
// before the run refused it without --force). The run file is streamed in
// place, not renamed.
func replaceRunFile(path string, force bool) error {
	if path == "" || path == "-" || !force {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--force: cannot replace --record %s: %v", path, unwrapPath(err))
	}
	return nil
}

// unwrapPath is err without the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openRecord opens the run file ("-" for standard output), nil without
// one.
func openRecord(path string, h record.Header, stdout io.Writer) (*record.Writer, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		w, err := record.NewWriter(stdout, h)
		if err != nil {
			return nil, fmt.Errorf("writing the run to standard output: %w", err)
		}
		return w, nil
	}
	w, err := record.Create(path, h)
	if err != nil {
		return nil, UsageError{Err: fmt.Errorf("cannot write --record %s: %w", path, err)}
	}
	return w, nil
}

// dropUnstartedRunFile removes the run file of a run interrupted before its
// first tick: it holds a header only, which replay would refuse. The file
// is new (an existing one was refused or, with Force, removed).
func dropUnstartedRunFile(path string) {
	if path != "" && path != "-" {
		os.Remove(path)
	}
}
