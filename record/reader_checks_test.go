package record

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// TestReaderRefusesWhatItCannotTrust: a header with a negative schema says
// so (not "no schema version"), and tick numbers that repeat or go back
// are an error naming the line, not silently read as one run.
func TestReaderRefusesWhatItCannotTrust(t *testing.T) {
	v1, err := os.ReadFile("testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(v1, []byte("\n"))
	var snaps [][]byte
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"type":"snapshot"`)) {
			snaps = append(snaps, l)
		}
	}
	if len(snaps) < 2 {
		t.Fatalf("testdata/v1.jsonl has %d snapshot lines", len(snaps))
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"negative schema", bytes.Replace(v1, []byte(`"schema":1`), []byte(`"schema":-1`), 1), "schema -1 is not a run-file schema version"},
		{"schema zero", bytes.Replace(v1, []byte(`"schema":1`), []byte(`"schema":0`), 1), "schema 0 is not"},
		{"no schema", bytes.Replace(v1, []byte(`"schema":1,`), nil, 1), "no schema version"},
		{"a tick repeated", append(append(append([]byte{}, lines[0]...), snaps[0]...), snaps[0]...), "comes after tick"},
		{"ticks going back", append(append(append([]byte{}, lines[0]...), snaps[1]...), snaps[0]...), "comes after tick"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), "x.jsonl")
			for err == nil {
				_, err = r.Next()
			}
			if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
		})
	}
}
