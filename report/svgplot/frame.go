package svgplot

import (
	"fmt"
	"math"
)

// Type sizes and spacing of the frame, in pixels.
const (
	fontPx       = 12 // legend, axis titles
	tickFontPx   = 11 // tick and marker labels
	titleFontPx  = 14
	legendRowPx  = 18
	markerRowPx  = 13
	maxMarkerRow = 3 // marker labels that fit in no row are left to hover
	padPx        = 8
	bottomPx     = 42 // x tick labels and the x axis title
	minPlotPx    = 40
)

// Stroke and text colours of the frame: dark enough to print, light enough
// to leave the data in front.
const (
	inkColor  = "#333"
	axisColor = "#888"
	gridColor = "#e4e4e4"
	refColor  = "#c00"
)

// legendItem is one entry of a chart's legend.
type legendItem struct {
	name string
	// stroke is the CSS colour and dash the stroke-dasharray ("" solid) of
	// the entry's line, or the fill of its box when area is set.
	stroke, dash string
	area         bool
	// band marks a band's entry: a pale box, named by the band's label.
	band bool
	// x, y place the entry once laid out; label is the name, shortened
	// when it does not fit on a row.
	x, y  float64
	label string
}

// tick is one labelled position on an axis.
type tick struct {
	v     float64
	label string
}

// placedLabel is a marker label given a row above the plot, or row -1 when
// it fits in none.
type placedLabel struct {
	x, w float64
	row  int
}

// frameSpec is what a chart asks of its frame.
type frameSpec struct {
	width, height int
	title         string
	legend        []legendItem
	// yLo, yHi is the range of values the y axis must show.
	yLo, yHi float64
	yTitle   string
	// xLo, xHi is the range the x axis must show: seconds on a time axis,
	// values widened to 1-2-5 ticks otherwise.
	xLo, xHi float64
	xTime    bool
	xTitle   string
	markers  []Marker
}

// frame is a laid-out chart: its plot rectangle, scales, ticks, legend and
// marker label rows.
type frame struct {
	w, h                     float64
	left, top, right, bottom float64
	x, y                     linear
	xTicks, yTicks           []tick
	xTitle, yTitle, title    string
	legend                   []legendItem
	markers                  []placedLabel
	mode                     timeMode
	// inked are pixels the data drew on, sampled every few pixels along
	// lines and down filled areas, so labels can keep off them.
	inked []pixel
}

type pixel struct{ x, y float64 }

// inkPx is the spacing of the samples in inked.
const inkPx = 4

// ink records the line from (x0, y0) to (x1, y1) as drawn on.
func (f *frame) ink(x0, y0, x1, y1 float64) {
	n := int(math.Hypot(x1-x0, y1-y0) / inkPx)
	for i := 0; i <= n; i++ {
		t := 0.0
		if n > 0 {
			t = float64(i) / float64(n)
		}
		f.inked = append(f.inked, pixel{x0 + t*(x1-x0), y0 + t*(y1-y0)})
	}
	if n > 0 {
		f.inked = append(f.inked, pixel{x1, y1})
	}
}

// crowd counts the drawn-on pixels in the box, widened by a few pixels.
func (f *frame) crowd(x0, y0, x1, y1 float64) int {
	n := 0
	for _, p := range f.inked {
		if p.x >= x0-3 && p.x <= x1+3 && p.y >= y0-3 && p.y <= y1+3 {
			n++
		}
	}
	return n
}

// layout places everything around the plot, from the outside in: title,
// legend rows, y tick labels (which set the left margin), x ticks, marker
// label rows (which set the top margin).
func layout(s frameSpec) (*frame, error) {
	f := &frame{w: float64(s.width), h: float64(s.height), title: s.title, yTitle: s.yTitle}
	top := float64(padPx)
	if s.title != "" {
		top = titleFontPx + 2*padPx
	}
	f.legend = placeLegend(s.legend, top, f.w)
	if n := legendRows(f.legend); n > 0 {
		top += float64(n) * legendRowPx
	}

	// The y ticks depend on the plot's height, which depends on the marker
	// rows, which depend on the x scale, which depends on the left margin,
	// which depends on the y tick labels: estimate the height, then fix it.
	estPlot := f.h - top - bottomPx - 2*markerRowPx
	target := int(math.Max(2, math.Round(estPlot/45)))
	y0, y1, ystep := niceRange(s.yLo, s.yHi, target)
	labelW := 0.0
	for _, v := range ticks(y0, y1, ystep) {
		t := tick{v: v, label: tickLabel(v, ystep, math.Max(math.Abs(y0), math.Abs(y1)))}
		f.yTicks = append(f.yTicks, t)
		labelW = math.Max(labelW, textWidth(t.label, tickFontPx))
	}
	f.left = padPx + fontPx + 6 + labelW + 6
	if s.yTitle == "" {
		f.left -= fontPx + 6
	}

	if s.xTime {
		f.xTicksTime(s)
	} else {
		f.xTicksValue(s)
	}

	f.markers = placeMarkers(s.markers, f.x, f.w)
	rows := 0
	for _, m := range f.markers {
		rows = max(rows, m.row+1)
	}
	if rows > 0 {
		top += float64(rows)*markerRowPx + 4
	}
	f.top = top + padPx
	f.bottom = f.h - bottomPx
	if f.bottom-f.top < minPlotPx {
		need := int(math.Ceil(f.top + minPlotPx + bottomPx))
		return nil, fmt.Errorf("height %d leaves no room to plot under the title, legend and marker labels: make it at least %d", s.height, need)
	}
	f.y = linear{y0, y1, f.bottom, f.top}
	return f, nil
}

// xTicksTime lays out a time axis: it starts at zero for a run's time,
// ends at the last sample, and puts ticks on round clock values.
func (f *frame) xTicksTime(s frameSpec) {
	lo, hi := s.xLo, s.xHi
	if lo > 0 {
		lo = 0
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	f.mode = timeModeFor(math.Max(math.Abs(lo), math.Abs(hi)))
	widest := math.Max(textWidth(f.mode.clock(hi), tickFontPx), textWidth(f.mode.clock(lo), tickFontPx))
	f.right = f.w - math.Max(2*padPx, widest/2+4)
	plotW := f.right - f.left
	target := int(math.Max(1, math.Floor(plotW/(widest+28))))
	step := timeStep(hi-lo, target)
	for _, v := range ticks(lo, hi, step) {
		f.xTicks = append(f.xTicks, tick{v: v, label: f.mode.clock(v)})
	}
	f.x = linear{lo, hi, f.left, f.right}
	f.xTitle = axisTitle(s.xTitle, f.mode.axisUnit())
	if s.xTitle == "" {
		f.xTitle = axisTitle("elapsed", f.mode.axisUnit())
	}
}

// xTicksValue lays out a value axis with 1-2-5 ticks, as many as fit.
func (f *frame) xTicksValue(s frameSpec) {
	f.right = f.w - 2*padPx
	target := 8
	var x0, x1, step float64
	for {
		x0, x1, step = niceRange(s.xLo, s.xHi, target)
		top := math.Max(math.Abs(x0), math.Abs(x1))
		widest := math.Max(textWidth(tickLabel(x1, step, top), tickFontPx), textWidth(tickLabel(x0, step, top), tickFontPx))
		f.right = f.w - math.Max(2*padPx, widest/2+4)
		n := (x1 - x0) / step
		if n*(widest+24) <= f.right-f.left || target == 1 {
			break
		}
		target--
	}
	top := math.Max(math.Abs(x0), math.Abs(x1))
	for _, v := range ticks(x0, x1, step) {
		f.xTicks = append(f.xTicks, tick{v: v, label: tickLabel(v, step, top)})
	}
	f.x = linear{x0, x1, f.left, f.right}
	f.xTitle = s.xTitle
}

// legendSwatch is the width of a legend entry's line or box, and legendGap
// the space after an entry.
const (
	legendSwatch = 18
	legendGap    = 16
)

// placeLegend wraps the entries into rows across the chart's width, the
// first row's baseline at top+12. A name too long for a row is shortened
// (its full text stays in the entry's title).
func placeLegend(items []legendItem, top, width float64) []legendItem {
	out := make([]legendItem, len(items))
	copy(out, items)
	avail := width - 2*padPx
	x, row := float64(padPx), 0
	for i := range out {
		it := &out[i]
		it.label = it.name
		maxText := avail - legendSwatch - 5
		if textWidth(it.label, fontPx) > maxText {
			it.label = shorten(it.label, maxText, fontPx)
		}
		w := legendSwatch + 5 + textWidth(it.label, fontPx)
		if x > padPx && x+w > padPx+avail {
			x, row = padPx, row+1
		}
		it.x = x
		it.y = top + float64(row)*legendRowPx + 12
		x += w + legendGap
	}
	return out
}

// legendRows counts the rows placeLegend used.
func legendRows(items []legendItem) int {
	if len(items) == 0 {
		return 0
	}
	return int(math.Round((items[len(items)-1].y-items[0].y)/legendRowPx)) + 1
}

// shorten cuts s to fit in w pixels, ending it with an ellipsis.
func shorten(s string, w, px float64) string {
	r := []rune(s)
	for len(r) > 1 && textWidth(string(r)+"…", px) > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// placeMarkers gives each marker label, set just right of its line, the
// first row above the plot in which it does not touch the label before it;
// markers are taken in x order, and a label that fits in none of
// maxMarkerRow rows gets row -1 (it is then only in the marker's hover
// title).
func placeMarkers(ms []Marker, x linear, width float64) []placedLabel {
	out := make([]placedLabel, len(ms))
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	// Markers are few; an insertion sort keeps equal x in input order.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && ms[order[j]].X < ms[order[j-1]].X; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	ends := make([]float64, maxMarkerRow)
	for r := range ends {
		ends[r] = math.Inf(-1)
	}
	for _, i := range order {
		m := ms[i]
		w := textWidth(m.Label, tickFontPx)
		// The label starts just right of its line: it names the load from
		// there on.
		start := math.Min(x.at(m.X)+3, width-2-w)
		out[i] = placedLabel{x: start, w: w, row: -1}
		if m.Label == "" {
			continue
		}
		for r := range ends {
			if start >= ends[r]+6 {
				out[i].row = r
				ends[r] = start + w
				break
			}
		}
	}
	return out
}
