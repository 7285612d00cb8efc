package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SLO
		err  string
	}{
		{"p99:100ms", SLO{Percentile: 99, Threshold: 100 * time.Millisecond}, ""},
		{"avg:20ms", SLO{Threshold: 20 * time.Millisecond}, ""},
		{"ttft-p99:500ms", SLO{Metric: MetricTTFT, Percentile: 99, Threshold: 500 * time.Millisecond}, ""},
		{"itl-p99:50ms", SLO{Metric: MetricITL, Percentile: 99, Threshold: 50 * time.Millisecond}, ""},
		{"itl-avg:1.5ms", SLO{Metric: MetricITL, Threshold: 1500 * time.Microsecond}, ""},
		{"latency-p99.9:2s", SLO{Percentile: 99.9, Threshold: 2 * time.Second}, ""},
		{"p99", SLO{}, "use [ttft-|itl-]STAT:THRESHOLD"},
		{"tpot-p99:10ms", SLO{}, `"tpot" is not a metric`},
		{"p0:10ms", SLO{}, `"p0" is not a percentile`},
		{"p101:10ms", SLO{}, `"p101" is not a percentile`},
		{"median:10ms", SLO{}, `"median" is not a statistic`},
		{"p99:100", SLO{}, "give its unit"},
		{"p99:-5ms", SLO{}, "not a positive duration"},
	} {
		got, err := ParseSLO(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSLO(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if back, err := ParseSLO(got.String()); err != nil || back != got {
			t.Errorf("ParseSLO(%q.String() = %q) = %+v, %v", tc.in, got.String(), back, err)
		}
	}
}

// fakeDriver and nowBoundary let a Stepper run without a load generator:
// changes of level apply at once.
type fakeDriver struct{ steps []load.Target }

func (d *fakeDriver) SetStep(i int, t load.Target) { d.steps = append(d.steps, t) }
func (d *fakeDriver) Stop(time.Duration)           {}
func (d *fakeDriver) Pause()                       {}
func (d *fakeDriver) Resume()                      {}

type nowBoundary struct{}

func (nowBoundary) AtNextTick(f func()) { f() }

// llmTick is a tick of a decoupled model at load level step: 50 requests
// (a full measurement window, MinWindowRequests),
// each with its first response after ttft and 4 more itl apart.
func llmTick(t *testing.T, a *stats.Aggregator, seq, step int, ttft, itl time.Duration) stats.Snapshot {
	t.Helper()
	var batch []driver.Result
	for range MinWindowRequests {
		r := driver.Result{Decoupled: true, Responses: 5, Inferences: 1,
			Timing: &driver.ResponseTiming{First: ttft, Gaps: []time.Duration{itl, itl, itl, itl}}}
		r.Done = ttft + 4*itl
		batch = append(batch, r)
	}
	a.Add(batch)
	s := stats.Snapshot{Seq: seq, Interval: time.Second, Elapsed: time.Duration(seq) * time.Second,
		Load: stats.Load{Mode: load.Concurrency, Concurrency: step + 1, Step: step}}
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// runLLMLevels measures two levels with the given SLOs: at concurrency 1
// TTFT 100 ms and ITL 20 ms, at concurrency 2 TTFT 600 ms and ITL 40 ms.
func runLLMLevels(t *testing.T, first *SLO, more ...SLO) (record.Search, []record.Step) {
	t.Helper()
	var steps []record.Step
	var found record.Search
	st, err := NewStepper(Options{
		Search: Sweep{Levels: []load.Target{{Mode: load.Concurrency, Concurrency: 1}, {Mode: load.Concurrency, Concurrency: 2}}},
		Tick:   time.Second, Window: time.Second, SLO: first, SLOs: more,
		OnStep: func(s record.Step) { steps = append(steps, s) },
		OnDone: func(r record.Search) { found = r },
	}, &fakeDriver{}, nowBoundary{})
	if err != nil {
		t.Fatal(err)
	}
	a := stats.NewAggregator(time.Second, time.Second)
	seq := 0
	for step, lv := range []struct{ ttft, itl time.Duration }{{100 * time.Millisecond, 20 * time.Millisecond}, {600 * time.Millisecond, 40 * time.Millisecond}} {
		for range 3 {
			seq++
			st.Add(llmTick(t, a, seq, step, lv.ttft, lv.itl))
		}
	}
	if !st.Progress().Done || len(steps) != 2 {
		t.Fatalf("done %t after %d steps", st.Progress().Done, len(steps))
	}
	return found, steps
}

func TestStepperTTFTAndITLSLOs(t *testing.T) {
	ttft := SLO{Metric: MetricTTFT, Percentile: 99, Threshold: 500 * time.Millisecond}
	itl := SLO{Metric: MetricITL, Percentile: 99, Threshold: 50 * time.Millisecond}
	found, steps := runLLMLevels(t, &ttft, itl)
	if found.Best != 0 || found.SLO == nil || found.SLO.Metric != MetricTTFT || len(found.SLOs) != 2 || found.SLOs[1].Metric != MetricITL {
		t.Errorf("search = %+v", found)
	}
	m1, m2 := steps[0].Measurement, steps[1].Measurement
	if !m1.Stable || !m1.SLO.Pass || len(m1.SLOs) != 2 || !m1.SLOs[0].Pass || !m1.SLOs[1].Pass {
		t.Errorf("level 1 = %+v %+v", m1, m1.SLOs)
	}
	// Level 2 fails on TTFT (600 ms) though its ITL (40 ms) meets its SLO;
	// the failing check is the one shown.
	if m2.SLO.Pass || m2.SLO.Metric != MetricTTFT || m2.SLOs[0].Pass || !m2.SLOs[1].Pass {
		t.Errorf("level 2 = %+v %+v", m2.SLO, m2.SLOs)
	}
	if l := m2.SLOs[1].Latency; l < 40*time.Millisecond || l > 40100*time.Microsecond {
		t.Errorf("level 2 ITL p99 = %v, want 40 ms", l)
	}
	// Goodput counts requests by their own time to first response; an
	// SLO on the time between responses has none.
	if m1.SLOs[0].Goodput != MinWindowRequests || m2.SLOs[0].Goodput != 0 || m1.SLOs[1].Goodput != 0 {
		t.Errorf("goodput: level 1 TTFT %v, level 2 TTFT %v, level 1 ITL %v", m1.SLOs[0].Goodput, m2.SLOs[0].Goodput, m1.SLOs[1].Goodput)
	}
}

func TestStepperITLSLOAlone(t *testing.T) {
	found, steps := runLLMLevels(t, nil, SLO{Metric: MetricITL, Threshold: 30 * time.Millisecond})
	if found.Best != 0 || !steps[0].Measurement.SLO.Pass || steps[1].Measurement.SLO.Pass || steps[0].Measurement.SLOs != nil {
		t.Errorf("search %+v; checks %+v, %+v", found, steps[0].Measurement.SLO, steps[1].Measurement.SLO)
	}
	// The average ITL is what an avg SLO reads.
	if l := steps[1].Measurement.SLO.Latency; l != 40*time.Millisecond {
		t.Errorf("level 2 average ITL = %v", l)
	}
}

func TestSLOOnStreamingOfAnotherModelFails(t *testing.T) {
	// A step without streaming statistics has no TTFT: it cannot pass an
	// SLO on it, whatever its latency.
	st := record.Step{Client: stats.ClientStats{Successes: 10, Latency: stats.Latency{Count: 10, Mean: time.Millisecond, P99: time.Millisecond}},
		Measurement: &record.Measurement{Stable: true}, Duration: time.Second}
	c := check(st, report.NewStepBuilder(stats.Load{}), SLO{Metric: MetricTTFT, Percentile: 99, Threshold: time.Second})
	if c.Pass {
		t.Errorf("check = %+v", c)
	}
	if _, err := NewStepper(Options{Search: Sweep{Levels: []load.Target{{Mode: load.Concurrency, Concurrency: 1}}}, Tick: time.Second,
		SLOs: []SLO{{Metric: "tpot", Threshold: time.Second}}}, &fakeDriver{}, nowBoundary{}); err == nil {
		t.Error("an SLO on an unknown metric was accepted")
	}
}
