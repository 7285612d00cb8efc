package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/session"
)

// runLoad is `tritontop [flags]`: a live or headless load run.
func runLoad(args []string, stdout, stderr io.Writer) int {
	c, err := parseLoadFlags("tritontop", args, stderr)
	if err != nil {
		return flagExit("tritontop", err, stderr)
	}
	return runConfig(c, stdout, stderr)
}

// runConfig runs a load command's settings until it ends or a stop signal
// ends it, and picks the exit code.
func runConfig(c *session.Config, stdout, stderr io.Writer) int {
	ctx, stop := stopContext(stderr)
	defer stop()
	return exitFor(session.Run(ctx, *c, stdout, stderr), stderr)
}

// flagExit reports a bad command line of the command name in one line and
// a hint, never the whole usage; -h, which printed the usage already, is
// not an error.
func flagExit(name string, err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "tritontop: %s\n%s -h for help\n", oneLine(err.Error()), name)
	return exitUsage
}

// quietFlags makes fs print nothing when a flag is bad (flagExit prints one
// line instead), and its usage to help on -h.
func quietFlags(fs *flag.FlagSet, help io.Writer) {
	usage := fs.Usage
	failed := &errorSeen{}
	fs.SetOutput(failed)
	fs.Usage = func() {
		// The flag package prints a bad flag's error, then the usage; -h
		// comes with no error first.
		if failed.seen {
			failed.seen = false
			return
		}
		fs.SetOutput(help)
		defer fs.SetOutput(failed)
		if usage != nil {
			usage()
			return
		}
		fmt.Fprintf(help, "Usage of %s:\n", fs.Name())
		fs.PrintDefaults()
	}
}

// errorSeen notes that the flag package printed an error.
type errorSeen struct{ seen bool }

func (e *errorSeen) Write(p []byte) (int, error) { e.seen = true; return len(p), nil }

// exitFor prints err as one line and picks the exit code.
func exitFor(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
	switch {
	case usage.Is(err):
		return exitUsage
	case session.IsVerdict(err):
		return exitSLO
	}
	return exitFail
}

// oneLine is s on one line: a message's line breaks as spaces.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}
