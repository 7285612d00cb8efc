package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocateSaysWhatIsMissing: without a Triton folder, without a part of
// it, or without a runtime library of its server, the test's skip is one
// line naming what is missing. (t.Setenv: not parallel.)
func TestLocateSaysWhatIsMissing(t *testing.T) {
	real, err := locate()
	if err != nil {
		t.Skip(err.Error())
	}
	empty := t.TempDir()
	// A folder whose server has no lib/ beside it: its loader cannot find
	// libtritonserver.so (RUNPATH $ORIGIN/../lib).
	noLib := t.TempDir()
	for _, d := range []string{"bin", "backends", "models"} {
		if err := os.Mkdir(filepath.Join(noLib, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.ReadFile(real.ServerBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noLib, "bin", "tritonserver"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{filepath.Join(empty, "nowhere"), []string{DirEnv + "=", "nowhere", "is not there"}},
		{empty, []string{"no tritonserver in the Triton folder " + empty, DirEnv}},
		{noLib, []string{"runtime libraries are missing: libtritonserver.so", "README.md"}},
	} {
		t.Setenv(DirEnv, c.dir)
		_, err := locate()
		if err == nil {
			t.Errorf("%s: located", c.dir)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: the skip is more than one line: %q", c.dir, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", c.dir, msg, w)
			}
		}
	}
}
