package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/report"
)

// runCompare is `tritontop compare A.jsonl B.jsonl`: the two runs step by
// step (matched by load level) and whole, with the change from A to B.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tritontop compare", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: tritontop compare A.jsonl B.jsonl [--json | --markdown] [--label A --label B] [--fail-if METRIC:+N%]\n\n"+
			"Compares two runs of the same load mode, level by level and whole: throughput,\n"+
			"p50/p99, Triton's queue and compute, batch size, GPU utilization, client CPU per request;\n"+
			"replica by replica when both ran over several replicas (-u A -u B).\n"+
			"Each change is marked significant or within noise: a Mann-Whitney U test over the\n"+
			"repeats when both runs were recorded with --repeat N, else a block bootstrap over\n"+
			"the ticks (weaker). --fail-if exits 99 only on a change past its bound beyond the noise.\n\n")
		fs.PrintDefaults()
	}
	jsonOut := fs.Bool("json", false, "print the comparison as JSON")
	markdown := fs.Bool("markdown", false, "print the comparison as a Markdown table")
	var labels []string
	fs.Var(repeated{&labels}, "label", "name of a run in the table, A's then B's (default: the file names)")
	var gates compareGateFlags
	registerCompareGateFlags(fs, &gates)
	quietFlags(fs, stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit("tritontop compare", err, stderr)
	}
	return exitFor(compareRuns(files, labels, *jsonOut, *markdown, &gates, stdout, stderr), stderr)
}

func compareRuns(files, labels []string, jsonOut, markdown bool, gates *compareGateFlags, stdout, stderr io.Writer) error {
	if len(files) != 2 {
		return usage.Error{Err: fmt.Errorf("compare needs two run files, got %d: tritontop compare A.jsonl B.jsonl", len(files))}
	}
	if jsonOut && markdown {
		return usage.Error{Err: errors.New("choose --json or --markdown, not both")}
	}
	bounds, err := gates.parse()
	if err != nil {
		return err
	}
	names, err := report.RunLabels(files, labels)
	if err != nil {
		return err
	}
	a, err := report.ReadRun(files[0], stderr)
	if err != nil {
		return err
	}
	b, err := report.ReadRun(files[1], stderr)
	if err != nil {
		return err
	}
	c, err := report.Compare(report.SummarizeRepeated(a), report.SummarizeRepeated(b), names[0], names[1])
	if err != nil {
		return usage.Error{Err: err}
	}
	failed := gates.apply(c, a, b, bounds)
	switch {
	case jsonOut:
		err = c.WriteJSON(stdout)
	case markdown:
		err = c.WriteMarkdown(stdout)
	default:
		err = c.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	return gates.verdict(c, failed)
}
