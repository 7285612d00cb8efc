package report

import (
	"bytes"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report/svgplot"
)

// htmlTune is a tune run's section: the search in words, the frontier
// chart, every trial and the best configuration's config.pbtxt.
type htmlTune struct {
	Fields []htmlField
	Chart  template.HTML
	Trials []htmlTuneRow
	Config string
}

// htmlTuneRow is one trial's row.
type htmlTuneRow struct {
	Class string
	Cells []htmlCell
}

// tuneView is t in the report's words.
func tuneView(t *record.Tune, index int) (*htmlTune, error) {
	v := &htmlTune{Config: t.BestConfig}
	add := func(name, value string) { v.Fields = append(v.Fields, htmlField{Name: name, Value: value}) }
	add("objective", t.Objective+" under "+strings.Join(t.SLOs, " and "))
	add("search", fmt.Sprintf("%s: %d trials over %d configurations, %s of the grid's %d points (%d configurations × %d concurrencies), in %s; %s",
		t.Search, len(t.Trials), t.Configurations, pctOf(len(t.Trials), t.Grid.Points), t.Grid.Points, t.Grid.Configurations,
		len(t.Grid.Concurrencies), t.Elapsed.Round(time.Second), t.Stopped))
	add("grid", fmt.Sprintf("instances %v, max batch sizes %v, queue delays %v µs, preferred %s, concurrencies %v",
		t.Grid.Instances, t.Grid.MaxBatchSizes, t.Grid.QueueDelaysUS, strings.Join(t.Grid.Preferred, ", "), t.Grid.Concurrencies))
	if t.Best >= 0 && t.Best < len(t.Trials) {
		add("best", trialText(t.Trials[t.Best]))
	} else {
		add("best", "no configuration met the SLO at any load measured")
	}
	if t.Baseline >= 0 && t.Baseline < len(t.Trials) {
		add("original", trialText(t.Trials[t.Baseline])+passNote(t.Trials[t.Baseline]))
	}
	switch {
	case t.RestoreError != "":
		add("restored", "NO: "+t.RestoreError)
	case t.Restored:
		add("restored", "the original configuration was loaded back")
	}
	for i, tr := range t.Trials {
		v.Trials = append(v.Trials, tuneRow(t, i, tr))
	}
	svg, err := tuneChart(t, index)
	if err != nil {
		return nil, err
	}
	v.Chart = svg
	return v, nil
}

// trialText is a trial in a line.
func trialText(tr record.TuneTrial) string {
	return fmt.Sprintf("%s at concurrency %d: %s infer/s, p99 %s", TuneConfigText(tr.Config), tr.Concurrency, fixed(tr.Throughput, 1), ms(tr.P99))
}

// tuneRow is trial i's row of the trials table.
func tuneRow(t *record.Tune, i int, tr record.TuneTrial) htmlTuneRow {
	r := htmlTuneRow{}
	if i == t.Best {
		r.Class = "best"
	}
	num := func(s string) htmlCell { return htmlCell{Text: s} }
	r.Cells = []htmlCell{num(strconv.Itoa(i + 1)), {Text: TuneConfigText(tr.Config), Class: "l"}, num(strconv.Itoa(tr.Concurrency))}
	if tr.LoadError != "" {
		return htmlTuneRow{Class: "fail", Cells: append(r.Cells, dash(), dash(), dash(), dash(), htmlCell{Text: "not loaded", Title: tr.LoadError, Class: "l bad"})}
	}
	verdict := htmlCell{Text: "pass", Class: "l"}
	switch {
	case !tr.Stable:
		verdict = htmlCell{Text: "unstable", Class: "l warn"}
	case !tr.Pass:
		verdict = htmlCell{Text: "miss", Class: "l bad"}
	}
	return htmlTuneRow{Class: r.Class, Cells: append(r.Cells, num(fixed(tr.Throughput, 1)), num(fixed(millis(tr.P99), 2)),
		num(fixed(millis(tr.Queue), 2)), num(tr.Elapsed.Round(100*time.Millisecond).String()), verdict)}
}

// tuneChart is the frontier chart: every trial a point, the frontier a
// line, the best ringed, the SLO's latency a reference line when it is on
// the p99.
func tuneChart(t *record.Tune, index int) (template.HTML, error) {
	xy := &svgplot.XYChart{
		ID: "tune-" + strconv.Itoa(index+1), Title: "p99 latency against throughput: every trial, and the frontier",
		XLabel: "throughput", XUnit: "infer/s", YLabel: "p99 latency", YUnit: "ms",
		Width: htmlWideWidth, Height: htmlWideHeight,
	}
	trials := svgplot.Series{Name: "trials", Color: 7, Scatter: true}
	for _, tr := range t.Trials {
		if tr.LoadError == "" && tr.P99 > 0 {
			trials.Points = append(trials.Points, svgplot.Point{X: tr.Throughput, Y: millis(tr.P99), Label: TuneConfigText(tr.Config) + " @" + strconv.Itoa(tr.Concurrency)})
		}
	}
	front := svgplot.Series{Name: "frontier", Color: 0}
	for _, i := range t.Frontier {
		if i >= 0 && i < len(t.Trials) {
			tr := t.Trials[i]
			front.Points = append(front.Points, svgplot.Point{X: tr.Throughput, Y: millis(tr.P99), Label: TuneConfigText(tr.Config) + " @" + strconv.Itoa(tr.Concurrency)})
		}
	}
	if len(trials.Points) == 0 {
		return "", nil
	}
	xy.Series = []svgplot.Series{trials, front}
	for _, s := range t.SLOs {
		if d, ok := p99Threshold(s); ok {
			xy.Refs = append(xy.Refs, svgplot.RefLine{Y: millis(d), Label: "SLO " + s})
		}
	}
	if t.Best >= 0 && t.Best < len(t.Trials) {
		b := t.Trials[t.Best]
		xy.Highlights = append(xy.Highlights, svgplot.Highlight{X: b.Throughput, Y: millis(b.P99), Label: "best " + TuneConfigText(b.Config), Color: 2})
	}
	var buf bytes.Buffer
	if err := xy.WriteSVG(&buf); err != nil {
		return "", err
	}
	// The chart's markup is svgplot's, its text escaped there.
	return template.HTML(buf.String()), nil //nolint:gosec
}

// p99Threshold is an --slo's threshold when it is on the p99 latency
// ("p99:100ms").
func p99Threshold(slo string) (time.Duration, bool) {
	stat, val, ok := strings.Cut(strings.TrimSpace(slo), ":")
	if !ok || !strings.EqualFold(stat, "p99") {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(val))
	return d, err == nil && d > 0
}
