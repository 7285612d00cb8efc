package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/report"
)

// runMerge is `tritontop merge W0.jsonl W1.jsonl... -o all.jsonl`: the run
// files of one run's workers (--workers) added up tick by tick into one
// run file, which replays, reports and compares like any other.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tritontop merge", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: tritontop merge W0.jsonl W1.jsonl... -o all.jsonl\n\n"+
			"Adds up the run files of a run's --workers tick by tick into one run file: latency\n"+
			"histograms merge exactly, counters and loads add, Triton's own numbers are taken once.\n\n")
		fs.PrintDefaults()
	}
	out := fs.String("o", "", "the merged run file to write (- for standard output)")
	repeats := fs.Bool("repeats", false, "the files are runs of the same load one after another: join them as the repeats of one run, as --repeat N records them")
	quietFlags(fs, stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit("tritontop merge", err, stderr)
	}
	if *repeats {
		return exitFor(report.JoinRepeats(files, *out, stdout, stderr), stderr)
	}
	return exitFor(report.MergeWorkers(files, *out, stdout, stderr), stderr)
}
