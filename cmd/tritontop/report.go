package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// runReport is `tritontop report RUN.jsonl... -o report.html`: one
// self-contained HTML page about the runs, overlaid on the same charts.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tritontop report", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: tritontop report RUN.jsonl... -o report.html [--label NAME]...\n\n"+
			"Writes one self-contained HTML page (inline SVG and CSS, no script) about the runs;\n"+
			"several runs overlay on the same charts, each in its own colour.\n\n")
		fs.PrintDefaults()
	}
	out := fs.String("o", "", "the HTML file to write (- for standard output)")
	title := fs.String("title", "", "the page's title (default: tritontop report: MODEL)")
	force := fs.Bool("force", false, forceUsage)
	var labels []string
	fs.Var(repeated{&labels}, "label", "name of a run on the charts, one per file in order (default: the file name)")
	quietFlags(fs, stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit("tritontop report", err, stderr)
	}
	return exitFor(report.WriteHTMLFiles(files, labels, *out, *title, "tritontop "+session.Version, *force, stdout, stderr), stderr)
}
