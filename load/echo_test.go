package load

import (
	"strings"
	"testing"
)

// TestUserValuesQuotedBounded: an error that quotes a value the user gave
// quotes at most the start of a 10 MB one, with its length: one line under
// 1 KiB.
func TestUserValuesQuotedBounded(t *testing.T) {
	huge := strings.Repeat("A", 10<<20)
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"stages", func() error { _, err := ParsePlan(huge); return err }},
		{"stage duration", func() error { _, err := ParsePlan(huge + ":10/s"); return err }},
		{"stage target", func() error { _, err := ParsePlan("10s:" + huge); return err }},
		{"mode", func() error { _, err := NewPlan(Mode(huge), nil); return err }},
	} {
		err := tc.err()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if msg := err.Error(); len(msg) > 1<<10 || strings.Contains(msg, "\n") || !strings.Contains(msg, "bytes in all)") {
			t.Errorf("%s: %d bytes %.200q; want one line under 1 KiB quoting the value cut, with its length", tc.name, len(msg), msg)
		}
	}
}
