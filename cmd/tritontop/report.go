package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
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
	return exitFor(writeReport(files, labels, *out, *title, *force, stdout, stderr), stderr)
}

func writeReport(files, labels []string, out, title string, force bool, stdout, stderr io.Writer) error {
	if len(files) == 0 {
		return usage.Error{Err: errors.New("report needs at least one run file: tritontop report RUN.jsonl... -o report.html")}
	}
	if out == "" {
		return usage.Error{Err: errors.New("report needs -o FILE.html, the page to write (-o - writes it to standard output)")}
	}
	if err := outfile.CheckNew("-o", out, force); err != nil {
		return usage.Error{Err: err}
	}
	for _, f := range files {
		if a, b := outfile.Abs(f), outfile.Abs(out); a == b {
			return usage.Error{Err: fmt.Errorf("-o %s is also a run file to read: give the report its own file", out)}
		}
	}
	names, err := report.RunLabels(files, labels)
	if err != nil {
		return err
	}
	var runs []report.HTMLRun
	for i, f := range files {
		run, err := report.ReadRun(f, stderr)
		if err != nil {
			return err
		}
		runs = append(runs, report.HTMLRun{Label: names[i], File: f, Run: run})
	}
	// The page is made in memory first, so that an error leaves no
	// half-written file behind.
	var page bytes.Buffer
	if err := report.WriteHTML(&page, runs, report.HTMLOptions{Title: title, Generator: "tritontop " + session.Version}); err != nil {
		return err
	}
	if out == "-" {
		_, err := stdout.Write(page.Bytes())
		return err
	}
	if err := outfile.Write("-o", out, force, func(w io.Writer) error {
		_, err := w.Write(page.Bytes())
		return err
	}); err != nil {
		return usage.Error{Err: err}
	}
	fmt.Fprintf(stdout, "wrote %s (%d KB, %d run%s)\n", out, (page.Len()+1023)/1024, len(runs), plural(len(runs)))
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
