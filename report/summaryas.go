package report

import (
	"io"

	"github.com/tritontop/tritontop/record"
)

// WriteSummaryAs writes a run's summary as text, JSON or Markdown.
func WriteSummaryAs(w io.Writer, sum record.Summary, jsonOut, markdown bool) error {
	switch {
	case jsonOut:
		return WriteJSON(w, sum)
	case markdown:
		return WriteMarkdown(w, sum)
	}
	return WriteText(w, sum)
}
