package funclen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCmdLines is the longest a function of cmd/ may be.
const maxCmdLines = 60

// TestCmdFunctionsShort fails for any non-test function in cmd/ (every
// directory under it) over 60 lines: split it into named steps, or move
// its logic into the package it belongs to.
func TestCmdFunctionsShort(t *testing.T) {
	long, err := Over(filepath.Join("..", "..", "cmd"), maxCmdLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s (at most %d)", f, maxCmdLines)
	}
}

// maxCmdTotal is the most lines cmd/'s non-test Go files may hold in all:
// the command line parses flags, prints help and picks exit codes; what a
// flag means lives in the library packages.
const maxCmdTotal = 2500

// TestCmdThin fails when cmd/'s non-test Go files hold more than
// maxCmdTotal lines.
func TestCmdThin(t *testing.T) {
	total := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "cmd"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		total += strings.Count(string(b), "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > maxCmdTotal {
		t.Errorf("cmd/ holds %d lines of Go outside its tests, at most %d: move what a flag means into its package", total, maxCmdTotal)
	}
	t.Logf("cmd/: %d lines outside tests", total)
}

// TestOverCounts checks the measure on files written for it: a function of
// exactly the limit passes, one line more is reported, a test file's and a
// testdata directory's are not, and a method is named with its receiver.
func TestOverCounts(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		// "func name() {" and "}" are two of the lines.
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	write := func(path, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a", "a.go"), "package a\n\ntype T struct{}\n\n"+body("fits", 10)+body("long", 11)+
		"func (*T) method() {\n"+strings.Repeat("\t_ = 0\n", 10)+"}\n")
	write(filepath.Join(dir, "a", "a_test.go"), "package a\n\n"+body("testLong", 50))
	write(filepath.Join(dir, "a", "testdata", "x.go"), "package x\n\n"+body("dataLong", 50))
	long, err := Over(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range long {
		got = append(got, f.Name+"="+strings.TrimPrefix(f.String(), f.File+": "))
	}
	want := []string{"long=long is 11 lines", "(T).method=(T).method is 12 lines"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("got %q, want %q", got, want)
	}
	write(filepath.Join(dir, "b", "bad.go"), "package b\nfunc {")
	if _, err := Over(dir, 10); err == nil || !strings.Contains(err.Error(), "bad.go") {
		t.Errorf("a file that does not parse: got %v, want an error naming it", err)
	}
}
