package svgplot

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files testdata/*.svg from the current output")

// chart is what the golden test renders.
type chart interface{ WriteSVG(io.Writer) error }

// TestGolden renders each fixture and compares it byte for byte with
// testdata/NAME.svg; go test -update rewrites the files, to be read (and
// looked at in a browser) before they are committed.
func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		chart chart
	}{
		{"latency", sweepLatency()},
		{"server", serverTime()},
		{"gpu", gpuShort()},
		{"curve", latencyCurve()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.chart.WriteSVG(&buf); err != nil {
				t.Fatalf("WriteSVG: %v", err)
			}
			path := filepath.Join("testdata", tc.name+".svg")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				got := filepath.Join(t.TempDir(), tc.name+".svg")
				_ = os.WriteFile(got, buf.Bytes(), 0o644)
				t.Errorf("%s differs from the output (written to %s); if the change is meant, run go test -update and look at the file", path, got)
			}
		})
	}
}
