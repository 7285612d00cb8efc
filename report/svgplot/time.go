package svgplot

import (
	"fmt"
	"io"
	"math"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// TimeChart is a chart of values over a run's time: one line per series, or
// with Stacked the series stacked as areas (the server's queue, compute
// input, infer and output making up its request time). The x axis is
// elapsed seconds, labelled in seconds, m:ss or h:mm:ss by the run's span;
// the y axis starts at zero and has 1-2-5 ticks.
type TimeChart struct {
	// ID is the root element's id, for a page's links and a test's
	// queries. Optional.
	ID string
	// Title is drawn above the chart. Optional.
	Title string
	// YLabel and YUnit make the y axis title, "latency (ms)"; YUnit also
	// follows each value in the hover titles ("41.2 ms", "95%").
	YLabel, YUnit string
	// YMax is the least top of the y axis (100 for a percentage); the axis
	// still grows above it to show every value. Zero fits the data.
	YMax float64
	// Width and Height are the chart's size in pixels; zero means
	// DefaultWidth and DefaultHeight.
	Width, Height int
	// Stacked draws the series as areas stacked in order, the first at
	// the bottom. All series must then have the same X values; a tick
	// where any is missing breaks the whole stack.
	Stacked bool
	Series  []Series
	// Markers are vertical lines at load changes.
	Markers []Marker
	// Refs are horizontal reference lines, such as an SLO.
	Refs []RefLine
	// Bands shade spans of time beneath the data, such as a replica's
	// time out of service; each label has a legend entry after the
	// series'.
	Bands []Band
}

// WriteSVG writes the chart as one <svg> element. Each series is a <path>
// with class "line" (or "area" when stacked) and data-series set to its
// name, followed by its hover points, a <g class="pts"> of <circle>s each
// with a <title> such as "12:03 · p99 41.2 ms". It writes nothing and
// returns an error when the chart's fields are not valid.
func (c *TimeChart) WriteSVG(w io.Writer) error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("time chart %s: %w", chartName(c.ID, c.Title), err)
	}
	width, height := orDefault(c.Width, DefaultWidth), orDefault(c.Height, DefaultHeight)

	var stack [][]float64 // cumulative tops, per series, when stacked
	if c.Stacked {
		stack = cumulate(c.Series)
	}
	spec := frameSpec{
		width: width, height: height, title: c.Title,
		yTitle: axisTitle(c.YLabel, c.YUnit), xTime: true,
		xLo: math.Inf(1), xHi: math.Inf(-1), yLo: 0, yHi: math.Max(0, c.YMax),
		markers: c.Markers,
	}
	for i, s := range c.Series {
		spec.legend = append(spec.legend, legendItem{name: s.Name, stroke: s.stroke(), dash: s.dash(), area: c.Stacked})
		for j, p := range s.Points {
			spec.xLo, spec.xHi = math.Min(spec.xLo, p.X), math.Max(spec.xHi, p.X)
			y := p.Y
			if c.Stacked {
				y = stack[i][j]
			}
			if !math.IsNaN(y) {
				spec.yLo, spec.yHi = math.Min(spec.yLo, y), math.Max(spec.yHi, y)
			}
		}
	}
	for _, b := range bandLabels(c.Bands) {
		spec.legend = append(spec.legend, legendItem{name: b.Label, stroke: VariantColor(b.Color, b.Variant), band: true})
	}
	for _, b := range c.Bands {
		spec.xLo, spec.xHi = math.Min(spec.xLo, b.From), math.Max(spec.xHi, b.To)
	}
	for _, mk := range c.Markers {
		spec.xLo, spec.xHi = math.Min(spec.xLo, mk.X), math.Max(spec.xHi, mk.X)
	}
	for _, r := range c.Refs {
		spec.yLo, spec.yHi = math.Min(spec.yLo, r.Y), math.Max(spec.yHi, r.Y)
	}
	if math.IsInf(spec.xLo, 0) {
		spec.xLo, spec.xHi = 0, 1
	}
	f, err := layout(spec)
	if err != nil {
		return fmt.Errorf("time chart %s: %w", chartName(c.ID, c.Title), err)
	}

	var m markup
	kind := "time"
	if c.Stacked {
		kind = "stacked"
	}
	m.open(f, c.ID, kind)
	m.axes(f)
	bucketW := (f.x.d1 - f.x.d0) * bucketPx / (f.right - f.left)
	m.bands(f, c.Bands, bucketW)
	m.markers(f, c.Markers)
	m.refLines(f, c.Refs, c.YUnit)
	if c.Stacked {
		c.writeStack(&m, f, stack, bucketW)
	} else {
		c.writeLines(&m, f, bucketW)
	}
	m.refLabels(f, c.Refs)
	m.WriteString("</svg>\n")
	_, err = w.Write(m.Bytes())
	return err
}

// writeLines draws each series as a line through its downsampled points,
// then all hover points above all lines.
func (c *TimeChart) writeLines(m *markup, f *frame, bucketW float64) {
	kept := make([][][]int, len(c.Series))
	xs := make([][]float64, len(c.Series))
	ys := make([][]float64, len(c.Series))
	for i, s := range c.Series {
		xs[i], ys[i] = splitXY(s.Points)
		kept[i] = downsample(xs[i], ys[i], f.x.d0, bucketW)
	}
	m.WriteString(`<g class="series" fill="none" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round">`)
	for i, s := range c.Series {
		m.WriteString(`<path class="line"`)
		m.attr("data-series", s.Name)
		m.seriesStroke(s)
		m.WriteString(` d="`)
		for _, seg := range kept[i] {
			m.polyline(f, xs[i], ys[i], seg)
		}
		m.WriteString(`"/>`)
	}
	m.WriteString("</g>")
	for i, s := range c.Series {
		m.WriteString(`<g class="pts" fill-opacity="0"`)
		m.attr("data-series", s.Name)
		m.attr("fill", s.stroke())
		m.WriteString(">")
		for _, seg := range kept[i] {
			for _, j := range seg {
				m.point(f.x.at(xs[i][j]), f.y.at(ys[i][j]), 4,
					f.mode.hover(xs[i][j])+" · "+s.Name+" "+withUnit(formatValue(ys[i][j]), c.YUnit))
			}
		}
		m.WriteString("</g>")
	}
}

// polyline writes one path segment through the given indices; a lone
// sample becomes a dot (a zero-length line with round caps).
func (m *markup) polyline(f *frame, xs, ys []float64, seg []int) {
	px, py := 0.0, 0.0
	for k, j := range seg {
		x, y := f.x.at(xs[j]), f.y.at(ys[j])
		if k == 0 {
			px, py = x, y
		}
		f.ink(px, py, x, y)
		px, py = x, y
		switch k {
		case 0:
			m.WriteByte('M')
		case 1:
			m.WriteByte('L')
		default:
			m.WriteByte(' ')
		}
		m.num(x)
		m.WriteByte(' ')
		m.num(y)
	}
	if len(seg) == 1 {
		m.WriteString("h0")
	}
}

// writeStack draws each layer as the area between its cumulative top and
// the top of the layer below, on the samples kept for the total, then the
// hover points on each layer's top edge.
func (c *TimeChart) writeStack(m *markup, f *frame, stack [][]float64, bucketW float64) {
	if len(c.Series) == 0 {
		return
	}
	xs, _ := splitXY(c.Series[0].Points)
	total := stack[len(stack)-1]
	kept := downsample(xs, total, f.x.d0, bucketW)
	base := make([]float64, len(xs))
	for _, seg := range kept {
		for _, j := range seg {
			x := f.x.at(xs[j])
			f.ink(x, f.y.at(total[j]), x, f.bottom)
		}
	}
	m.WriteString(`<g class="series" stroke-width="1" stroke-linejoin="round" fill-opacity="0.8">`)
	for i, s := range c.Series {
		below := base
		if i > 0 {
			below = stack[i-1]
		}
		m.WriteString(`<path class="area"`)
		m.attr("data-series", s.Name)
		m.attr("fill", s.stroke())
		m.attr("stroke", s.stroke())
		m.WriteString(` d="`)
		for _, seg := range kept {
			m.polyline(f, xs, stack[i], seg)
			if len(seg) == 1 {
				continue
			}
			for k := len(seg) - 1; k >= 0; k-- {
				m.WriteByte(' ')
				m.num(f.x.at(xs[seg[k]]))
				m.WriteByte(' ')
				m.num(f.y.at(below[seg[k]]))
			}
			m.WriteByte('Z')
		}
		m.WriteString(`"/>`)
	}
	m.WriteString("</g>")
	for i, s := range c.Series {
		m.WriteString(`<g class="pts" fill-opacity="0"`)
		m.attr("data-series", s.Name)
		m.attr("fill", s.stroke())
		m.WriteString(">")
		for _, seg := range kept {
			for _, j := range seg {
				m.point(f.x.at(xs[j]), f.y.at(stack[i][j]), 4,
					f.mode.hover(xs[j])+" · "+s.Name+" "+withUnit(formatValue(c.Series[i].Points[j].Y), c.YUnit))
			}
		}
		m.WriteString("</g>")
	}
}

// cumulate returns, per series, the running sum of the series up to it: the
// top of each layer of a stack. A sample missing from any series is missing
// from every layer at that index.
func cumulate(ss []Series) [][]float64 {
	if len(ss) == 0 {
		return nil
	}
	n := len(ss[0].Points)
	out := make([][]float64, len(ss))
	for i := range ss {
		out[i] = make([]float64, n)
	}
	for j := range n {
		sum, missing := 0.0, false
		for i := range ss {
			y := ss[i].Points[j].Y
			if math.IsNaN(y) {
				missing = true
			}
			sum += y
			out[i][j] = sum
		}
		if missing {
			for i := range ss {
				out[i][j] = math.NaN()
			}
		}
	}
	return out
}

func (c *TimeChart) validate() error {
	if err := checkSize(c.Width, c.Height); err != nil {
		return err
	}
	if !finite(c.YMax) || c.YMax < 0 {
		return fmt.Errorf("YMax is %v: give a finite value from 0 up (0 fits the data)", c.YMax)
	}
	if err := checkSeries(c.Series, true); err != nil {
		return err
	}
	for _, mk := range c.Markers {
		if !finite(mk.X) {
			return fmt.Errorf("marker %s is at x %v: give a time in seconds", textsafe.Quote(mk.Label), mk.X)
		}
	}
	if err := checkRefs(c.Refs); err != nil {
		return err
	}
	if err := checkBands(c.Bands); err != nil {
		return err
	}
	if !c.Stacked || len(c.Series) == 0 {
		return nil
	}
	first := c.Series[0]
	for _, s := range c.Series[1:] {
		if len(s.Points) != len(first.Points) {
			return fmt.Errorf("stacked series %q has %d points and %q has %d: stacked series need the same times",
				s.Name, len(s.Points), first.Name, len(first.Points))
		}
		for j, p := range s.Points {
			if p.X != first.Points[j].X {
				return fmt.Errorf("stacked series %q has point %d at x %v and %q at x %v: stacked series need the same times",
					s.Name, j, p.X, first.Name, first.Points[j].X)
			}
		}
	}
	for _, s := range c.Series {
		for j, p := range s.Points {
			if p.Y < 0 {
				return fmt.Errorf("stacked series %s has the negative value %v at point %d: a stack adds values from 0 up", textsafe.Quote(s.Name), p.Y, j)
			}
		}
	}
	return nil
}

// checkSize rejects a chart too small to draw in.
func checkSize(w, h int) error {
	if w != 0 && w < MinWidth {
		return fmt.Errorf("width %d is too small: give at least %d pixels, or 0 for %d", w, MinWidth, DefaultWidth)
	}
	if h != 0 && h < MinHeight {
		return fmt.Errorf("height %d is too small: give at least %d pixels, or 0 for %d", h, MinHeight, DefaultHeight)
	}
	return nil
}

// checkSeries rejects unnamed or twice-named series, infinite values, and
// (on a time chart) x values that go back.
func checkSeries(ss []Series, timeAxis bool) error {
	names := make(map[string]bool, len(ss))
	for i, s := range ss {
		if s.Name == "" {
			return fmt.Errorf("series %d has no name: every series needs one for its legend and hover titles", i)
		}
		if names[s.Name] {
			return fmt.Errorf("series name %s is used twice: names identify series, make them unique", textsafe.Quote(s.Name))
		}
		names[s.Name] = true
		for j, p := range s.Points {
			if !finite(p.X) {
				return fmt.Errorf("series %s point %d has x %v: x must be a finite number", textsafe.Quote(s.Name), j, p.X)
			}
			if math.IsInf(p.Y, 0) {
				return fmt.Errorf("series %s point %d has y %v: give a finite value, or NaN for a missing one", textsafe.Quote(s.Name), j, p.Y)
			}
			if timeAxis && j > 0 && p.X < s.Points[j-1].X {
				return fmt.Errorf("series %q point %d is at %vs, before point %d at %vs: times must not decrease",
					s.Name, j, p.X, j-1, s.Points[j-1].X)
			}
		}
	}
	return nil
}

func checkRefs(rs []RefLine) error {
	for _, r := range rs {
		if !finite(r.Y) {
			return fmt.Errorf("reference line %s is at y %v: give a finite value", textsafe.Quote(r.Label), r.Y)
		}
	}
	return nil
}

// chartName names a chart in an error by its id, or else its title.
func chartName(id, title string) string {
	switch {
	case id != "":
		return fmt.Sprintf("%q", id)
	case title != "":
		return fmt.Sprintf("%q", title)
	}
	return "(no id)"
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func splitXY(ps []Point) (xs, ys []float64) {
	xs = make([]float64, len(ps))
	ys = make([]float64, len(ps))
	for i, p := range ps {
		xs[i], ys[i] = p.X, p.Y
	}
	return xs, ys
}
