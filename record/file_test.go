package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/stats"
)

// writeRun records snaps to a new run file and returns its path.
func writeRun(t *testing.T, snaps []stats.Snapshot, closeIt bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if err := w.WriteSnapshot(s); err != nil {
			t.Fatal(err)
		}
	}
	if closeIt {
		if err := w.Close(testSummary(snaps)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func threeTicks(t *testing.T) []stats.Snapshot {
	return withRun([]stats.Snapshot{
		tick(t, 1, 1, 100, 1000, [5]int64{900, 100, 50, 700, 20}),
		tick(t, 2, 1, 100, 1200, [5]int64{1000, 150, 50, 750, 20}),
		tick(t, 3, 2, 150, 2000, [5]int64{1800, 900, 60, 800, 20}),
	})
}

func TestRoundTrip(t *testing.T) {
	snaps := threeTicks(t)
	path := writeRun(t, snaps, true)

	run, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Truncated {
		t.Error("Truncated set on a complete file")
	}
	want := testHeader()
	want.Schema = 1 // a run of one model is still written in schema 1
	want.Args = RedactArgs(want.Args)
	if !reflect.DeepEqual(run.Header, want) {
		t.Errorf("header:\n got %+v\nwant %+v", run.Header, want)
	}
	if !reflect.DeepEqual(run.Snapshots, snaps) {
		t.Errorf("snapshots differ after round trip:\n got %+v\nwant %+v", run.Snapshots, snaps)
	}
	if run.Summary == nil {
		t.Fatal("summary missing")
	}
	if wantSum := testSummary(snaps); !reflect.DeepEqual(*run.Summary, wantSum) {
		t.Errorf("summary:\n got %+v\nwant %+v", *run.Summary, wantSum)
	}

	// The file itself: one typed JSON object per line, header first.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(raw, []byte("\n")) {
		t.Error("file does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	wantTypes := []string{"header", "snapshot", "snapshot", "snapshot", "summary"}
	if len(lines) != len(wantTypes) {
		t.Fatalf("%d lines, want %d", len(lines), len(wantTypes))
	}
	for i, l := range lines {
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &probe); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if probe.Type != wantTypes[i] {
			t.Errorf("line %d type %q, want %q", i+1, probe.Type, wantTypes[i])
		}
	}
	if strings.Contains(lines[0], "abc123") {
		t.Error("header leaks the Authorization token")
	}
	if !strings.Contains(lines[1], `"seq":1`) || !strings.Contains(lines[1], `"elapsed_ns":1000000000`) {
		t.Errorf("snapshot fields not inline: %s", lines[1][:120])
	}
}

func TestReaderStreams(t *testing.T) {
	snaps := threeTicks(t)
	r, err := Open(writeRun(t, snaps, true))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().Model.Name != "resnet50" {
		t.Errorf("header model %q", r.Header().Model.Name)
	}
	for i := range snaps {
		s, err := r.Next()
		if err != nil {
			t.Fatalf("Next %d: %v", i, err)
		}
		if s.Seq != i+1 {
			t.Errorf("Next %d: seq %d", i, s.Seq)
		}
		if r.Summary() != nil {
			t.Error("summary before the end")
		}
	}
	if _, err := r.Next(); err == nil || err.Error() != "EOF" {
		t.Fatalf("after last snapshot: %v, want EOF", err)
	}
	if r.Summary() == nil || r.Summary().Ticks != 3 {
		t.Errorf("summary after EOF: %+v", r.Summary())
	}
}

func TestReadTruncatedLastLine(t *testing.T) {
	snaps := threeTicks(t)
	for _, tc := range []struct {
		name      string
		closeIt   bool
		cut       int // bytes removed from the end
		tail      string
		wantSnaps int
	}{
		{name: "mid snapshot", closeIt: false, cut: 40, wantSnaps: 2},
		{name: "mid summary", closeIt: true, cut: 25, wantSnaps: 3},
		{name: "only the newline", closeIt: false, cut: 1, wantSnaps: 3},
		{name: "zeros after crash", closeIt: false, cut: 40, tail: "\x00\x00\x00\x00", wantSnaps: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeRun(t, snaps, tc.closeIt)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()-int64(tc.cut)); err != nil {
				t.Fatal(err)
			}
			if tc.tail != "" {
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(tc.tail)
				f.Close()
			}
			run, err := ReadAll(path)
			if err != nil {
				t.Fatalf("ReadAll: %v", err)
			}
			if len(run.Snapshots) != tc.wantSnaps {
				t.Errorf("%d snapshots, want %d", len(run.Snapshots), tc.wantSnaps)
			}
			for i, s := range run.Snapshots {
				if !reflect.DeepEqual(s, snaps[i]) {
					t.Errorf("snapshot %d differs", i)
				}
			}
			// Cutting only the newline leaves a complete last line.
			wantTrunc := tc.cut > 1
			if run.Truncated != wantTrunc {
				t.Errorf("Truncated = %v, want %v", run.Truncated, wantTrunc)
			}
			if run.Summary != nil {
				t.Error("summary read from a cut summary line")
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	good := func(t *testing.T) []string {
		raw, err := os.ReadFile(writeRun(t, threeTicks(t), true))
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	}
	for _, tc := range []struct {
		name    string
		edit    func([]string) []string
		wantErr string
	}{
		{"garbage in the middle", func(l []string) []string { l[2] = "{not json\n"; return l }, "line 3: not a JSON line"},
		{"second header", func(l []string) []string { return append(l[:2], append([]string{l[0]}, l[2:]...)...) }, "line 3: a second header"},
		{"newer schema", func(l []string) []string {
			l[0] = strings.Replace(l[0], `"schema":1`, `"schema":3`, 1)
			return l
		}, "schema 3, newer than this tritontop reads (2)"},
		{"no schema", func(l []string) []string {
			l[0] = strings.Replace(l[0], `"schema":1,`, ``, 1)
			return l
		}, "line 1: header has no schema version"},
		{"not a run file", func(l []string) []string { return []string{"hello\n", "world\n"} }, "not a tritontop run file"},
		{"snapshot first", func(l []string) []string { return l[1:] }, "line 1 is not a header line"},
		{"empty", func(l []string) []string { return nil }, "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(tc.edit(good(t)), "")), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadAll(path)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadAll error %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestReadSkipsUnknownLineTypes(t *testing.T) {
	path := writeRun(t, threeTicks(t), false)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"event","what":"load changed"}` + "\n")
	f.Close()
	run, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Snapshots) != 3 || run.Truncated {
		t.Errorf("%d snapshots, truncated %v; want 3, false", len(run.Snapshots), run.Truncated)
	}
}

func TestCreateRefusesExistingRun(t *testing.T) {
	path := writeRun(t, threeTicks(t), true)
	before, _ := os.ReadFile(path)
	if _, err := Create(path, testHeader()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("Create over a run file: %v, want an 'already exists' error", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("refused Create changed the file")
	}
}

func TestWriteAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Summary{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Summary{}); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.WriteSnapshot(stats.Snapshot{Seq: 1}); err == nil {
		t.Error("WriteSnapshot after Close succeeded")
	}
}

// TestSeveralModelsWriteSchema2 records a run over two models: its header
// says schema 2 (a schema-1 reader would take the aggregate for one model's
// numbers, and refuses it), and the models of the header, the snapshots and
// the summary read back as written.
func TestSeveralModelsWriteSchema2(t *testing.T) {
	snaps := threeTicks(t)
	for i := range snaps {
		a := snaps[i]
		snaps[i].Models = []stats.Model{
			{Name: "resnet50", Load: a.Load, Tick: a.Tick, Window: a.Window, Run: a.Run, Server: a.Server, Histogram: a.Histogram},
			{Name: "bert", Version: "1", Load: stats.Load{Mode: "rate", Rate: 200, Distribution: "poisson"}},
		}
	}
	h := testHeader()
	h.Model.Name = "resnet50,bert"
	first := snaps[0].Models[1].Load
	h.Models = []ModelInfo{{Name: "resnet50", Load: &snaps[0].Load}, {Name: "bert", Version: "1", Load: &first}}
	path := filepath.Join(t.TempDir(), "two.jsonl")
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if err := w.WriteSnapshot(s); err != nil {
			t.Fatal(err)
		}
	}
	sum := testSummary(snaps)
	sum.Models = []ModelSummary{{Name: "resnet50", Client: snaps[0].Run}, {Name: "bert", Version: "1", Load: first}}
	if err := w.Close(sum); err != nil {
		t.Fatal(err)
	}
	run, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Header.Schema != 2 || !reflect.DeepEqual(run.Header.Models, h.Models) {
		t.Errorf("header: schema %d, models %+v", run.Header.Schema, run.Header.Models)
	}
	if !reflect.DeepEqual(run.Snapshots, snaps) {
		t.Errorf("snapshots differ after round trip:\n got %+v\nwant %+v", run.Snapshots, snaps)
	}
	if run.Summary == nil || !reflect.DeepEqual(run.Summary.Models, sum.Models) {
		t.Errorf("summary's models: %+v", run.Summary)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(b), "\n"); !strings.Contains(first, `"schema":2`) {
		t.Errorf("header line: %s", first)
	}
}
