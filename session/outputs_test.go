package session_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// TestOutputFileRule: every output of a run refuses an existing file
// unless Force, two outputs on one path are refused, and a missing
// directory or a directory as the path is a usage error, all before
// anything runs (nothing listens at the run's URL, so a run that started
// would fail otherwise); replay's -f too.
func TestOutputFileRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := writeFile(t, dir, "old.txt", "keep me")
	fresh := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		name string
		edit func(*session.Config)
		want string
	}{
		{"-f exists", func(c *session.Config) { c.CSV = existing }, "-f " + existing + " already exists"},
		{"--record exists", func(c *session.Config) { c.Record = existing }, "--record " + existing + " already exists"},
		{"--cpuprofile exists", func(c *session.Config) { c.CPUProfile = existing }, "--cpuprofile " + existing + " already exists"},
		{"--record and -f on one path", func(c *session.Config) { c.Record, c.CSV = fresh("x"), fresh("x") }, "both write"},
		{"--record and --cpuprofile on one path", func(c *session.Config) { c.Record, c.CPUProfile = fresh("y"), fresh("y") }, "both write"},
		{"--record - and -f -", func(c *session.Config) { c.Record, c.CSV = "-", "-" }, "standard output"},
		{"-f in a missing directory", func(c *session.Config) { c.CSV = filepath.Join(dir, "no", "such.csv") }, "there is no directory"},
		{"--record is a directory", func(c *session.Config) { c.Record = dir }, "is a directory"},
		{"--force still refuses two outputs on one path", func(c *session.Config) { c.Force, c.Record, c.CSV = true, existing, existing }, "both write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := session.Defaults()
			c.URL, c.Model, c.Headless, c.Duration, c.ConnectTimeout = "127.0.0.1:1", "simple", true, time.Second, 100*time.Millisecond
			tc.edit(&c)
			err, _, _ := runConfig(t, c)
			wantRefused(t, err, tc.want)
			if b, _ := os.ReadFile(existing); string(b) != "keep me" {
				t.Fatalf("the existing file was changed: %q", b)
			}
		})
	}
	err := session.Replay(context.Background(), session.ReplayConfig{File: "../record/testdata/v1.jsonl", CSV: existing}, &bytes.Buffer{}, &bytes.Buffer{})
	wantRefused(t, err, "already exists")
}

// TestOutputFilesWholeAnd0644 writes every kind of output under umask 0
// and umask 077: each file is 0644, Force replaces an existing one, and no
// temporary file is left beside them. (Not parallel: the umask is the
// process's.)
func TestOutputFilesWholeAnd0644(t *testing.T) {
	srv := startSim(t)
	for _, mask := range []int{0, 0o077} {
		old := syscall.Umask(mask)
		dir := t.TempDir()
		run, csv, prof, html := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.csv"), filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "r.html")
		// The CSV exists: Force replaces it.
		if err := os.WriteFile(csv, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		c := quickConfig(srv, "simple")
		c.Concurrency, c.Duration, c.Record, c.CSV, c.CPUProfile, c.Force = 1, 300*time.Millisecond, run, csv, prof, true
		if err, _, stderr := runConfig(t, c); err != nil {
			syscall.Umask(old)
			t.Fatalf("umask %o: %v: %s", mask, err, stderr)
		}
		if err := report.WriteHTMLFiles([]string{run}, nil, html, "", "tritontop", false, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			syscall.Umask(old)
			t.Fatalf("report: %v", err)
		}
		replayCSV := filepath.Join(dir, "replay.csv")
		if err := session.Replay(context.Background(), session.ReplayConfig{File: run, CSV: replayCSV}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			syscall.Umask(old)
			t.Fatalf("replay -f: %v", err)
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
			t.Errorf("Force did not replace the CSV")
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 5 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("umask %o: files left: %v; want the five outputs only", mask, names)
		}
	}
}

// TestReplayExports: without a terminal, replay gives the summary of any
// record (with its steps and what the search found), its CSV, JSON and
// Markdown.
func TestReplayExports(t *testing.T) {
	t.Parallel()
	const td = "../report/testdata/"
	replay := func(c session.ReplayConfig) (string, error) {
		var stdout bytes.Buffer
		err := session.Replay(context.Background(), c, &stdout, &bytes.Buffer{})
		return stdout.String(), err
	}
	sweep := td + "sweep.jsonl"
	text, err := replay(session.ReplayConfig{File: sweep, Speed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "8 load steps") || !strings.Contains(text, "Highest level meeting p99 < 80.0 ms: concurrency 49") {
		t.Errorf("summary:\n%s", text)
	}
	csvPath := filepath.Join(t.TempDir(), "out.csv")
	js, err := replay(session.ReplayConfig{File: sweep, CSV: csvPath, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(js), &sum); err != nil || len(sum.Steps) != 8 || sum.Search == nil || sum.Search.Knee != 2 {
		t.Errorf("JSON summary: %v, %d steps, search %+v", err, len(sum.Steps), sum.Search)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		rows = append(rows, sc.Text())
	}
	if len(rows) != 9 || !strings.HasPrefix(rows[0], "Concurrency,Inferences/Second,") || !strings.HasPrefix(rows[1], "1,") || !strings.HasPrefix(rows[8], "57,") {
		t.Errorf("CSV rows %d: %q … %q", len(rows), rows[0], rows[len(rows)-1])
	}
	if md, err := replay(session.ReplayConfig{File: td + "c1.jsonl", Markdown: true}); err != nil || !strings.HasPrefix(md, "### resnet50 on ") || !strings.Contains(md, "| Throughput | ") {
		t.Errorf("Markdown: %v:\n%s", err, md)
	}
	if out, err := replay(session.ReplayConfig{File: td + "c1.jsonl", CSV: "-"}); err != nil || !strings.HasPrefix(out, "Concurrency,") || strings.Count(out, "\n") != 2 {
		t.Errorf("-f -: %v:\n%s", err, out)
	}
	_, err = replay(session.ReplayConfig{File: td + "c1.jsonl", CSV: filepath.Join(t.TempDir(), "no", "x.csv")})
	wantRefused(t, err, "cannot write -f")
	_, err = replay(session.ReplayConfig{File: td + "c1.jsonl", JSON: true, Markdown: true})
	wantRefused(t, err, "--json or --markdown")
	_, err = replay(session.ReplayConfig{File: td + "c1.jsonl", Speed: -1})
	wantRefused(t, err, "--speed -1")
}
