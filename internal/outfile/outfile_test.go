package outfile_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/outfile"
)

// TestWriteKeepsWhatAppeared: without force, a file that appeared at the
// path during the run is kept, the output is not written, and no temporary
// file is left; a failed write leaves nothing either.
func TestWriteKeepsWhatAppeared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.csv")
	err := outfile.Write("-f", p, false, func(w io.Writer) error {
		// Another process creates the file while the output is written.
		if err := os.WriteFile(p, []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := io.WriteString(w, "ours")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "appeared during the run") {
		t.Fatalf("got %v, want the file kept", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "theirs" {
		t.Errorf("the file that appeared holds %q", b)
	}
	if err := outfile.Write("-f", filepath.Join(dir, "b.csv"), false, func(io.Writer) error { return io.ErrShortWrite }); err != io.ErrShortWrite {
		t.Errorf("a failed write: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want the one that appeared", len(entries))
	}
}

// TestCheckAll: an existing file is refused unless force; two outputs on
// one path (also spelled two ways, or through a symlink) are refused even
// with force; a missing directory, or a directory as the path, is refused.
func TestCheckAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.txt")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(existing, link); err != nil {
		t.Fatal(err)
	}
	fresh := func(name string) string { return filepath.Join(dir, name) }
	n := func(flag, path string) outfile.Named { return outfile.Named{Flag: flag, Path: path} }
	for _, c := range []struct {
		name  string
		outs  []outfile.Named
		force bool
		want  string
	}{
		{"exists", []outfile.Named{n("-f", existing)}, false, "-f " + existing + " already exists"},
		{"new", []outfile.Named{n("-f", fresh("new.csv")), n("--record", "-")}, false, ""},
		{"exists, forced", []outfile.Named{n("-f", existing)}, true, ""},
		{"one path twice", []outfile.Named{n("--record", fresh("x")), n("-f", fresh("x"))}, false, "both write"},
		{"spelled two ways", []outfile.Named{n("--record", fresh("w")), n("-f", dir+"/./w")}, false, "both write"},
		{"standard output twice", []outfile.Named{n("--record", "-"), n("-f", "-")}, false, "standard output"},
		{"missing directory", []outfile.Named{n("-f", filepath.Join(dir, "no", "such.csv"))}, false, "there is no directory"},
		{"a directory", []outfile.Named{n("-f", dir)}, false, "is a directory"},
		{"a symlink to an existing file", []outfile.Named{n("-f", link)}, false, "already exists"},
		{"forced, still one path twice", []outfile.Named{n("--record", existing), n("-f", existing)}, true, "both write"},
		{"forced, a symlink and its target", []outfile.Named{n("--record", existing), n("-f", link)}, true, "one file under two names"},
	} {
		err := outfile.CheckAll(c.outs, c.force)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
		if b, _ := os.ReadFile(existing); string(b) != "keep me" {
			t.Fatalf("%s: the existing file was changed: %q", c.name, b)
		}
	}
}
