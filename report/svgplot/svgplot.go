// Package svgplot draws the charts of a run report as SVG text: time series
// (lines or stacked areas) over a run and the latency–throughput curve of a
// sweep. Its output is self-contained markup meant to be inlined in an HTML
// page: no script, no external font or image, colours set as presentation
// attributes so that it prints, and classes and data attributes so that a
// page can restyle it and a test can find each chart and each series.
//
// Long series are downsampled for drawing (min/max buckets, so spikes
// survive), and every drawn point carries a hover title with its value; a
// table elsewhere in the report keeps the exact values.
//
// The markup a page or a test can rely on:
//
//	svg.svgplot                 the chart; also svgplot-time, svgplot-stacked
//	                            or svgplot-xy, data-chart set to the same kind,
//	                            and id set to the chart's ID
//	path.line[data-series=N]    the line of series N (path.area when stacked)
//	g.pts[data-series=N]        its hover points: circle > title
//	g.legend-item[data-legend]  one legend entry per series
//	g.marker[data-label]        a vertical marker, its line and label
//	g.band[data-label]          a shaded span of time: rect > title, rect.lane
//	g.legend-band[data-band]    the legend entry of a band's label
//	path.ref[data-label]        a reference line; text.ref-label its label
//	g.highlight[data-label]     a highlighted point of an x-y chart
//	g.grid, g.axis.x, g.axis.y  the grid and the axes; .title the chart title
package svgplot

import (
	"math"
)

// Default chart sizes in pixels, used when a chart's Width or Height is zero.
const (
	DefaultWidth  = 800
	DefaultHeight = 280
)

// Smallest chart sizes accepted; below these the axes leave no room to draw.
const (
	MinWidth  = 240
	MinHeight = 140
)

// Point is one sample. On a time chart X is seconds since the start of the
// run; on an x-y chart it is the x value. A NaN Y is a missing value: the
// line breaks there rather than dropping to zero.
type Point struct {
	X, Y float64
	// Label names the point in its hover title, for example the load step
	// of a point of a latency–throughput curve ("c=16"). Optional.
	Label string
}

// Series is one named line (or layer of a stacked chart).
type Series struct {
	// Name is shown in the legend and hover titles and identifies the
	// series in the markup (data-series); it must be unique in a chart.
	Name string
	// Color is the series' colour index (see ColorOf). A report gives a
	// series the same index on every chart, so that a compared run keeps
	// its colour throughout. Indices from PaletteLen up repeat the colours
	// dashed, so that 2×PaletteLen series stay distinct.
	Color int
	// Dashed draws the line dashed, to tell two measures of one run apart
	// when they share a colour.
	Dashed bool
	// Variant tells apart the members of a family of series drawn in one
	// colour, such as the replicas of one run: variant 0 is the colour
	// itself, each other a darker or lighter shade of it (VariantColor)
	// with a dash pattern of its own (VariantDash), which overrides
	// Dashed. VariantLen variants stay distinct.
	Variant int
	// Scatter draws an x-y chart's series as points alone, not joined:
	// measurements in no order (a tune run's trials).
	Scatter bool
	// Points are the samples. On a time chart X must not decrease.
	Points []Point
}

// Marker is a vertical line at X with a label, for example a load change
// ("c=16", "200 req/s").
type Marker struct {
	X     float64
	Label string
}

// RefLine is a horizontal reference line at Y with a label, for example a
// latency SLO.
type RefLine struct {
	Y     float64
	Label string
}

// Highlight rings one point of an x-y chart and labels it, for example the
// knee of a latency–throughput curve.
type Highlight struct {
	X, Y  float64
	Label string
	// Color is a colour index (see ColorOf), usually the one of the series
	// the point belongs to.
	Color int
}

// PaletteLen is the number of distinct series colours; ColorOf repeats
// them from there, and the series of the second turn draw dashed.
const PaletteLen = len(palette)

// palette is the series colours, in order: the ten "Tableau 10" colours,
// which stay apart on white, on screen and in print.
var palette = [...]string{
	"#1f77b4", // blue
	"#ff7f0e", // orange
	"#2ca02c", // green
	"#d62728", // red
	"#9467bd", // purple
	"#8c564b", // brown
	"#e377c2", // pink
	"#7f7f7f", // grey
	"#bcbd22", // olive
	"#17becf", // cyan
}

// ColorOf returns the CSS colour of series colour index i (a Series' or
// Highlight's Color), for a page that draws something else in a series'
// colour: a table row, a swatch.
func ColorOf(i int) string {
	n := len(palette)
	return palette[((i%n)+n)%n]
}

// dashedIndex reports whether palette index i is drawn dashed: the second
// turn through the palette, so that its lines differ from the first.
func dashedIndex(i int) bool {
	n := len(palette)
	return ((i%(2*n))+2*n)%(2*n) >= n
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
