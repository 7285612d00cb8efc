package report

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report/svgplot"
	"github.com/tritontop/tritontop/stats"
)

// htmlReplicaView is one run's replicas as the page's table shows them.
type htmlReplicaView struct {
	// Label names the run file the replicas served; Heading is set when
	// the report has several files and the table needs it.
	Label   string
	Heading bool
	Style   template.CSS
	Balance string
	Rows    []htmlReplicaRow
}

// htmlReplicaRow is one replica's row: its line's colour and dash, as the
// replica charts draw it, and its cells.
type htmlReplicaRow struct {
	URL    string
	Stroke string
	Dash   string
	Out    bool
	Cells  []htmlCell
}

// replicaSet is a run whose replicas the page shows: run r of the chart
// set, the first of its file (the models of a file share its replicas),
// with the file's replicas.
type replicaSet struct {
	r        int
	replicas []record.ReplicaSummary
}

// replicaRuns are the runs with several replicas, each file once.
func (c *chartSet) replicaRuns() []replicaSet {
	var out []replicaSet
	for r := range c.runs {
		if c.shared(r) || len(c.sums[r].Replicas) == 0 {
			continue
		}
		out = append(out, replicaSet{r: r, replicas: c.sums[r].Replicas})
	}
	return out
}

// replicaName names a replica of run r on the charts: its URL, after the
// file's label when the report has several files.
func (c *chartSet) replicaName(r int, url string) string { return c.machineName(r, url) }

// replicas are the page's Replicas section: a table per run over several
// replicas, and charts of throughput, Triton's queue time and service
// state per replica over time; nothing when no run has replicas.
func (c *chartSet) replicas(files int) ([]*htmlReplicaView, []htmlChart, error) {
	runs := c.replicaRuns()
	if len(runs) == 0 {
		return nil, nil, nil
	}
	var views []*htmlReplicaView
	for _, rr := range runs {
		views = append(views, c.replicaView(rr, files))
	}
	markers := c.markers()
	var charts []htmlChart
	for _, b := range []func([]replicaSet) (*svgplot.TimeChart, string){
		c.replicaThroughputChart, c.replicaQueueChart, c.replicaStateChart,
	} {
		tc, note := b(runs)
		if len(tc.Series) == 0 {
			continue
		}
		tc.Width, tc.Height, tc.Markers = htmlChartWidth, htmlChartHeight, markers
		ch, err := render(tc.ID, tc.Title, tc.WriteSVG)
		if err != nil {
			return nil, nil, err
		}
		ch.Note = note
		charts = append(charts, ch)
	}
	return views, charts, nil
}

// replicaView is a run's replica table: each replica's requests, share,
// throughput, latency from the send, errors, Triton's queue and compute
// per request, busiest GPU, and its time in service.
func (c *chartSet) replicaView(rr replicaSet, files int) *htmlReplicaView {
	sum := c.sums[rr.r]
	v := &htmlReplicaView{Label: c.runs[rr.r].Label, Heading: files > 1,
		Style: template.CSS("--c:" + svgplot.ColorOf(rr.r)), Balance: balanceName(sum.Balance)}
	if c.source != nil {
		v.Label = c.sourceLabel[c.source[rr.r]]
	}
	for k, rep := range rr.replicas {
		cl := rep.Client
		row := htmlReplicaRow{URL: rep.URL, Stroke: svgplot.VariantColor(rr.r, k), Dash: svgplot.VariantDash(k), Out: rep.Downs > 0}
		share := dash()
		if sum.Client.Requests > 0 {
			share = htmlCell{Text: fixed(100*float64(cl.Requests)/float64(sum.Client.Requests), 1) + "%",
				Title: fmt.Sprintf("%d of the run's %d requests", cl.Requests, sum.Client.Requests)}
		}
		cells := []htmlCell{
			{Text: strconv.FormatInt(cl.Requests, 10), Title: fmt.Sprintf("%d successes, %d errors", cl.Successes, cl.Errors)},
			share,
			{Text: fixed(cl.InferPerS, 1), Title: fmt.Sprintf("%d inferences in %s", cl.Inferences, cl.Duration.Round(time.Millisecond))},
		}
		if l := cl.Latency; l.Count > 0 {
			title := fmt.Sprintf("from the send: avg %s, p50 %s, p90 %s, p95 %s, p99 %s ms over %d requests",
				fixed(millis(l.Mean), 2), fixed(millis(l.P50), 2), fixed(millis(l.P90), 2), fixed(millis(l.P95), 2), fixed(millis(l.P99), 2), l.Count)
			if rep.Approximate {
				title += "; weighted from the ticks' percentiles (a tick had no histogram)"
			}
			cells = append(cells, htmlCell{Text: fixed(millis(l.P50), 2), Title: title}, htmlCell{Text: fixed(millis(l.P99), 2), Title: title})
		} else {
			cells = append(cells, dash(), dash())
		}
		errCell := htmlCell{Text: strconv.FormatInt(cl.Errors, 10)}
		if cl.Errors > 0 {
			var codes []string
			for _, e := range cl.ErrorsByCode {
				codes = append(codes, fmt.Sprintf("%s × %d: %s", e.Code, e.Count, e.Message))
			}
			errCell.Title, errCell.Class = strings.Join(codes, "\n"), "warn"
		}
		cells = append(cells, errCell)
		if sv := rep.Server; sv.Available {
			cells = append(cells, htmlCell{Text: fixed(millis(sv.Queue), 2), Title: fmt.Sprintf("over %d requests in %d ticks", sv.SuccessCount, sv.Ticks)},
				htmlCell{Text: fixed(millis(sv.Compute()), 2),
					Title: fmt.Sprintf("input %s + infer %s + output %s ms", fixed(millis(sv.ComputeInput), 3), fixed(millis(sv.ComputeInfer), 3), fixed(millis(sv.ComputeOutput), 3))})
		} else {
			cells = append(cells, dash(), dash())
		}
		if u, ok := busiestGPU(rep.Metrics); ok {
			var gpus []string
			for _, g := range rep.Metrics.GPUs {
				if g.HasUtilization {
					gpus = append(gpus, fmt.Sprintf("%s: %s%% average, %s%% at most", g.UUID, fixed(100*g.UtilizationAvg, 1), fixed(100*g.UtilizationMax, 1)))
				}
			}
			cells = append(cells, htmlCell{Text: fixed(100*u, 1) + "%", Title: strings.Join(gpus, "\n")})
		} else {
			cells = append(cells, dash())
		}
		cells = append(cells, htmlCell{Text: fmt.Sprintf("%d / %d", rep.TicksUp, rep.Ticks),
			Title: fmt.Sprintf("in service at the end of %d of the run's %d ticks", rep.TicksUp, rep.Ticks)})
		out := htmlCell{Text: strconv.Itoa(rep.Downs)}
		if rep.Downs > 0 {
			out.Class = "warn"
			out.Title = "taken out of service " + times(rep.Downs) + " after failing, then probed and put back once it answered"
		}
		row.Cells = append(cells, out)
		v.Rows = append(v.Rows, row)
	}
	return v
}

// times is a count of occurrences in words: "once", "3 times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// replicaAt is replica k of a tick when it is the one named url (the
// replicas keep their order over a run), false otherwise.
func replicaAt(s *stats.Snapshot, k int, url string) (*stats.Replica, bool) {
	if k >= len(s.Replicas) || s.Replicas[k].URL != url {
		return nil, false
	}
	return &s.Replicas[k], true
}

// replicaSeries adds one series per replica of each run to tc: the run's
// colour, replica k in variant k.
func (c *chartSet) replicaSeries(tc *svgplot.TimeChart, runs []replicaSet, value func(*stats.Replica) (float64, bool)) {
	for _, rr := range runs {
		for k, rep := range rr.replicas {
			pts := c.series(rr.r, func(s stats.Snapshot) (float64, bool) {
				r, ok := replicaAt(&s, k, rep.URL)
				if !ok {
					return 0, false
				}
				return value(r)
			})
			if !present(pts) {
				continue
			}
			tc.Series = append(tc.Series, svgplot.Series{Name: c.replicaName(rr.r, rep.URL), Color: rr.r, Variant: k, Points: pts})
		}
	}
}

// outBands are the spans each replica of the runs was out of service: from
// the start of the first tick that ended with it out to the end of the
// last, over every tick of the run (slivers included, so that the bands
// agree with the table's count).
func (c *chartSet) outBands(runs []replicaSet) []svgplot.Band {
	var out []svgplot.Band
	for _, rr := range runs {
		for k, rep := range rr.replicas {
			label := c.replicaName(rr.r, rep.URL) + " out"
			var cur *svgplot.Band
			for i := range c.runs[rr.r].Run.Snapshots {
				s := &c.runs[rr.r].Run.Snapshots[i]
				r, ok := replicaAt(s, k, rep.URL)
				if !ok || r.Up {
					cur = nil
					continue
				}
				if cur == nil {
					out = append(out, svgplot.Band{From: max((s.Elapsed - s.Interval).Seconds(), 0), Label: label, Color: rr.r, Variant: k})
					cur = &out[len(out)-1]
				}
				cur.To = s.Elapsed.Seconds()
			}
		}
	}
	return out
}

const replicaChartNote = "One line per replica in its run's colour, each in its own shade and dash; shaded spans are when a replica was out of service (taken out after failing, probed, and put back once it answered)."

func (c *chartSet) replicaThroughputChart(runs []replicaSet) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "replica-throughput", Title: "Throughput per replica", YLabel: "throughput", YUnit: "infer/s", Bands: c.outBands(runs)}
	c.replicaSeries(tc, runs, func(r *stats.Replica) (float64, bool) { return r.Tick.InferPerS, true })
	return tc, replicaChartNote
}

func (c *chartSet) replicaQueueChart(runs []replicaSet) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "replica-queue", Title: "Triton queue time per replica", YLabel: "queue time per request", YUnit: "ms", Bands: c.outBands(runs)}
	c.replicaSeries(tc, runs, func(r *stats.Replica) (float64, bool) {
		return millis(r.Server.Queue), r.Server.Available && !r.Server.Reset && r.Server.SuccessCount > 0
	})
	return tc, "From each server's own statistics; a tick in which a replica answered none has no point. " + replicaChartNote
}

// replicaStateChart is how many replicas of each run were in service at
// the end of each tick, with each replica's time out as a band in a lane
// of its own.
func (c *chartSet) replicaStateChart(runs []replicaSet) (*svgplot.TimeChart, string) {
	tc := &svgplot.TimeChart{ID: "replica-state", Title: "Replicas in service", YLabel: "replicas in service", Bands: c.outBands(runs)}
	for _, rr := range runs {
		tc.YMax = max(tc.YMax, float64(len(rr.replicas)))
		pts := c.series(rr.r, func(s stats.Snapshot) (float64, bool) { return float64(s.ReplicasUp()), len(s.Replicas) > 0 })
		tc.Series = append(tc.Series, svgplot.Series{Name: c.replicaName(rr.r, "in service"), Color: rr.r, Points: pts})
	}
	return tc, "Replicas in service at the end of each tick; each shaded lane is one replica's time out."
}
