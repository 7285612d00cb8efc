package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// htmlChartView is one chart of a rendered report, read back from its SVG
// markup (the classes and data attributes svgplot documents).
type htmlChartView struct {
	id, kind   string
	legend     []string
	paths      map[string]string // series name → path data
	refs       []string
	highlights []string
	markers    []string
	titles     int
}

var (
	svgRe       = regexp.MustCompile(`(?s)<svg xmlns="http://www.w3.org/2000/svg" class="svgplot svgplot-(\w+)" id="([^"]+)".*?</svg>`)
	legendRe    = regexp.MustCompile(`<g class="legend-item" data-legend="([^"]*)"`)
	seriesRe    = regexp.MustCompile(`<path class="(?:line|area)" data-series="([^"]*)"[^>]*? d="([^"]*)"`)
	refRe       = regexp.MustCompile(`<path class="ref" data-label="([^"]*)"`)
	highlightRe = regexp.MustCompile(`<g class="highlight" data-label="([^"]*)"`)
	markerRe    = regexp.MustCompile(`<g class="marker" data-label="([^"]*)"`)
	numberRe    = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)
)

// readCharts finds every chart of a report, by id.
func readCharts(t *testing.T, page string) map[string]htmlChartView {
	t.Helper()
	out := map[string]htmlChartView{}
	for _, m := range svgRe.FindAllStringSubmatch(page, -1) {
		svg := m[0]
		c := htmlChartView{kind: m[1], id: m[2], paths: map[string]string{}, titles: strings.Count(svg, "<title>")}
		for _, l := range legendRe.FindAllStringSubmatch(svg, -1) {
			c.legend = append(c.legend, html.UnescapeString(l[1]))
		}
		for _, s := range seriesRe.FindAllStringSubmatch(svg, -1) {
			c.paths[html.UnescapeString(s[1])] = s[2]
		}
		for _, r := range refRe.FindAllStringSubmatch(svg, -1) {
			c.refs = append(c.refs, html.UnescapeString(r[1]))
		}
		for _, h := range highlightRe.FindAllStringSubmatch(svg, -1) {
			c.highlights = append(c.highlights, html.UnescapeString(h[1]))
		}
		for _, mk := range markerRe.FindAllStringSubmatch(svg, -1) {
			c.markers = append(c.markers, html.UnescapeString(mk[1]))
		}
		if _, dup := out[c.id]; dup {
			t.Errorf("two charts have the id %q", c.id)
		}
		out[c.id] = c
	}
	return out
}

// checkDrawn fails unless every legend entry of the chart has a drawn
// path.
func checkDrawn(t *testing.T, c htmlChartView) {
	t.Helper()
	if len(c.legend) == 0 {
		t.Errorf("chart %s has no series", c.id)
	}
	for _, name := range c.legend {
		if d := c.paths[name]; !strings.HasPrefix(d, "M") || len(d) < 12 {
			t.Errorf("chart %s: series %q has path data %q, want a drawn line", c.id, name, d)
		}
	}
}

func renderHTML(t testing.TB, runs ...HTMLRun) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, runs, HTMLOptions{Generator: "tritontop test"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// selfContained fails on anything a page could fetch or run.
func selfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "@import", "url(", " src=", " href=", "javascript:"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q: a report must be self-contained, with no script", bad)
		}
	}
	// The only address is the SVG namespace, which is a name, not a fetch.
	rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	if i := strings.Index(rest, "://"); i >= 0 {
		t.Errorf("the page names an address: %q", rest[max(i-40, 0):min(i+40, len(rest))])
	}
}

// sweepCharts are the charts of a closed-loop sweep's report.
var sweepCharts = []string{"curve", "throughput", "latency", "server-time", "batch", "gpu-utilization", "gpu-memory", "gpu-power", "cpu", "errors"}

// TestHTMLOfSweep renders the report of a recorded sweep with an SLO
// (concurrency 1 to 57, p99 under 80 ms): every chart with its series
// drawn, the SLO line and the knee on the curve, the step table with the
// knee and the best level marked, the run's header.
func TestHTMLOfSweep(t *testing.T) {
	run := frozenRun(t, "sweep")
	page := renderHTML(t, HTMLRun{Label: "sweep", File: "testdata/sweep.jsonl", Run: run})
	selfContained(t, page)

	charts := readCharts(t, page)
	var ids []string
	for id := range charts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	want := slices.Clone(sweepCharts)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("charts %v, want %v (a closed loop has no latency from the schedule)", ids, want)
	}
	for _, c := range charts {
		checkDrawn(t, c)
		if c.titles < 10 {
			t.Errorf("chart %s has %d hover titles", c.id, c.titles)
		}
	}

	sum := SummarizeRun(run)
	curve := charts["curve"]
	if !slices.Equal(curve.refs, []string{"SLO p99 < 80.0 ms"}) {
		t.Errorf("curve reference lines %q, want the SLO", curve.refs)
	}
	// The knee and the best level are the run's own findings: concurrency
	// 17 and 49 in this record.
	if sum.Search == nil || sum.Steps[sum.Search.Knee].Load.Concurrency != 17 || sum.Steps[sum.Search.Best].Load.Concurrency != 49 {
		t.Fatalf("the frozen sweep's search: %+v", sum.Search)
	}
	if !slices.Equal(curve.highlights, []string{"knee c=17", "best under SLO c=49"}) {
		t.Errorf("curve highlights %q, want the knee and the best level", curve.highlights)
	}
	// One point per step, each titled with its exact level and numbers.
	if n := len(numberRe.FindAllString(curve.paths["sweep"], -1)); n != 2*len(sum.Steps) {
		t.Errorf("curve path %q has fewer than %d points", curve.paths["sweep"], len(sum.Steps))
	}
	if !strings.Contains(page, "<title>sweep · c=17 · 1087 infer/s · 34 ms</title>") {
		t.Error("the knee's point has no hover title with its level and values")
	}
	if lat := charts["latency"]; !slices.Equal(lat.refs, []string{"SLO p99 < 80.0 ms"}) || !slices.Equal(lat.legend, []string{"p50", "p90", "p99"}) {
		t.Errorf("latency chart: refs %q, legend %q", lat.refs, lat.legend)
	}
	// A marker at each of the 8 levels and the drain, on every time chart.
	if m := charts["throughput"].markers; len(m) != 9 || m[0] != "c=1" || m[7] != "c=57" || m[8] != "drain" {
		t.Errorf("markers %q, want c=1 … c=57 and drain", m)
	}
	if got := charts["server-time"].legend; !slices.Equal(got, []string{"queue", "compute input", "compute infer", "compute output"}) {
		t.Errorf("server time layers %q", got)
	}
	if got := charts["gpu-utilization"].legend; !slices.Equal(got, []string{"GPU 0", "GPU 1"}) {
		t.Errorf("GPU series %q", got)
	}

	for _, want := range []string{
		"tritontop demo --headless --concurrency-range 1:57:8", // the command line
		"max batch 32 · dynamic batching",                      // the config
		"8 steps, concurrency 1 to concurrency 57 (linear), SLO p99 &lt; 80.0 ms",
		`<tr class="knee">`, `<tr class="best">`,
		"Highest level meeting p99 &lt; 80.0 ms: concurrency 49",
		`title="server saturated: queue time rises`, // a step's diagnosis, on hover
		"Made by tritontop test",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<tr") - 1; n != len(sum.Steps) {
		t.Errorf("%d step rows, want %d", n, len(sum.Steps))
	}
}

// TestHTMLOfTwoRuns overlays concurrency 1 and concurrency 16 on the demo
// model: both runs' series are drawn on each shared chart, each named by
// its label and in its own colour.
func TestHTMLOfTwoRuns(t *testing.T) {
	page := renderHTML(t,
		HTMLRun{Label: "sync c=1", File: "c1.jsonl", Run: frozenRun(t, "c1")},
		HTMLRun{Label: "async c=16", File: "c16.jsonl", Run: frozenRun(t, "c16")})
	selfContained(t, page)
	charts := readCharts(t, page)
	tp, ok := charts["throughput"]
	if !ok {
		t.Fatal("no throughput chart")
	}
	if !slices.Equal(tp.legend, []string{"sync c=1", "async c=16"}) {
		t.Errorf("throughput legend %q, want both labels", tp.legend)
	}
	checkDrawn(t, tp)
	if tp.paths["sync c=1"] == tp.paths["async c=16"] {
		t.Error("both runs drew the same path")
	}
	for _, id := range []string{"latency", "batch", "gpu-utilization", "cpu", "errors"} {
		c := charts[id]
		checkDrawn(t, c)
		var runs int
		for _, label := range []string{"sync c=1", "async c=16"} {
			if slices.ContainsFunc(c.legend, func(s string) bool { return strings.HasPrefix(s, label) }) {
				runs++
			}
		}
		if runs != 2 {
			t.Errorf("chart %s has series %q, want both runs", id, c.legend)
		}
	}
	// Each run's server time is stacked on its own chart.
	for _, id := range []string{"server-time-1", "server-time-2"} {
		checkDrawn(t, charts[id])
	}
	// Each run keeps its colour: blue for the first, orange for the second.
	for _, want := range []string{`data-series="sync c=1" stroke="#1f77b4"`, `data-series="async c=16" stroke="#ff7f0e"`, `style="--c:#1f77b4"`, `style="--c:#ff7f0e"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if _, ok := charts["curve"]; ok {
		t.Error("a curve for runs of one step each")
	}
}

// TestHTMLOpenLoopAndPlan: an open-loop run gets the latency from the
// schedule, and a run whose summary has a capacity plan shows it.
func TestHTMLOpenLoopAndPlan(t *testing.T) {
	run := frozenRun(t, "rate")
	run.Summary.Plan = &record.Plan{
		TargetRate: 3000, Capacity: 1200, CapacityLevel: stats.Load{Mode: load.Rate, Rate: 1200},
		Limit: "p99 latency", Replicas: 4, Spare: true, Headroom: 0.1, GPUsPerReplica: 2, GPUs: 8,
		Autoscaling: "gpu-utilization", AutoscalingTarget: 0.85, MinReplicas: 3, MaxReplicas: 6,
		Assumptions: []string{"replicas scale linearly"}, HPA: "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n",
	}
	page := renderHTML(t, HTMLRun{Label: "rate", File: "rate.jsonl", Run: run})
	selfContained(t, page)
	charts := readCharts(t, page)
	if c, ok := charts["latency-scheduled"]; !ok {
		t.Error("no chart of the latency from the schedule for an open loop")
	} else {
		checkDrawn(t, c)
	}
	for _, want := range []string{"Capacity plan", "1200.0 req/s per replica at rate 1200/s", "4 (the fewest with 20% headroom over the target)", "replicas scale linearly",
		"kind: HorizontalPodAutoscaler", "Latency in ms from the scheduled send (open loop)", "rate 200/s"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestHTMLRejects(t *testing.T) {
	run := frozenRun(t, "c1")
	for _, c := range []struct {
		name string
		runs []HTMLRun
		want string
	}{
		{"no runs", nil, "no runs"},
		{"unread run", []HTMLRun{{Label: "a"}}, "not been read"},
		{"no label", []HTMLRun{{Run: run, File: "c1.jsonl"}}, "no label"},
		{"same label", []HTMLRun{{Label: "a", Run: run}, {Label: "a", Run: run}}, `two runs are labelled "a"`},
	} {
		var b bytes.Buffer
		err := WriteHTML(&b, c.runs, HTMLOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || b.Len() > 0 {
			t.Errorf("%s: error %v and %d bytes, want %q and nothing written", c.name, err, b.Len(), c.want)
		}
	}
}

// TestSummarizeRunDiagnosesStepsAsLive: a replayed sweep's steps carry the
// diagnosis the live run gave them (the summary line written live),
// because each step is summarized right after its last tick, as live.
func TestSummarizeRunDiagnosesStepsAsLive(t *testing.T) {
	run := frozenRun(t, "sweep")
	live, replayed := run.Summary.Steps, SummarizeRun(run).Steps
	if len(live) != len(replayed) {
		t.Fatalf("%d steps live, %d replayed", len(live), len(replayed))
	}
	found := false
	for i := range live {
		if !slices.Equal(live[i].Diagnosis, replayed[i].Diagnosis) {
			t.Errorf("step %d: live diagnosis %v, replayed %v", i+1, live[i].Diagnosis, replayed[i].Diagnosis)
		}
		found = found || len(live[i].Diagnosis) > 0
	}
	if !found {
		t.Fatal("the frozen sweep has no step diagnosis to compare")
	}
}

// oneHourRun writes a generated one-hour open-loop run at one tick per
// second (load changing every ten minutes, two GPUs, latency from the send
// and the schedule, a few errors, noise on every measure) to a run file
// and reads it back. Its ticks carry no histograms, which a report does
// not draw; the steps' percentiles are then the ticks' weighted ones.
func oneHourRun(t testing.TB) *record.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	h := record.Header{
		TritontopVersion: "0.0.0-test", Args: []string{"-m", "resnet50", "--request-rate-range", "100:600:100", "--step-duration", "10m"},
		StartTime: statstest.T0, Server: record.ServerInfo{URL: "triton:8001", Protocol: "gRPC"},
		Model: record.ModelInfo{Name: "resnet50", Version: "1"}, Interval: time.Second, Window: 10 * time.Second,
		Load: stats.Load{Mode: load.Rate, Rate: 100, Distribution: load.Poisson},
	}
	path := filepath.Join(t.TempDir(), "hour.jsonl")
	w, err := record.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	z := NewSummarizer(h)
	// latency is a noisy distribution around base µs with a rare tail.
	latency := func(base float64) stats.Latency {
		us := func(q float64) time.Duration {
			return time.Duration(base*(0.8+0.4*q)*(1+3*math.Pow(rng.Float64(), 20))) * time.Microsecond
		}
		l := stats.Latency{Count: 100, Min: us(0), P50: us(0.5), P90: us(0.9), P95: us(0.95), P99: us(0.99)}
		l.P999, l.Max, l.Mean = l.P99+time.Millisecond, l.P99+2*time.Millisecond, us(0.55)
		return l
	}
	for seq := 1; seq <= 3600; seq++ {
		step := (seq - 1) / 600
		rate := float64(100 * (step + 1))
		base := 5000 + 1500*float64(step)
		n := rate * (0.95 + 0.1*rng.Float64())
		s := stats.Snapshot{
			Seq: seq, Time: statstest.T0.Add(time.Duration(seq) * time.Second), Elapsed: time.Duration(seq) * time.Second, Interval: time.Second,
			Load: stats.Load{Mode: load.Rate, Rate: rate, Distribution: load.Poisson, InFlight: rng.IntN(20), Step: step},
			Tick: stats.ClientStats{Duration: time.Second, Requests: int64(n), Successes: int64(n), Inferences: int64(n),
				RequestsPerS: n, InferPerS: n, Latency: latency(base)},
			Server: stats.ServerStats{Available: true, SuccessCount: int64(n), InferenceCount: int64(n), ExecutionCount: int64(n / 3),
				Request: time.Duration(base*0.8) * time.Microsecond, Queue: time.Duration(base*0.2*rng.Float64()) * time.Microsecond,
				ComputeInput: 50 * time.Microsecond, ComputeInfer: time.Duration(base*0.5) * time.Microsecond, ComputeOutput: 40 * time.Microsecond,
				AvgBatch: 1 + 4*rng.Float64()},
			System: stats.SystemStats{ProcessCPU: 0.3 + 0.4*rng.Float64(), NumCPU: 8, HostCPU: 0.2 + 0.2*rng.Float64()},
		}
		sched := latency(base + 400)
		s.Tick.Scheduled = &sched
		if rng.IntN(50) == 0 {
			s.Tick.Errors = int64(rng.IntN(5) + 1)
			s.Tick.ErrorsByCode = []stats.ErrorCount{{Code: "UNAVAILABLE", Count: s.Tick.Errors, Message: "connection reset"}}
		}
		util := math.Min(1, rate/650*(0.9+0.2*rng.Float64()))
		s.Metrics = stats.ServerMetrics{Available: true, HasCPU: true, CPUUtilization: 0.2 + 0.3*rng.Float64(), GPUs: []stats.GPU{
			{UUID: "GPU-0", Utilization: util, MemoryUsed: 2e9, MemoryTotal: 80e9, PowerW: 300 + 400*util, HasUtilization: true, HasMemory: true, HasPower: true},
			{UUID: "GPU-1", Utilization: util * 0.97, MemoryUsed: 4e9, MemoryTotal: 80e9, PowerW: 290 + 400*util, HasUtilization: true, HasMemory: true, HasPower: true},
		}}
		if err := w.WriteSnapshot(s); err != nil {
			t.Fatal(err)
		}
		z.Add(s)
	}
	if err := w.Close(z.Summary()); err != nil {
		t.Fatal(err)
	}
	run, err := record.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestHTMLOneHourSize: the report of a one-hour run at one tick per second
// stays under 2 MB, its charts downsampled and its tables whole.
func TestHTMLOneHourSize(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a one-hour run")
	}
	run := oneHourRun(t)
	page := renderHTML(t, HTMLRun{Label: "one hour", File: "hour.jsonl", Run: run})
	const limit = 2 << 20
	t.Logf("one-hour report: %d bytes (%d ticks, %d charts)", len(page), len(run.Snapshots), len(readCharts(t, page)))
	if len(page) >= limit {
		t.Errorf("the report of a one-hour run is %d bytes, want under %d", len(page), limit)
	}
	charts := readCharts(t, page)
	for _, id := range []string{"throughput", "latency", "latency-scheduled", "server-time", "gpu-utilization", "errors", "curve"} {
		checkDrawn(t, charts[id])
	}
	if n := strings.Count(page, `<tr class=`) + strings.Count(page, "<tr>"); n < 6 {
		t.Errorf("%d table rows, want every one of the 6 steps", n)
	}
}

// BenchmarkWriteHTMLOneHour measures rendering the report of a one-hour
// run, and its size.
func BenchmarkWriteHTMLOneHour(b *testing.B) {
	runs := []HTMLRun{{Label: "one hour", File: "hour.jsonl", Run: oneHourRun(b)}}
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, runs, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "bytes/report")
}

// llmCharts are the charts of a decoupled model's sweep: the sweep's, with
// the time to first response and between responses.
var llmCharts = []string{"curve", "throughput", "latency", "ttft", "itl", "server-time", "batch", "gpu-utilization", "gpu-memory", "gpu-power", "cpu", "errors"}

// TestHTMLOfStreaming renders the report of a decoupled LLM's recorded
// sweep (concurrency 2 to 14): the time to first response and between
// responses charted as p50, p90 and p99 with the load changes, each SLO
// on the chart of its latency, the responses' columns in the step table
// with the steps' numbers, and the responses in the run's header.
func TestHTMLOfStreaming(t *testing.T) {
	run := frozenRun(t, "llm-steps")
	// Objectives on the three latencies, as tritontop plan --slo sets them.
	slos := []record.SLOCheck{
		{Metric: "ttft", Percentile: 99, Threshold: 300 * time.Millisecond},
		{Metric: "itl", Percentile: 99, Threshold: 50 * time.Millisecond},
		{Percentile: 99, Threshold: 5 * time.Second},
	}
	run.Summary.Search = &record.Search{Mode: "linear", SLO: &slos[0], SLOs: slos, Best: 3, Knee: -1}
	page := renderHTML(t, HTMLRun{Label: "llm", File: "testdata/llm-steps.jsonl", Run: run})
	selfContained(t, page)

	charts := readCharts(t, page)
	var ids []string
	for id := range charts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	want := slices.Clone(llmCharts)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("charts %v, want %v", ids, want)
	}
	for _, id := range []string{"ttft", "itl"} {
		c := charts[id]
		checkDrawn(t, c)
		if !slices.Equal(c.legend, []string{"p50", "p90", "p99"}) {
			t.Errorf("chart %s: legend %q", id, c.legend)
		}
		if !slices.Equal(c.markers, []string{"c=2", "c=6", "c=10", "c=14", "drain"}) {
			t.Errorf("chart %s: markers %q, want the four levels and the drain", id, c.markers)
		}
	}
	for id, ref := range map[string]string{
		"ttft": "SLO TTFT p99 < 300 ms", "itl": "SLO ITL p99 < 50.0 ms", "latency": "SLO p99 < 5000 ms", "curve": "SLO p99 < 5000 ms",
	} {
		if got := charts[id].refs; !slices.Equal(got, []string{ref}) {
			t.Errorf("chart %s: SLO lines %q, want %q", id, got, ref)
		}
	}

	sum := SummarizeRun(run)
	if !strings.Contains(page, "<th>p99 ms</th><th>resp/s</th><th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>ITL p50 ms</th><th>ITL p99 ms</th><th>queue ms</th>") {
		t.Error("the step table has no responses' columns after the latency")
	}
	for i, st := range sum.Steps {
		sc := st.Client.Streaming
		if sc == nil || sc.TTFT.Count == 0 || sc.ITL.Count == 0 {
			t.Fatalf("step %d of the frozen LLM run: %+v", i+1, sc)
		}
		cells := ">" + fixed(millis(st.Client.Latency.P99), 2) + "</td><td title=\"" + fmt.Sprintf("%d responses in ", sc.Responses)
		if !strings.Contains(page, cells) {
			t.Errorf("step %d: the p99 cell is not followed by the responses' cell %q", i+1, cells)
		}
		for _, v := range []float64{millis(sc.TTFT.P50), millis(sc.TTFT.P99), millis(sc.ITL.P50), millis(sc.ITL.P99)} {
			if !strings.Contains(page, "\">"+fixed(v, 2)+"</td>") {
				t.Errorf("step %d: no cell %s", i+1, fixed(v, 2))
			}
		}
	}
	sc := sum.Client.Streaming
	for _, want := range []string{
		fmt.Sprintf("%d, %s per request, %s per second; Triton counted %d (empty 0, failed 0, cancelled 0)", sc.Responses,
			fixed(sc.PerRequest.Mean, 1), fixed(sc.ResponsesPerS, 1), sum.Server.Responses.Success),
		"to the final response; resp/s is responses per second",
		"<title>llm · c=14",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestHTMLOfTwoStreamingRuns overlays the LLM's runs with prompts of 550
// and 2000 words: each run's TTFT and ITL p50 and p99 on one chart.
func TestHTMLOfTwoStreamingRuns(t *testing.T) {
	page := renderHTML(t,
		HTMLRun{Label: "prompt 550", File: "llm-steps.jsonl", Run: frozenRun(t, "llm-steps")},
		HTMLRun{Label: "prompt 2000", File: "llm-long.jsonl", Run: frozenRun(t, "llm-long")})
	charts := readCharts(t, page)
	for _, id := range []string{"ttft", "itl"} {
		c := charts[id]
		checkDrawn(t, c)
		if want := []string{"prompt 550 p50", "prompt 550 p99", "prompt 2000 p50", "prompt 2000 p99"}; !slices.Equal(c.legend, want) {
			t.Errorf("chart %s: legend %q, want %q", id, c.legend, want)
		}
	}
}
