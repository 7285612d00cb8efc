package record

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/stats"
)

// FuzzNewReader reads arbitrary bytes as a run file the way replay and
// report do: the header, every line to the end, and each snapshot's
// histograms decoded. Whatever the bytes, the answer is a run or a
// one-line error, never a panic.
func FuzzNewReader(f *testing.F) {
	v1, err := os.ReadFile("testdata/v1.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(v1, []byte("\n"))
	f.Add(v1)
	f.Add(lines[0])                                      // header only
	f.Add(v1[:len(v1)-40])                               // torn summary line
	f.Add(append(bytes.Clone(v1[:len(v1)-40]), 0, 0, 0)) // torn, then NULs
	f.Add(append(bytes.Clone(lines[0]), lines[0]...))    // two headers
	f.Add(bytes.Replace(v1, []byte(`"schema":1`), []byte(`"schema":2`), 1))
	f.Add(bytes.Replace(v1, []byte(`"histogram":"`), []byte(`"histogram":"HISTFAAAA`), 1))
	f.Add(append(bytes.Clone(lines[0]), []byte(`{"type":"step"}`+"\n"+`{"type":"snapshot","histogram":"AAAA"}`+"\n")...))
	f.Add([]byte(""))
	f.Add([]byte("\n\n \t\n"))
	f.Add([]byte(`{"type":"header"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			checkReadError(t, err)
			return
		}
		for {
			s, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				checkReadError(t, err)
				return
			}
			for _, enc := range []string{s.Histogram, s.ScheduledHistogram} {
				if h, err := stats.DecodeHistogram(enc); err == nil {
					_ = stats.LatencyFromHistogram(h)
				}
			}
		}
		_ = r.Summary()
		_ = r.Steps()
	})
}

func checkReadError(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); !strings.HasPrefix(msg, "record: ") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line starting with \"record: \"", msg)
	}
}
