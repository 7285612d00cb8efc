package report

import (
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestComparePlanned: runs under a plan compare their planned load beside
// what they achieved, level by level and whole; others have no such row.
func TestComparePlanned(t *testing.T) {
	run := func(planned float64) record.Summary {
		st := record.Step{Load: stats.Load{Mode: load.Rate, Rate: 400, Planned: planned}, Duration: 2 * time.Second,
			Client: stats.ClientStats{Duration: 2 * time.Second, Requests: 400, Successes: 400, Inferences: 400, InferPerS: 200}}
		return record.Summary{Load: st.Load, Client: st.Client, Steps: []record.Step{st}}
	}
	c, err := Compare(run(200), run(100), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "planned load") || !strings.Contains(b.String(), "-50.0%") {
		t.Errorf("no planned load compared:\n%s", b.String())
	}
	c, err = Compare(run(0), run(0), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "planned") {
		t.Errorf("a planned row without a plan:\n%s", b.String())
	}
}
