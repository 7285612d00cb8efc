package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
)

// WriteHTMLFiles is tritontop report: one self-contained HTML page about
// the run files, with labels (RunLabels), written to out ("-": stdout) by
// the output-file rule; generator names the program in the page.
func WriteHTMLFiles(files, labels []string, out, title, generator string, force bool, stdout, stderr io.Writer) error {
	if len(files) == 0 {
		return usage.Error{Err: errors.New("report needs at least one run file: tritontop report RUN.jsonl... -o html")}
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
	names, err := RunLabels(files, labels)
	if err != nil {
		return err
	}
	var runs []HTMLRun
	for i, f := range files {
		run, err := ReadRun(f, stderr)
		if err != nil {
			return err
		}
		runs = append(runs, HTMLRun{Label: names[i], File: f, Run: run})
	}
	// The page is made in memory first, so that an error leaves no
	// half-written file behind.
	var page bytes.Buffer
	if err := WriteHTML(&page, runs, HTMLOptions{Title: title, Generator: generator}); err != nil {
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
