package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tritontop/tritontop/record"
)

var update = flag.Bool("update", false, "rewrite the golden files testdata/*.golden from the current output")

// checkGolden compares got with testdata/name byte for byte; go test
// -update rewrites the file, to be read before it is committed.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		out := filepath.Join(t.TempDir(), name)
		_ = os.WriteFile(out, got, 0o644)
		t.Errorf("%s differs from the output (written to %s); if the change is meant, run go test -update and read the diff", path, out)
	}
}

// frozenRun reads one of the run files in testdata, recorded by tritontop
// against its simulator (see testdata/README.md) and never regenerated.
func frozenRun(t testing.TB, name string) *record.Run {
	t.Helper()
	run, err := record.ReadAll(filepath.Join("testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return run
}
