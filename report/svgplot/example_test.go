package svgplot_test

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/tritontop/tritontop/report/svgplot"
)

// A latency chart of a two-step run with a tick missing its measurement,
// the load change marked and the SLO drawn.
func ExampleTimeChart() {
	p99 := svgplot.Series{Name: "p99", Color: 3}
	for t := 1; t <= 120; t++ {
		v := 20.0
		if t > 60 {
			v = 45 // the second step, at twice the concurrency
		}
		if t == 90 {
			v = math.NaN() // no measurement: the line breaks
		}
		p99.Points = append(p99.Points, svgplot.Point{X: float64(t), Y: v})
	}
	chart := svgplot.TimeChart{
		ID: "latency", Title: "Latency", YLabel: "latency", YUnit: "ms",
		Series:  []svgplot.Series{p99},
		Markers: []svgplot.Marker{{X: 0, Label: "c=8"}, {X: 60, Label: "c=16"}},
		Refs:    []svgplot.RefLine{{Y: 50, Label: "SLO 50 ms"}},
	}
	var svg strings.Builder
	if err := chart.WriteSVG(&svg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	out := svg.String()
	fmt.Println(strings.HasPrefix(out, `<svg xmlns="http://www.w3.org/2000/svg" class="svgplot svgplot-time" id="latency"`))
	fmt.Println(strings.Count(out, `<path class="line" data-series="p99"`), "line")
	fmt.Println(strings.Contains(out, "<title>1:05 · p99 45 ms</title>"))
	// Output:
	// true
	// 1 line
	// true
}

// The latency–throughput curve of a sweep, with the SLO and the knee.
func ExampleXYChart() {
	run := svgplot.Series{Name: "run A", Points: []svgplot.Point{
		{X: 180, Y: 6, Label: "c=1"}, {X: 340, Y: 7, Label: "c=2"},
		{X: 610, Y: 9, Label: "c=4"}, {X: 700, Y: 31, Label: "c=8"},
	}}
	chart := svgplot.XYChart{
		ID: "curve", XLabel: "throughput", XUnit: "req/s", YLabel: "p99 latency", YUnit: "ms",
		Series:     []svgplot.Series{run},
		Refs:       []svgplot.RefLine{{Y: 25, Label: "SLO 25 ms"}},
		Highlights: []svgplot.Highlight{{X: 610, Y: 9, Label: "knee c=4"}},
	}
	var svg strings.Builder
	if err := chart.WriteSVG(&svg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(strings.Contains(svg.String(), "<title>run A · c=8 · 700 req/s · 31 ms</title>"))
	// Output: true
}
