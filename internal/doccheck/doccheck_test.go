package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocLinks: every relative link in README.md and docs/*.md resolves,
// to a file and, after a #, to a heading of it.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md", "ARCHITECTURE.md", "BENCHMARKS.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d files checked", len(files))
}

// TestSlug follows GitHub's anchors for headings like the project's.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Stateful (sequence) models":           "stateful-sequence-models",
		"Load from many machines (Kubernetes)": "load-from-many-machines-kubernetes",
		"`tritontop plan` in CI":               "tritontop-plan-in-ci",
		"Set up":                               "set-up",
		"A [link](other.md) in it":             "a-link-in-it",
		"Perf_analyzer's flags → tritontop's":  "perf_analyzers-flags--tritontops",
		"Ünïcode stays":                        "ünïcode-stays",
		"1. Numbers, and: punctuation! go":     "1-numbers-and-punctuation-go",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckFindsBrokenLinks: a missing file, a missing anchor and a
// repeated heading's second anchor, with links in code left alone.
func TestCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/b.md", "# Title\n\n## Usage\n\n## Usage\n")
	write("a.md", strings.Join([]string{
		"# A",
		"[ok](docs/b.md) [ok too](docs/b.md#usage-1) [self](#a) [web](https://example.com/x.md)",
		"[gone](docs/c.md) [no anchor](docs/b.md#nothing) ![img](docs/missing.png)",
		"`[in code](nowhere.md)`",
		"```",
		"[in a fence](nowhere.md)",
		"```",
		"[third](docs/b.md#usage-2)",
	}, "\n"))
	problems, err := Check(dir, []string{"a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.md:3: docs/c.md: no such file",
		"a.md:3: docs/b.md#nothing: no heading with that anchor",
		"a.md:3: docs/missing.png: no such file",
		"a.md:8: docs/b.md#usage-2: no heading with that anchor",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
