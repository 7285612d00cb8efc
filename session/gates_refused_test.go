package session_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
)

// TestThresholdFlagsRefused: a bad threshold, a per-model one in a
// --load-file, or a gate flag without a threshold is a usage error (exit 2)
// in one line naming the bad part, before anything runs (the server's
// address takes no connection).
func TestThresholdFlagsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lf := writeFile(t, dir, "models.yaml", "models:\n  - model: resnet50\n    thresholds: [\"p99<fast\"]\n")
	for _, tc := range []struct {
		name string
		set  func(c *session.Config)
		want string
	}{
		{"unknown metric", func(c *session.Config) { c.Gates.Thresholds = []string{"p98<1ms"} }, `unknown metric "p98"`},
		{"limit without unit", func(c *session.Config) { c.Gates.Thresholds = []string{"p99<100"} }, `limit "100" has no unit`},
		{"load file threshold", func(c *session.Config) { c.Model, c.LoadFile = "", lf }, `model resnet50: bad threshold "p99<fast"`},
		{"abort without threshold", func(c *session.Config) { c.Gates.AbortOnFail = true }, "--abort-on-fail needs a --threshold"},
		{"per-step without threshold", func(c *session.Config) { c.Gates.PerStep = true }, "--threshold-per-step needs a --threshold"},
		{"junit without threshold", func(c *session.Config) { c.Gates.JUnit = filepath.Join(dir, "j.xml") }, "--junit writes the thresholds' checks"},
		{"junit a directory", func(c *session.Config) {
			c.Gates.Thresholds, c.Gates.JUnit = []string{"p99<1s"}, dir
		}, "is a directory"},
		{"junit in no directory", func(c *session.Config) {
			c.Gates.Thresholds, c.Gates.JUnit = []string{"p99<1s"}, filepath.Join(dir, "no", "j.xml")
		}, "there is no directory"},
		{"repeat 0", func(c *session.Config) {
			c.Gates.Repeat, c.Given = 0, map[string]bool{"repeat": true, "u": true}
		}, "--repeat 0 is out of range"},
		{"repeat 500", func(c *session.Config) { c.Gates.Repeat = 500 }, "--repeat 500 is out of range"},
		{"repeat with -f", func(c *session.Config) { c.Gates.Repeat, c.CSV = 2, filepath.Join(dir, "out.csv") }, "--repeat and -f"},
		{"repeat to stdout", func(c *session.Config) { c.Gates.Repeat, c.Record = 2, "-" }, "give --record FILE, not -"},
		{"demo repeat", func(c *session.Config) {
			c.Model, c.Demo, c.Gates.Repeat = "", &session.DemoConfig{}, 2
		}, "tritontop demo runs once"},
		{"plan repeat 0", func(c *session.Config) {
			pc := session.DefaultPlan()
			pc.TargetRate, pc.Budget.Repeat = 10, 0
			c.Plan, c.SLO.Specs = &pc, []string{"p99:100ms"}
		}, "--repeat 0: give how many times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := session.Defaults()
			c.Model, c.URL, c.ConnectTimeout, c.Headless = model, "127.0.0.1:1", 100*time.Millisecond, true
			tc.set(&c)
			err, _, _ := runConfig(t, c)
			wantRefused(t, err, tc.want)
		})
	}
}
