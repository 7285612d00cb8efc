package main

import (
	"flag"
	"fmt"
	"io"

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
	c := report.CompareFiles{Alpha: report.DefaultAlpha}
	fs.BoolVar(&c.JSON, "json", false, "print the comparison as JSON")
	fs.BoolVar(&c.Markdown, "markdown", false, "print the comparison as a Markdown table")
	fs.Var(repeated{&c.Labels}, "label", "name of a run in the table, A's then B's (default: the file names)")
	registerCompareGateFlags(fs, &c)
	quietFlags(fs, stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit("tritontop compare", err, stderr)
	}
	c.Files = files
	return exitFor(c.Run(stdout, stderr), stderr)
}
