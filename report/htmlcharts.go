package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report/svgplot"
	"github.com/tritontop/tritontop/stats"
)

// Chart sizes of the HTML report: two charts side by side in a 1280-pixel
// window, and the latency–throughput curve across the page. The page
// scales them to its width.
const (
	htmlChartWidth  = 600
	htmlChartHeight = 270
	htmlWideWidth   = 1210
	htmlWideHeight  = 380
)

// Series colours of a single-run report, which does not need the colour
// for telling runs apart (a report of several runs colours each run's
// series with the run's colour).
const (
	colorP50    = 0
	colorP90    = 1
	colorP99    = 3
	colorQueue  = 1
	colorInput  = 2
	colorInfer  = 0
	colorOutput = 4
	colorServer = 0
	colorHost   = 2
	colorClient = 1
)

// chartSet builds the report's charts from the runs' ticks and steps.
type chartSet struct {
	runs  []HTMLRun
	sums  []record.Summary
	ticks [][]stats.Snapshot // each run's ticks that are drawn
	multi bool
	// source is the run file each run comes from (the models of a run over
	// several are runs of one file), sourceLabel each file's label; nil
	// when every run is a file of its own.
	source      []int
	sourceLabel []string
}

// shared reports whether run r shares its servers and client with the run
// before it (two models of one file): their GPUs and CPU are drawn once.
func (c *chartSet) shared(r int) bool {
	return c.source != nil && r > 0 && c.source[r] == c.source[r-1]
}

// machineName is the name of a series of what run r's models share (GPUs,
// CPU): the measure alone when the report has one file, else after the
// file's label.
func (c *chartSet) machineName(r int, measure string) string {
	if c.source == nil {
		return c.name(r, measure)
	}
	if len(c.sourceLabel) == 1 {
		return measure
	}
	return c.sourceLabel[c.source[r]] + " " + measure
}

func newChartSet(runs []HTMLRun, sums []record.Summary) *chartSet {
	c := &chartSet{runs: runs, sums: sums, multi: len(runs) > 1}
	for _, r := range runs {
		c.ticks = append(c.ticks, drawnTicks(r.Run))
	}
	return c
}

// drawnTicks are the ticks a chart shows: all but slivers (the last tick of
// a run is often a fraction of one, whose rates are noise).
func drawnTicks(run *record.Run) []stats.Snapshot {
	minTick := run.Header.Interval / 2
	out := make([]stats.Snapshot, 0, len(run.Snapshots))
	for _, s := range run.Snapshots {
		if minTick > 0 && s.Interval > 0 && s.Interval < minTick {
			continue
		}
		out = append(out, s)
	}
	return out
}

// name is a series' name: the measure in a single-run report, the run's
// label and the measure in a report of several.
func (c *chartSet) name(run int, measure string) string {
	if !c.multi {
		return measure
	}
	if measure == "" {
		return c.runs[run].Label
	}
	return c.runs[run].Label + " " + measure
}

// style is a series' colour and dash: the measure's colour in a
// single-run report; the run's colour, dashed for the second measure, in a
// report of several.
func (c *chartSet) style(run, single int, second bool) (int, bool) {
	if !c.multi {
		return single, false
	}
	return run, second
}

// series builds one series over a run's drawn ticks; value reports false
// for a tick without the measure, which breaks the line there.
func (c *chartSet) series(run int, value func(stats.Snapshot) (float64, bool)) []svgplot.Point {
	ticks := c.ticks[run]
	pts := make([]svgplot.Point, len(ticks))
	for i, s := range ticks {
		v, ok := value(s)
		if !ok || math.IsInf(v, 0) {
			v = math.NaN()
		}
		pts[i] = svgplot.Point{X: s.Elapsed.Seconds(), Y: v}
	}
	return pts
}

// present reports whether any point has a value.
func present(pts []svgplot.Point) bool {
	return slices.ContainsFunc(pts, func(p svgplot.Point) bool { return !math.IsNaN(p.Y) })
}

// markers are the load changes of every run: a line where each level
// starts, and where the drain begins.
func (c *chartSet) markers() []svgplot.Marker {
	var out []svgplot.Marker
	for _, run := range c.runs {
		var prev *stats.Load
		for _, s := range run.Run.Snapshots {
			l := s.Load
			if prev != nil && prev.SameLevel(l) {
				continue
			}
			label := shortLevel(l)
			if l.Drain {
				label = "drain"
			}
			if c.multi {
				label = run.Label + " " + label
			}
			start := max((s.Elapsed - s.Interval).Seconds(), 0)
			out = append(out, svgplot.Marker{X: start, Label: label})
			prev = &l
		}
	}
	return out
}

// shortLevel names a load level in a marker's few pixels: "c=8", "200/s".
func shortLevel(l stats.Load) string {
	if l.Open() {
		return strconv.FormatFloat(l.Rate, 'g', 6, 64) + "/s"
	}
	return "c=" + strconv.Itoa(l.Concurrency)
}

// sloRefs are the SLOs of the runs' searches on one latency, each once:
// metric "" is the request latency, "ttft" and "itl" a decoupled model's
// time to first response and between responses.
func (c *chartSet) sloRefs(metric string) []svgplot.RefLine {
	var out []svgplot.RefLine
	for _, s := range c.sums {
		for _, slo := range searchSLOs(s.Search) {
			if slo.Metric != metric {
				continue
			}
			r := svgplot.RefLine{Y: millis(slo.Threshold), Label: "SLO " + sloName(slo)}
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// searchSLOs are every objective of a search: SLOs when there are several,
// else SLO; none for a plain sweep.
func searchSLOs(sr *record.Search) []*record.SLOCheck {
	switch {
	case sr == nil:
		return nil
	case len(sr.SLOs) > 0:
		out := make([]*record.SLOCheck, len(sr.SLOs))
		for i := range sr.SLOs {
			out[i] = &sr.SLOs[i]
		}
		return out
	case sr.SLO != nil:
		return []*record.SLOCheck{sr.SLO}
	}
	return nil
}

// render writes a chart's SVG into an htmlChart.
func render(id, title string, write func(io.Writer) error) (htmlChart, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return htmlChart{}, fmt.Errorf("report: chart %s: %w", id, err)
	}
	// The SVG is svgplot's markup, which escapes every text it writes.
	return htmlChart{ID: id, Title: title, SVG: template.HTML(b.String())}, nil
}

// timeCharts are the time series of the runs, overlaid.
func (c *chartSet) timeCharts() ([]htmlChart, error) {
	markers := c.markers()
	var out []htmlChart
	add := func(tc *svgplot.TimeChart, note string) error {
		if len(tc.Series) == 0 {
			return nil
		}
		tc.Width, tc.Height, tc.Markers = htmlChartWidth, htmlChartHeight, markers
		ch, err := render(tc.ID, tc.Title, tc.WriteSVG)
		if err != nil {
			return err
		}
		ch.Note = note
		out = append(out, ch)
		return nil
	}
	builders := []func() (*svgplot.TimeChart, string){
		c.throughputChart,
		func() (*svgplot.TimeChart, string) { return c.latencyChart(false) },
		func() (*svgplot.TimeChart, string) { return c.latencyChart(true) },
		func() (*svgplot.TimeChart, string) { return c.streamingChart(false) },
		func() (*svgplot.TimeChart, string) { return c.streamingChart(true) },
		c.sequencesChart,
		c.sequenceLatencyChart,
	}
	for _, b := range builders {
		if err := add(b()); err != nil {
			return nil, err
		}
	}
	for r := range c.runs {
		if err := add(c.serverChart(r)); err != nil {
			return nil, err
		}
	}
	for _, b := range []func() (*svgplot.TimeChart, string){
		c.batchChart, c.gpuUtilizationChart, c.gpuMemoryChart, c.gpuPowerChart, c.cpuChart, c.errorsChart,
	} {
		if err := add(b()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *chartSet) throughputChart() (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "throughput", Title: "Throughput", YLabel: "throughput", YUnit: "infer/s"}
	for r := range c.runs {
		pts := c.series(r, func(s stats.Snapshot) (float64, bool) { return s.Tick.InferPerS, true })
		tc.Series = append(tc.Series, svgplot.Series{Name: c.runs[r].Label, Color: r, Points: pts})
	}
	return tc, ""
}

// latencyChart is the latency percentiles of each tick, from the send or
// (scheduled) from the scheduled send of an open loop.
func (c *chartSet) latencyChart(scheduled bool) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "latency", Title: "Latency from the send", YLabel: "latency", YUnit: "ms", Refs: c.sloRefs("")}
	if scheduled {
		tc.ID, tc.Title = "latency-scheduled", "Latency from the scheduled send (open loop)"
	}
	pick := func(s stats.Snapshot) (stats.Latency, bool) {
		if scheduled {
			if s.Tick.Scheduled == nil {
				return stats.Latency{}, false
			}
			return *s.Tick.Scheduled, s.Tick.Scheduled.Count > 0
		}
		return s.Tick.Latency, s.Tick.Latency.Count > 0
	}
	return tc, c.percentiles(tc, pick)
}

// streamingChart is a decoupled model's time to first response (or, itl,
// between responses) of each tick, over the requests that ended in it; no
// series for other models.
func (c *chartSet) streamingChart(itl bool) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "ttft", Title: "Time to first response", YLabel: "time to first response", YUnit: "ms", Refs: c.sloRefs("ttft")}
	if itl {
		tc.ID, tc.Title, tc.YLabel, tc.Refs = "itl", "Time between responses", "time between responses", c.sloRefs("itl")
	}
	pick := func(s stats.Snapshot) (stats.Latency, bool) {
		sc := s.Tick.Streaming
		if sc == nil {
			return stats.Latency{}, false
		}
		l := sc.TTFT
		if itl {
			l = sc.ITL
		}
		return l, l.Count > 0
	}
	note := "Over the requests that ended in each tick."
	if itl {
		note = "Each gap between two responses of a request, over the requests that ended in each tick."
	}
	if more := c.percentiles(tc, pick); more != "" {
		note += " " + more
	}
	return tc, note
}

// hasSequences reports whether run r drove a stateful model: a tick with
// sequences active or ended.
func (c *chartSet) hasSequences(r int) bool {
	return slices.ContainsFunc(c.ticks[r], func(s stats.Snapshot) bool {
		return s.Load.Sequences > 0 || s.Tick.Sequences != nil
	})
}

// sequencesChart is a stateful model's sequences active (started and not
// yet ended) at the end of each tick; no series for other models.
func (c *chartSet) sequencesChart() (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "sequences", Title: "Active sequences", YLabel: "active sequences"}
	for r := range c.runs {
		if !c.hasSequences(r) {
			continue
		}
		pts := c.series(r, func(s stats.Snapshot) (float64, bool) { return float64(s.Load.Sequences), true })
		tc.Series = append(tc.Series, svgplot.Series{Name: c.name(r, "active"), Color: r, Points: pts})
	}
	return tc, "Sequences started and not yet ended at the end of each tick."
}

// sequenceLatencyChart is a stateful model's sequence latency, from a
// sequence's first send to its last response, p50 and p99 over the
// sequences that ended in each tick; no series for other models.
func (c *chartSet) sequenceLatencyChart() (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "sequence-latency", Title: "Sequence latency", YLabel: "sequence latency", YUnit: "ms"}
	pick := func(s stats.Snapshot) (stats.Latency, bool) {
		sq := s.Tick.Sequences
		if sq == nil {
			return stats.Latency{}, false
		}
		return sq.Latency, sq.Latency.Count > 0
	}
	note := "From a sequence's first send to its last response, over the sequences that ended in each tick; a tick in which none ended has no point."
	// A tick ends few sequences: p90 would say little that p50 and p99
	// do not.
	if more := c.percentileSeries(tc, pick, []percentile{pctP50, pctP99}); more != "" {
		note += " " + more
	}
	return tc, note
}

// percentile is one percentile series of a latency chart: its name,
// colour (in a single-run report), whether it is a run's second line
// (dashed in a report of several), and its value.
type percentile struct {
	name   string
	color  int
	second bool
	get    func(stats.Latency) time.Duration
}

var (
	pctP50 = percentile{"p50", colorP50, false, func(l stats.Latency) time.Duration { return l.P50 }}
	pctP90 = percentile{"p90", colorP90, false, func(l stats.Latency) time.Duration { return l.P90 }}
	pctP99 = percentile{"p99", colorP99, true, func(l stats.Latency) time.Duration { return l.P99 }}
)

// percentiles adds p50, p90 and p99 of pick's distribution over each run's
// ticks to tc (p50 and p99 when there are several runs), and says how to
// read them.
func (c *chartSet) percentiles(tc *svgplot.TimeChart, pick func(stats.Snapshot) (stats.Latency, bool)) string {
	return c.percentileSeries(tc, pick, []percentile{pctP50, pctP90, pctP99})
}

// percentileSeries adds the percentiles pcts of pick's distribution over
// each run's ticks to tc (only p50 and p99 when there are several runs),
// and says how to read them.
func (c *chartSet) percentileSeries(tc *svgplot.TimeChart, pick func(stats.Snapshot) (stats.Latency, bool), pcts []percentile) string {
	note := ""
	if c.multi {
		// Two lines a run keep several runs readable.
		pcts = slices.DeleteFunc(slices.Clone(pcts), func(p percentile) bool { return p.name != "p50" && p.name != "p99" })
		note = "p50 solid, p99 dashed."
	}
	for r := range c.runs {
		for _, p := range pcts {
			pts := c.series(r, func(s stats.Snapshot) (float64, bool) {
				l, ok := pick(s)
				return millis(p.get(l)), ok
			})
			if !present(pts) {
				continue
			}
			color, dashed := c.style(r, p.color, p.second)
			tc.Series = append(tc.Series, svgplot.Series{Name: c.name(r, p.name), Color: color, Dashed: dashed, Points: pts})
		}
	}
	return note
}

// serverChart is Triton's time per request of one run, its parts stacked.
func (c *chartSet) serverChart(r int) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "server-time", Title: "Triton time per request", YLabel: "time per request", YUnit: "ms", Stacked: true}
	if c.multi {
		tc.ID = fmt.Sprintf("server-time-%d", r+1)
		tc.Title += " · " + c.runs[r].Label
	}
	parts := []struct {
		name  string
		color int
		get   func(stats.ServerStats) time.Duration
	}{
		{"queue", colorQueue, func(s stats.ServerStats) time.Duration { return s.Queue }},
		{"compute input", colorInput, func(s stats.ServerStats) time.Duration { return s.ComputeInput }},
		{"compute infer", colorInfer, func(s stats.ServerStats) time.Duration { return s.ComputeInfer }},
		{"compute output", colorOutput, func(s stats.ServerStats) time.Duration { return s.ComputeOutput }},
	}
	for _, p := range parts {
		pts := c.series(r, func(s stats.Snapshot) (float64, bool) {
			return millis(p.get(s.Server)), s.Server.Available && !s.Server.Reset && s.Server.SuccessCount > 0
		})
		if !present(pts) {
			return &svgplot.TimeChart{}, ""
		}
		tc.Series = append(tc.Series, svgplot.Series{Name: p.name, Color: p.color, Points: pts})
	}
	return tc, "Queue, then compute input, infer and output, from Triton's statistics."
}

func (c *chartSet) batchChart() (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "batch", Title: "Batch size (Triton's average per execution)", YLabel: "batch size"}
	for r := range c.runs {
		pts := c.series(r, func(s stats.Snapshot) (float64, bool) {
			return s.Server.AvgBatch, s.Server.Available && !s.Server.Reset && s.Server.ExecutionCount > 0
		})
		if present(pts) {
			tc.Series = append(tc.Series, svgplot.Series{Name: c.runs[r].Label, Color: r, Points: pts})
		}
	}
	return tc, ""
}

// gpuOrder lists the GPUs a run's metrics reported, numbered as the run's
// header lists them.
func (c *chartSet) gpuOrder(r int) []record.GPUSummary {
	return c.sums[r].Metrics.GPUs
}

// gpuChart draws one gauge of every GPU of every run.
func (c *chartSet) gpuChart(id, title, label, unit string, ymax float64, value func(stats.GPU) (float64, bool)) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: id, Title: title, YLabel: label, YUnit: unit, YMax: ymax}
	for r := range c.runs {
		if c.shared(r) {
			continue
		}
		for k, want := range c.gpuOrder(r) {
			pts := c.series(r, func(s stats.Snapshot) (float64, bool) {
				for _, g := range s.Metrics.GPUs {
					// Replicas may report the same UUIDs.
					if g.UUID == want.UUID && g.Replica == want.Replica {
						return value(g)
					}
				}
				return 0, false
			})
			if !present(pts) {
				continue
			}
			color, dashed := c.style(r, k, k > 0)
			tc.Series = append(tc.Series, svgplot.Series{Name: c.machineName(r, "GPU "+strconv.Itoa(k)), Color: color, Dashed: dashed, Points: pts})
		}
	}
	note := "GPUs numbered in the order the server's metrics list them; the run's header gives their UUIDs."
	if c.multi {
		note += " GPU 0 solid, the others dashed."
	}
	return tc, note
}

func (c *chartSet) gpuUtilizationChart() (*svgplot.TimeChart, string) {
	return c.gpuChart("gpu-utilization", "GPU utilization", "utilization", "%", 100, func(g stats.GPU) (float64, bool) {
		return 100 * g.Utilization, g.HasUtilization
	})
}

func (c *chartSet) gpuMemoryChart() (*svgplot.TimeChart, string) {
	return c.gpuChart("gpu-memory", "GPU memory used", "memory", "GB", 0, func(g stats.GPU) (float64, bool) {
		return g.MemoryUsed / 1e9, g.HasMemory
	})
}

func (c *chartSet) gpuPowerChart() (*svgplot.TimeChart, string) {
	return c.gpuChart("gpu-power", "GPU power", "power", "W", 0, func(g stats.GPU) (float64, bool) {
		return g.PowerW, g.HasPower
	})
}

// cpuChart is the server's CPU (Triton's metrics), the client host's and
// tritontop's own, each as a share of its machine.
func (c *chartSet) cpuChart() (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "cpu", Title: "CPU", YLabel: "CPU busy", YUnit: "%", YMax: 100}
	note := "Each as a share of its own machine's cores."
	if c.multi {
		note += " Server solid, tritontop dashed."
	}
	for r, run := range c.runs {
		if c.shared(r) {
			continue
		}
		client := "tritontop"
		if run.Run.Header.Server.InProcess {
			client = "tritontop+sim"
		}
		server := c.series(r, func(s stats.Snapshot) (float64, bool) {
			return 100 * s.Metrics.CPUUtilization, s.Metrics.Available && s.Metrics.HasCPU
		})
		if present(server) {
			color, dashed := c.style(r, colorServer, false)
			tc.Series = append(tc.Series, svgplot.Series{Name: c.machineName(r, "server"), Color: color, Dashed: dashed, Points: server})
		}
		if !c.multi {
			host := c.series(r, func(s stats.Snapshot) (float64, bool) { return 100 * s.System.HostCPU, s.System.NumCPU > 0 })
			if present(host) {
				tc.Series = append(tc.Series, svgplot.Series{Name: "client host", Color: colorHost, Points: host})
			}
		}
		own := c.series(r, func(s stats.Snapshot) (float64, bool) {
			return 100 * s.System.ProcessCPU / float64(s.System.NumCPU), s.System.NumCPU > 0
		})
		if present(own) {
			color, dashed := c.style(r, colorClient, true)
			tc.Series = append(tc.Series, svgplot.Series{Name: c.machineName(r, client), Color: color, Dashed: dashed, Points: own})
		}
	}
	return tc, note
}

func (c *chartSet) errorsChart() (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "errors", Title: "Errors", YLabel: "errors", YUnit: "/s"}
	for r := range c.runs {
		pts := c.series(r, func(s stats.Snapshot) (float64, bool) {
			d := s.Tick.Duration
			if d <= 0 {
				d = s.Interval
			}
			if d <= 0 {
				return 0, false
			}
			return float64(s.Tick.Errors) / d.Seconds(), true
		})
		tc.Series = append(tc.Series, svgplot.Series{Name: c.runs[r].Label, Color: r, Points: pts})
	}
	return tc, ""
}

// curveLatency is the latency the curve plots: the percentile of the
// first run's SLO on the request latency, else p99.
func (c *chartSet) curveLatency() (percentile float64, label string) {
	for _, s := range c.sums {
		for _, slo := range searchSLOs(s.Search) {
			if slo.Metric != "" {
				continue // the time to first response or between responses
			}
			p := slo.Percentile
			if p == 0 {
				return 0, "average latency"
			}
			return p, "p" + strconv.FormatFloat(p, 'g', -1, 64) + " latency"
		}
	}
	return 99, "p99 latency"
}

// stepLatency is a step's latency at a percentile (0: the mean), from the
// schedule in open loop.
func stepLatency(st record.Step, percentile float64) (time.Duration, bool) {
	l := st.Client.Latency
	if s := st.Client.Scheduled; s != nil && s.Count > 0 {
		l = *s
	}
	if l.Count == 0 {
		return 0, false
	}
	switch percentile {
	case 0:
		return l.Mean, true
	case 50:
		return l.P50, true
	case 90:
		return l.P90, true
	case 95:
		return l.P95, true
	case 99:
		return l.P99, true
	case 99.9:
		return l.P999, true
	}
	// A percentile the summary does not keep: the SLO check on the
	// request latency measured it.
	if m := st.Measurement; m != nil {
		checks := m.SLOs
		if len(checks) == 0 && m.SLO != nil {
			checks = []record.SLOCheck{*m.SLO}
		}
		for _, slo := range checks {
			if slo.Metric == "" && slo.Percentile == percentile {
				return slo.Latency, true
			}
		}
	}
	return 0, false
}

// curve is the latency–throughput curve of the runs' steps, one point per
// step in load order, with the SLO line, each run's knee and its best level
// under the SLO; nil when no run has more than one step.
func (c *chartSet) curve() (*htmlChart, error) {
	if !slices.ContainsFunc(c.sums, func(s record.Summary) bool { return len(s.Steps) > 1 }) {
		return nil, nil
	}
	pct, ylabel := c.curveLatency()
	xy := &svgplot.XYChart{
		ID: "curve", Title: "Latency against throughput, one point per load step",
		XLabel: "throughput", XUnit: "infer/s", YLabel: ylabel, YUnit: "ms",
		Width: htmlWideWidth, Height: htmlWideHeight,
	}
	xy.Refs = c.sloRefs("")
	for r, sum := range c.sums {
		order := make([]int, len(sum.Steps))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(sum.Steps[a].Load.Target().Level(), sum.Steps[b].Load.Target().Level())
		})
		point := func(i int) (svgplot.Point, bool) {
			st := sum.Steps[i]
			d, ok := stepLatency(st, pct)
			if !ok {
				return svgplot.Point{X: st.Client.InferPerS, Y: math.NaN()}, false
			}
			return svgplot.Point{X: st.Client.InferPerS, Y: millis(d), Label: shortLevel(st.Load)}, true
		}
		s := svgplot.Series{Name: c.runs[r].Label, Color: r}
		for _, i := range order {
			p, _ := point(i)
			s.Points = append(s.Points, p)
		}
		xy.Series = append(xy.Series, s)

		knee, best := Knee(sum.Steps), -1
		if sr := sum.Search; sr != nil {
			knee = sr.Knee
			if sr.SLO != nil {
				best = sr.Best
			}
		}
		prefix := ""
		if c.multi {
			prefix = c.runs[r].Label + " "
		}
		if knee >= 0 && knee < len(sum.Steps) {
			if p, ok := point(knee); ok {
				xy.Highlights = append(xy.Highlights, svgplot.Highlight{X: p.X, Y: p.Y, Label: prefix + "knee " + p.Label, Color: r})
			}
		}
		if best >= 0 && best < len(sum.Steps) && best != knee {
			if p, ok := point(best); ok {
				xy.Highlights = append(xy.Highlights, svgplot.Highlight{X: p.X, Y: p.Y, Label: prefix + "best under SLO " + p.Label, Color: r})
			}
		}
	}
	ch, err := render(xy.ID, xy.Title, xy.WriteSVG)
	if err != nil {
		return nil, err
	}
	if c.multi {
		ch.Note = "Each run in its own colour."
	}
	return &ch, nil
}
