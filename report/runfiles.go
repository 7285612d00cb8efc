package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
)

// ReadRun reads a run file for report or compare. A file that cannot be
// read, is not a run file, or holds no tick is a usage error; a run killed
// mid-line is read up to its last whole line, with a warning.
func ReadRun(path string, stderr io.Writer) (*record.Run, error) {
	run, err := record.ReadAll(path)
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	if len(run.Snapshots) == 0 {
		return nil, usage.Error{Err: fmt.Errorf("%s has no ticks: the run ended before its first tick, so there is nothing to show", path)}
	}
	if run.Truncated {
		fmt.Fprintf(stderr, "tritontop: warning: the last line of %s was incomplete (the run was killed); using its complete ticks\n", path)
	}
	return run, nil
}

// RunLabels names each file: the --label given for it, in order, or else
// its name without the .jsonl extension and with as much of its directory
// as tells it from the others (before/run and after/run). Labels name
// series on shared charts, so they must differ.
func RunLabels(files, labels []string) ([]string, error) {
	if len(labels) > len(files) {
		return nil, usage.Error{Err: fmt.Errorf("%d --label flags for %d run files: give at most one label per file, in the files' order", len(labels), len(files))}
	}
	out := make([]string, len(files))
	parts := make([][]string, len(files)) // a file's path, last element first
	depth := make([]int, len(files))
	for i, f := range files {
		if i < len(labels) {
			out[i] = strings.TrimSpace(labels[i])
			if out[i] == "" {
				return nil, usage.Error{Err: fmt.Errorf("--label %q is empty: give each run a name", labels[i])}
			}
			continue
		}
		for _, e := range strings.Split(filepath.ToSlash(filepath.Clean(strings.TrimSuffix(f, ".jsonl"))), "/") {
			if e != "" && e != "." {
				parts[i] = append([]string{e}, parts[i]...)
			}
		}
		depth[i] = 1
	}
	for {
		for i := range files {
			if depth[i] > 0 {
				p := parts[i][:min(depth[i], len(parts[i]))]
				var b strings.Builder
				for k := len(p) - 1; k >= 0; k-- {
					b.WriteString(p[k])
					if k > 0 {
						b.WriteByte('/')
					}
				}
				out[i] = b.String()
			}
		}
		seen := map[string]int{}
		grew := false
		for i := range files {
			j, dup := seen[out[i]]
			if !dup {
				seen[out[i]] = i
				continue
			}
			pairGrew := false
			for _, k := range []int{j, i} {
				if depth[k] > 0 && depth[k] < len(parts[k]) {
					depth[k]++
					pairGrew = true
				}
			}
			grew = grew || pairGrew
			if !pairGrew {
				return nil, usage.Error{Err: fmt.Errorf("runs %d and %d are both labelled %q: name them apart with --label", j+1, i+1, out[i])}
			}
		}
		if !grew {
			return out, nil
		}
	}
}
