package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tritontop/tritontop/internal/outfile"
)

// TestOutputFileRule: every output flag refuses an existing file unless
// --force, two outputs on one path are refused, and a missing directory or
// a directory as the path is a usage error, all before anything runs (no
// server is listening at -u, so a run that started would fail otherwise).
func TestOutputFileRule(t *testing.T) {
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
	base := []string{"-m", "simple", "-u", "127.0.0.1:1", "--headless", "--duration", "1s", "--connect-timeout", "100ms"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"-f exists", []string{"-f", existing}, "-f " + existing + " already exists"},
		{"--record exists", []string{"--record", existing}, "--record " + existing + " already exists"},
		{"--cpuprofile exists", []string{"--cpuprofile", existing}, "--cpuprofile " + existing + " already exists"},
		{"--record and -f on one path", []string{"--record", fresh("x"), "-f", fresh("x")}, "both write"},
		{"--record and --cpuprofile on one path", []string{"--record", fresh("y"), "--cpuprofile", fresh("y")}, "both write"},
		{"-f and --cpuprofile on one path", []string{"-f", fresh("z"), "--cpuprofile", fresh("z")}, "both write"},
		{"one path spelled two ways", []string{"--record", fresh("w"), "-f", dir + "/./w"}, "both write"},
		{"--record - and -f -", []string{"--record", "-", "-f", "-"}, "standard output"},
		{"-f in a missing directory", []string{"-f", filepath.Join(dir, "no", "such.csv")}, "there is no directory"},
		{"-f is a directory", []string{"-f", dir}, "is a directory"},
		{"--record is a directory", []string{"--record", dir}, "is a directory"},
		{"a symlink to an existing file", []string{"-f", link}, "already exists"},
		{"--force still refuses two outputs on one path", []string{"--force", "--record", existing, "-f", existing}, "both write"},
		{"--force on a symlink and its target", []string{"--force", "--record", existing, "-f", link}, "one file under two names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(append(base, tc.args...)...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != 2 || !strings.Contains(first, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if b, _ := os.ReadFile(existing); string(b) != "keep me" {
				t.Fatalf("the existing file was changed: %q", b)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"report -o exists", []string{"report", "-o", existing, "../../record/testdata/v1.jsonl"}, "-o " + existing + " already exists"},
		{"report -o is a run file", []string{"report", "--force", "-o", existing, existing}, "also a run file"},
		{"replay -f exists", []string{"replay", "-f", existing, "../../record/testdata/v1.jsonl"}, "already exists"},
		{"sim --cpuprofile exists", []string{"sim", "--cpuprofile", existing, "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"}, "already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if b, _ := os.ReadFile(existing); string(b) != "keep me" {
				t.Fatalf("the existing file was changed: %q", b)
			}
		})
	}
}

// TestOutputFilesWholeAnd0644 writes every kind of output under umask 0
// and umask 077: each file is 0644, --force replaces an existing one, and
// no temporary file is left beside them.
func TestOutputFilesWholeAnd0644(t *testing.T) {
	srv := startSim(t)
	for _, mask := range []int{0, 0o077} {
		old := syscall.Umask(mask)
		dir := t.TempDir()
		run, csv, prof, html := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv"), filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "r.html")
		// The CSV exists: --force replaces it.
		if err := os.WriteFile(csv, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--concurrency", "1", "--duration", "1s", "--headless",
			"--record", run, "-f", csv, "--cpuprofile", prof, "--force")
		if code != 0 {
			syscall.Umask(old)
			t.Fatalf("umask %o: exit %d: %s", mask, code, stderr)
		}
		if code, _, stderr := runCLI("report", "-o", html, run); code != 0 {
			syscall.Umask(old)
			t.Fatalf("report: exit %d: %s", code, stderr)
		}
		replayCSV := filepath.Join(dir, "replay.csv")
		if code, _, stderr := runCLI("replay", "-f", replayCSV, run); code != 0 {
			syscall.Umask(old)
			t.Fatalf("replay -f: exit %d: %s", code, stderr)
		}
		syscall.Umask(old)
		for _, p := range []string{run, csv, prof, html, replayCSV} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("umask %o: %v", mask, err)
			}
			if fi.Mode().Perm() != 0o644 || fi.Size() == 0 {
				t.Errorf("umask %o: %s is %v, %d bytes; want 0644 and not empty", mask, filepath.Base(p), fi.Mode().Perm(), fi.Size())
			}
		}
		if b, _ := os.ReadFile(csv); strings.HasPrefix(string(b), "old") {
			t.Errorf("--force did not replace the CSV")
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 5 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("umask %o: files left: %v; want the five outputs only", mask, names)
		}
	}
}

// TestWriteOutputFileKeepsWhatAppeared: without --force, a file that
// appeared at the path during the run is kept, the output is not written,
// and no temporary file is left; a failed write leaves nothing either.
func TestWriteOutputFileKeepsWhatAppeared(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	err := outfile.Write("-f", p, false, func(w io.Writer) error {
		if err := os.WriteFile(p, []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := io.WriteString(w, "ours")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "appeared during the run") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "theirs" {
		t.Fatalf("the file that appeared was replaced: %q", b)
	}
	if err := outfile.Write("-f", filepath.Join(dir, "b.csv"), false, func(io.Writer) error { return io.ErrShortWrite }); err != io.ErrShortWrite {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files left, want only out.csv", len(entries))
	}
}
