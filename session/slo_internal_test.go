package session

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/stats"
)

// TestSLOSpecsGoodputAndPlan: several SLOs (--slo repeated, or
// comma-separated, which the command line splits into Specs): a run's
// goodput objectives are the tightest of each kind, and a plan gets every
// SLO, the first as its own and the others after it. Two thresholds on one
// statistic, or an SLO that does not parse, are refused in one line naming
// --slo.
func TestSLOSpecsGoodputAndPlan(t *testing.T) {
	t.Parallel()
	c := Defaults()
	c.Model, c.URL = "llm", "127.0.0.1:1"
	c.SLO.Specs = []string{"ttft-p99:500ms", "itl-p99:40ms", "p99:2s"}
	if err := c.check(io.Discard); err != nil {
		t.Fatal(err)
	}
	want := stats.Goodput{Latency: 2 * time.Second, TTFT: 500 * time.Millisecond, ITL: 40 * time.Millisecond}
	if c.SLO.goodput != want {
		t.Errorf("goodput %+v; want %+v", c.SLO.goodput, want)
	}
	// The plan's settings, as tritontop plan gives them.
	c = Defaults()
	pc := DefaultPlan()
	pc.TargetRate = 10
	c.Model, c.URL, c.Plan = "llm", "127.0.0.1:1", &pc
	c.SLO.Specs = []string{"ttft-p99:500ms", "itl-p99:40ms", "p99:2s"}
	if err := c.check(io.Discard); err != nil {
		t.Fatal(err)
	}
	if pc.parsed.Metric != "ttft" || len(pc.more) != 2 || pc.more[0].Metric != "itl" || pc.more[1].Threshold != 2*time.Second {
		t.Errorf("plan SLOs %+v then %+v", pc.parsed, pc.more)
	}
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{[]string{"ttft-p99:1s", "ttft-p99:2s"}, "both bound ttft-p99"},
		{[]string{"ttft-p99:soon"}, "--slo"},
	} {
		c := Defaults()
		c.Model, c.URL, c.SLO.Specs = "llm", "127.0.0.1:1", tc.specs
		err := Run(context.Background(), c, io.Discard, io.Discard)
		if !usage.Is(err) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--slo %s: %v; want a usage error of one line with %q", strings.Join(tc.specs, ","), err, tc.want)
		}
	}
}
