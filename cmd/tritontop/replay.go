package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/session"
)

// runReplay is `tritontop replay FILE`: the dashboard fed from a run file.
// Without a terminal, or with -f, --json or --markdown, it writes the run's
// CSV and summary instead, so any record gives them later.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tritontop replay", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: tritontop replay FILE [--speed X] [--mouse] [-f out.csv [--verbose-csv]] [--json | --markdown]\n\n"+
			"Replays a run file in the dashboard; flags may come before or after FILE.\n"+
			"Without a terminal, or with -f, --json or --markdown, it prints the run's summary instead.\n\n")
		fs.PrintDefaults()
	}
	c := session.ReplayConfig{Speed: 1, FPS: session.Defaults().FPS}
	fs.Float64Var(&c.Speed, "speed", c.Speed, "playback speed (2 = twice as fast, 0 = as fast as possible)")
	fs.IntVar(&c.FPS, "fps", c.FPS, "dashboard frames per second")
	fs.BoolVar(&c.Mouse, "mouse", false, mouseUsage)
	fs.StringVar(&c.CSV, "f", "", "write the run's perf_analyzer-style CSV to FILE (- for standard output, instead of the summary)")
	fs.BoolVar(&c.VerboseCSV, "verbose-csv", false, "with -f: add tritontop's columns after perf_analyzer's (a stateful model's sequence count, rate and latency)")
	fs.BoolVar(&c.JSON, "json", false, "print the summary as JSON instead of the dashboard")
	fs.BoolVar(&c.Markdown, "markdown", false, "print the summary as Markdown instead of the dashboard")
	fs.BoolVar(&c.Force, "force", false, forceUsage)
	quietFlags(fs, stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit("tritontop replay", err, stderr)
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "tritontop: replay needs one run file: tritontop replay FILE")
		return exitUsage
	}
	c.File = files[0]
	ctx, stop := stopContext(stderr)
	defer stop()
	return exitFor(session.Replay(ctx, c, stdout, stderr), stderr)
}
