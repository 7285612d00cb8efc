// Package outfile holds the rule for every file tritontop writes (-f,
// --record, report -o, replay -f, --junit, --cpuprofile), in one place.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
)

// The rule for every file tritontop writes (-f, --record, report -o,
// replay -f, --cpuprofile):
//   - an existing file is refused before anything runs, unless --force;
//   - two outputs of one command on one path are refused before it runs;
//   - a file is created 0644 whatever the umask;
//   - a file written at the end (CSV, HTML report, CPU profile) is written
//     to a temporary file in the same directory and renamed into place, so
//     a run killed at any moment leaves the old file or the whole new one,
//     never an empty or half-written one. The run file is the exception: it
//     is streamed, one whole line per write, appended in place, so that it
//     can be followed while the run goes on and a kill -9 keeps every tick
//     written before it; a rename at the end would lose the whole run to a
//     kill instead.

// Mode is the mode of every file tritontop writes.
const Mode fs.FileMode = 0o644

// Named is one output file of a command and the flag that names it.
type Named struct{ Flag, Path string }

// CheckAll applies the rule's checks before a command runs: each
// path (but "-") must be writable, new unless force, and no two outputs may
// share a path (or both be standard output).
func CheckAll(outs []Named, force bool) error {
	type seen struct {
		flag string
		fi   os.FileInfo
	}
	byPath := map[string]seen{}
	stdout := ""
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		if o.Path == "-" {
			if stdout != "" {
				return fmt.Errorf("%s - and %s - both write to standard output: send one of them to a file", stdout, o.Flag)
			}
			stdout = o.Flag
			continue
		}
		if err := CheckNew(o.Flag, o.Path, force); err != nil {
			return err
		}
		abs, err := filepath.Abs(o.Path)
		if err != nil {
			return fmt.Errorf("cannot write %s %s: %w", o.Flag, o.Path, err)
		}
		fi, _ := os.Stat(abs)
		if prev, ok := byPath[abs]; ok {
			return fmt.Errorf("%s and %s both write %s: one would overwrite the other; give each its own file", prev.flag, o.Flag, o.Path)
		}
		for _, prev := range byPath {
			if fi != nil && prev.fi != nil && os.SameFile(fi, prev.fi) {
				return fmt.Errorf("%s and %s both write %s (one file under two names): give each its own file", prev.flag, o.Flag, o.Path)
			}
		}
		byPath[abs] = seen{o.Flag, fi}
	}
	return nil
}

// CheckNew checks that path can be written: not a directory, in a
// directory that exists and takes new files, and new unless force.
func CheckNew(flag, path string, force bool) error {
	if path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("cannot write %s %s: it is a directory", flag, path)
		}
		if !force {
			return fmt.Errorf("%s %s already exists: choose another name, remove it, or add --force to overwrite it", flag, path)
		}
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot write %s %s: there is no directory %s", flag, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".tritontop-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write %s %s: %v", flag, path, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// Write writes a whole file by the rule: into a temporary file
// in path's directory (mode 0644), then moved into place. Without force an
// existing path is kept and the write fails (the path may have appeared
// during the run); with force it is replaced.
func Write(flag, path string, force bool, write func(io.Writer) error) error {
	tmp, err := createTemp(path)
	if err != nil {
		return fmt.Errorf("cannot write %s %s: %v", flag, path, unwrapPath(err))
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	return finishTemp(flag, path, tmp, force)
}

// createTemp opens a temporary file, mode 0644, beside path.
func createTemp(path string) (*os.File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := tmp.Chmod(Mode); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return tmp, nil
}

// finishTemp flushes and closes tmp and moves it to path: a hard link when
// an existing path must be kept (it fails if path exists), a rename when it
// may be replaced or the file system has no hard links.
func finishTemp(flag, path string, tmp *os.File, force bool) error {
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write %s %s: %v", flag, path, unwrapPath(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write %s %s: %v", flag, path, unwrapPath(err))
	}
	if !force {
		err := os.Link(name, path)
		if err == nil {
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s %s appeared during the run and was kept; the output was not written (add --force to overwrite)", flag, path)
		}
		// No hard links here: rename, after checking once more.
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s %s appeared during the run and was kept; the output was not written (add --force to overwrite)", flag, path)
		}
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("cannot write %s %s: %v", flag, path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Abs is path made absolute, or path itself if that fails.
func Abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// StartCPUProfile profiles this process's CPU until the returned func runs,
// into a temporary file that the func then moves to path by the output
// rule: a profile is of use only whole.
func StartCPUProfile(path string, force bool) (func(), error) {
	tmp, err := createTemp(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write --cpuprofile %s: %v", path, unwrapPath(err))
	}
	if err := pprof.StartCPUProfile(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := finishTemp("--cpuprofile", path, tmp, force); err != nil {
			fmt.Fprintf(os.Stderr, "tritontop: %v\n", err)
		}
	}, nil
}

// CheckPath refuses, before the run, a file the run could not write
// at its end: a directory, or one in a directory that is not there.
func CheckPath(flagName, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s %s: it is a directory", flagName, path)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot write %s %s: there is no directory %s", flagName, path, filepath.Dir(path))
	}
	return nil
}

// AppendStepSummary appends Markdown to a job summary file
// ($GITHUB_STEP_SUMMARY, which GitHub Actions shows on the run's page):
// appended, as each step of a job adds its own.
func AppendStepSummary(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("cannot write --step-summary %s: %w", path, err)
	}
	var b strings.Builder
	if err := write(&b); err != nil {
		f.Close()
		return err
	}
	b.WriteString("\n")
	if _, err := io.WriteString(f, b.String()); err != nil {
		f.Close()
		return fmt.Errorf("cannot write --step-summary %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write --step-summary %s: %w", path, err)
	}
	return nil
}
