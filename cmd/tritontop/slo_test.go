package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestSLOFlagsCommaAndRepeat: --slo takes several SLOs in one value,
// separated by commas (spaces around them dropped), and repeated; every one
// reaches the session in order, and the session's refusals of a bad list
// come back as usage errors (exit 2) naming the flag.
func TestSLOFlagsCommaAndRepeat(t *testing.T) {
	t.Parallel()
	c, err := parseLoadFlags("tritontop", []string{"-m", "llm", "--slo", "ttft-p99:500ms, itl-p99:40ms,", "--slo", "p99:2s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ttft-p99:500ms", "itl-p99:40ms", "p99:2s"}; !reflect.DeepEqual(c.SLO.Specs, want) {
		t.Errorf("specs %q, want %q", c.SLO.Specs, want)
	}
	if !c.Given["slo"] {
		t.Error("--slo is not marked as given")
	}
	for _, tc := range []struct{ slo, want string }{
		{"ttft-p99:1s,ttft-p99:2s", "both bound ttft-p99"},
		{"ttft-p99:soon", "--slo"},
	} {
		code, _, stderr := runCLI("-m", "llm", "-u", "127.0.0.1:1", "--slo", tc.slo)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("--slo %s: exit %d, %q; want 2 and one line with %q", tc.slo, code, stderr, tc.want)
		}
	}
}
