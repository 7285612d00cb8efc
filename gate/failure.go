package gate

import (
	"io"
	"time"

	"github.com/tritontop/tritontop/internal/outfile"
)

// Failure is a run or a comparison that went as asked but did not hold what
// it was asked to hold (a --threshold, a compare --fail-if): the command
// line's exit code 99, apart from a failed run (1) and a usage error (2).
type Failure struct{ Err error }

// Error is what failed.
func (e Failure) Error() string { return e.Err.Error() }

// Unwrap is the failure's cause.
func (e Failure) Unwrap() error { return e.Err }

// WriteJUnitFile writes a JUnit report whole: to a temporary file beside
// path, renamed over it, so a reader never sees half a file.
func WriteJUnitFile(path string, s Suite) error {
	return outfile.Write("--junit", path, true, func(w io.Writer) error { return WriteJUnit(w, time.Now(), s) })
}
