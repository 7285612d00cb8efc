package report

import (
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestSearchGoodputUnderSeveralSLOs: a search under several SLOs gives its
// best level's goodput as the requests that met them all at once, where
// the run counted them; under one SLO, or without the count, that SLO's.
func TestSearchGoodputUnderSeveralSLOs(t *testing.T) {
	ttft := record.SLOCheck{Metric: "ttft", Percentile: 99, Threshold: 500 * msec, Pass: true, Goodput: 9}
	itl := record.SLOCheck{Metric: "itl", Percentile: 99, Threshold: 40 * msec, Pass: true}
	step := record.Step{Load: stats.Load{Mode: load.Rate, Rate: 10},
		Client:      stats.ClientStats{InferPerS: 10, Streaming: &stats.StreamingStats{Requests: 20, Goodput: &stats.GoodputStats{Requests: 15, PerS: 7.5}}},
		Measurement: &record.Measurement{Stable: true, SLO: &ttft, SLOs: []record.SLOCheck{ttft, itl}}}
	s := record.Summary{Steps: []record.Step{step}, Search: &record.Search{SLO: &ttft, SLOs: []record.SLOCheck{ttft, itl}, Best: 0, Knee: -1}}
	if l := strings.Join(searchLines(s), "\n"); !strings.Contains(l, "goodput 7.5 req/s meeting every SLO at once") {
		t.Errorf("several SLOs: %s", l)
	}
	s.Search.SLOs = nil
	if l := strings.Join(searchLines(s), "\n"); !strings.Contains(l, "goodput 9.0 req/s within the SLO") {
		t.Errorf("one SLO: %s", l)
	}
}
