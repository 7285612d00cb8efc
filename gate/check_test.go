package gate

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

func mustParse(t *testing.T, exprs ...string) []Threshold {
	t.Helper()
	ts, err := ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// numbers is a span of 100 requests, 2 of them failed, at 50 infer/s, with
// a p99 of 12 ms from the send and 30 ms from the schedule, and Triton's
// queue at 3 ms.
func numbers() Numbers {
	return Numbers{
		Client: stats.ClientStats{
			Duration: 2 * time.Second, Requests: 100, Successes: 98, Errors: 2, InferPerS: 50, RequestsPerS: 50,
			Latency:   stats.Latency{Count: 98, Mean: 5 * time.Millisecond, P99: 12 * time.Millisecond},
			Scheduled: &stats.Latency{Count: 98, Mean: 9 * time.Millisecond, P99: 30 * time.Millisecond},
		},
		Server: stats.ServerStats{Available: true, SuccessCount: 98, Queue: 3 * time.Millisecond,
			ComputeInput: time.Millisecond, ComputeInfer: 2 * time.Millisecond},
	}
}

// TestCheckValues: each metric reads its own number of the span, latency
// from the schedule unless send- says otherwise.
func TestCheckValues(t *testing.T) {
	n := numbers()
	for _, tc := range []struct {
		expr string
		want float64
		pass bool
	}{
		{"p99<20ms", 30, false}, // from the schedule: 30 ms
		{"send-p99<20ms", 12, true},
		{"avg<10ms", 9, true},
		{"errors<1%", 2, false},
		{"errors<=2", 2, true},
		{"throughput>40", 50, true},
		{"requests>60", 50, false},
		{"queue<5ms", 3, true},
		{"compute<2ms", 3, false},
	} {
		r := Check(mustParse(t, tc.expr), "run", n)[0]
		if r.Value == nil || *r.Value != tc.want || r.Pass != tc.pass {
			t.Errorf("%s: %+v, want value %g pass %v", tc.expr, r, tc.want, tc.pass)
		}
	}
}

// TestCheckNotMeasured: a threshold on a number the span did not measure
// fails, saying why: a bound that cannot be checked holds nothing.
func TestCheckNotMeasured(t *testing.T) {
	n := numbers()
	n.Server = stats.ServerStats{Available: false}
	for _, expr := range []string{"queue<5ms", "ttft-p99<1s", "itl-p50<1s"} {
		r := Check(mustParse(t, expr), "run", n)[0]
		if r.Pass || r.Value != nil || r.Reason == "" {
			t.Errorf("%s: %+v", expr, r)
		}
	}
	empty := Check(mustParse(t, "p99<1s", "throughput>0"), "run", Numbers{})
	for _, r := range empty {
		if r.Pass || r.Reason == "" {
			t.Errorf("no requests: %+v", r)
		}
	}
}

// TestEvaluateScopes: the run's thresholds over the run and, per step, each
// step; a model's own over that model.
func TestEvaluateScopes(t *testing.T) {
	n := numbers()
	step := func(c int, p99 time.Duration) record.Step {
		st := record.Step{Load: stats.Load{Mode: load.Concurrency, Concurrency: c}, Client: n.Client}
		st.Client.Scheduled = nil
		st.Client.Latency.P99 = p99
		return st
	}
	sum := record.Summary{Model: "resnet50", Client: n.Client,
		Steps: []record.Step{step(1, 5*time.Millisecond), step(8, 40*time.Millisecond)}}
	g := Gates{Run: mustParse(t, "p99<35ms"), PerStep: true, Models: map[string][]Threshold{"resnet50": mustParse(t, "errors<5%")}}
	rs := g.Evaluate(sum)
	var got []string
	for _, r := range rs {
		got = append(got, r.Scope+" "+map[bool]string{true: "pass", false: "fail"}[r.Pass])
	}
	want := "run pass|step concurrency 1 pass|step concurrency 8 fail|model resnet50 pass|model resnet50 step concurrency 1 pass|model resnet50 step concurrency 8 pass"
	if strings.Join(got, "|") != want {
		t.Errorf("scopes:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if len(Failed(rs)) != 1 {
		t.Errorf("failed: %+v", Failed(rs))
	}
}

// TestWatcher: a breach ends the run only when it held at every tick for
// the whole window; a tick back under the limit starts the count again.
func TestWatcher(t *testing.T) {
	tick := func(p99 time.Duration) stats.Snapshot {
		return stats.Snapshot{Window: stats.ClientStats{Duration: time.Second, Requests: 10, Successes: 10,
			Latency: stats.Latency{Count: 10, P99: p99}}}
	}
	var fired []record.ThresholdResult
	w := NewWatcher(Gates{Run: mustParse(t, "p99<10ms")}, 3, func(r record.ThresholdResult) { fired = append(fired, r) })
	for i, p := range []time.Duration{20, 20, 5, 20, 20} { // two over, one under, two over: no breach yet
		w.Add(tick(p * time.Millisecond))
		if len(fired) != 0 {
			t.Fatalf("tick %d: fired %+v", i, fired)
		}
	}
	w.Add(stats.Snapshot{}) // nothing finished: not a breach, and no reset either way
	w.Add(tick(20 * time.Millisecond))
	if len(fired) != 0 {
		t.Fatalf("a tick without requests broke the streak's rule: %+v", fired)
	}
	w = NewWatcher(Gates{Run: mustParse(t, "p99<10ms")}, 3, func(r record.ThresholdResult) { fired = append(fired, r) })
	for range 5 {
		w.Add(tick(20 * time.Millisecond))
	}
	if len(fired) != 1 || *fired[0].Value != 20 {
		t.Fatalf("three ticks over the limit: fired %+v, want once", fired)
	}
}

// TestJUnitValidates writes a suite with passing and failing cases, and
// characters XML must escape, and validates it against the Ant JUnit
// schema (windyroad's JUnit.xsd, which Jenkins, GitLab and most test
// reporters read) with xmllint. CI installs xmllint (.ci/run); elsewhere
// the test skips without it.
func TestJUnitValidates(t *testing.T) {
	v := 12.5
	rs := []record.ThresholdResult{
		{Threshold: "p99<100ms", Scope: "run", Value: &v, Limit: 100, Unit: "ms", Pass: true},
		{Threshold: "errors<1%", Scope: "model a&b \"x\"", Value: &v, Limit: 1, Unit: "%"},
		{Threshold: "ttft-p99<1s", Scope: "run", Limit: 1000, Unit: "ms", Reason: "not a decoupled model"},
	}
	s := ThresholdSuite("tritontop resnet50", rs, 5*time.Second)
	s.Properties = [][2]string{{"server", "127.0.0.1:8001"}, {"load", "concurrency <8>"}}
	var b bytes.Buffer
	if err := WriteJUnit(&b, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), s, Suite{Name: "tritontop compare"}); err != nil {
		t.Fatal(err)
	}
	var doc xmlSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if got := doc.Suites[0]; got.Tests != 3 || got.Failures != 2 || got.Cases[1].Failure == nil || got.Cases[0].Failure != nil ||
		got.Timestamp != "2026-01-02T03:04:05" || got.Cases[1].Name != `errors<1% over model a&b "x"` {
		t.Errorf("suite: %+v", got)
	}
	ValidateJUnit(t, b.Bytes())
}

// ValidateJUnit checks a JUnit document against testdata/JUnit.xsd with
// xmllint, skipping where xmllint is not installed outside CI.
func ValidateJUnit(t *testing.T, doc []byte) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint is not installed: .ci/run installs libxml2-utils")
		}
		t.Skip("xmllint not installed (apt-get install libxml2-utils)")
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "JUnit.xsd"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("JUnit file does not validate: %v\n%s\n%s", err, out, doc)
	}
}
