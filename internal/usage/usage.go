// Package usage is the one kind of error every part of tritontop returns for
// a request refused for its settings or its files (a bad flag, an unknown
// model, a run file that cannot be written or read): the command line's exit
// code 2, where any other error is a failed run.
package usage

import (
	"errors"
	"fmt"
)

// Error is a refusal: its message is one line saying what was wrong and
// what to do.
type Error struct{ Err error }

// Error is the refusal's one line.
func (e Error) Error() string { return e.Err.Error() }

// Unwrap is the refusal's cause.
func (e Error) Unwrap() error { return e.Err }

// Errorf formats a refusal.
func Errorf(format string, a ...any) error { return Error{fmt.Errorf(format, a...)} }

// Is reports whether err is, or wraps, a refusal.
func Is(err error) bool {
	var e Error
	return errors.As(err, &e)
}
