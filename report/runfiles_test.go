package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/report"
)

// TestRunLabels: a run is named by its --label, else by its file name, with
// as much of its directory as tells it from the other runs; runs that
// cannot be told apart (one file twice, or two equal labels) are refused.
func TestRunLabels(t *testing.T) {
	for _, c := range []struct {
		files, labels []string
		want          []string
		err           string
	}{
		{files: []string{"a.jsonl", "runs/b.jsonl"}, want: []string{"a", "b"}},
		{files: []string{"before/run.jsonl", "after/run.jsonl"}, want: []string{"before/run", "after/run"}},
		{files: []string{"/x/one/run.jsonl", "/y/one/run.jsonl", "other.jsonl"}, want: []string{"x/one/run", "y/one/run", "other"}},
		{files: []string{"./run.jsonl", "sub/run.jsonl"}, want: []string{"run", "sub/run"}},
		{files: []string{"a.jsonl", "b.jsonl"}, labels: []string{"sync", "async"}, want: []string{"sync", "async"}},
		{files: []string{"a.jsonl", "x/b.jsonl"}, labels: []string{"b"}, want: []string{"b", "x/b"}},
		{files: []string{"run.jsonl", "run.jsonl"}, err: `runs 1 and 2 are both labelled "run"`},
		{files: []string{"a.jsonl", "b.jsonl"}, labels: []string{"same", "same"}, err: `both labelled "same"`},
		{files: []string{"a.jsonl"}, labels: []string{" "}, err: "is empty"},
		{files: []string{"a.jsonl"}, labels: []string{"x", "y"}, err: "2 --label flags for 1 run files"},
	} {
		got, err := report.RunLabels(c.files, c.labels)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("report.RunLabels(%q, %q) = %q, %v; want error %q", c.files, c.labels, got, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("report.RunLabels(%q, %q) = %q, %v; want %q", c.files, c.labels, got, err, c.want)
		}
	}
}
