package kserve

import (
	"go/build"
	"slices"
	"testing"
)

// TestClientAndSimulatorStayApart checks the seam this package exists for:
// the client and the simulator share only kserve (and the generated pb), so
// a wire mismatch between them cannot hide behind shared behaviour. Tests
// are left out: the simulator's tests rightly drive it with the client.
func TestClientAndSimulatorStayApart(t *testing.T) {
	const (
		client    = "github.com/tritontop/tritontop/triton"
		simulator = "github.com/tritontop/tritontop/sim"
		self      = "github.com/tritontop/tritontop/triton/kserve"
	)
	for _, c := range []struct {
		dir       string
		want      string
		forbidden []string
	}{
		{"..", self, []string{simulator}},
		{"../../sim", self, []string{client}},
		{".", "", []string{client, simulator}},
	} {
		pkg, err := build.ImportDir(c.dir, 0)
		if err != nil {
			t.Fatalf("read package in %s: %v", c.dir, err)
		}
		if c.want != "" && !slices.Contains(pkg.Imports, c.want) {
			t.Errorf("package %s does not import %s", pkg.Name, c.want)
		}
		for _, f := range c.forbidden {
			if slices.Contains(pkg.Imports, f) {
				t.Errorf("package %s imports %s: share wire vocabulary through kserve instead", pkg.Name, f)
			}
		}
	}
}
