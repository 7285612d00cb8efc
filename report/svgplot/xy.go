package svgplot

import (
	"fmt"
	"io"
	"math"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// XYChart is a chart of points joined in order, one line per series: the
// latency–throughput curve of a sweep, one point per load step, one series
// per compared run. Both axes start at zero and have 1-2-5 ticks. Points
// are joined in the order given, since a curve past saturation turns back
// (throughput falls as load rises); they are not downsampled.
type XYChart struct {
	// ID is the root element's id. Optional.
	ID string
	// Title is drawn above the chart. Optional.
	Title string
	// XLabel, XUnit, YLabel and YUnit make the axis titles and follow the
	// values in hover titles: "throughput (req/s)", "p99 latency (ms)".
	XLabel, XUnit string
	YLabel, YUnit string
	// Width and Height are the chart's size in pixels; zero means
	// DefaultWidth and DefaultHeight.
	Width, Height int
	Series        []Series
	// Refs are horizontal reference lines, such as the latency SLO.
	Refs []RefLine
	// Highlights ring and label chosen points, such as the knee.
	Highlights []Highlight
}

// WriteSVG writes the chart as one <svg> element. Each series is a <path>
// with class "line" and data-series set to its name, followed by its points,
// a <g class="pts"> of visible <circle>s each with a <title> such as
// "run A · c=16 · 812 req/s · 41.2 ms". Each highlight is a
// <g class="highlight"> with data-label set. It writes nothing and returns
// an error when the chart's fields are not valid.
func (c *XYChart) WriteSVG(w io.Writer) error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("x-y chart %s: %w", chartName(c.ID, c.Title), err)
	}
	spec := frameSpec{
		width: orDefault(c.Width, DefaultWidth), height: orDefault(c.Height, DefaultHeight),
		title: c.Title, yTitle: axisTitle(c.YLabel, c.YUnit), xTitle: axisTitle(c.XLabel, c.XUnit),
	}
	for _, s := range c.Series {
		spec.legend = append(spec.legend, legendItem{name: s.Name, stroke: s.stroke(), dash: s.dash()})
		for _, p := range s.Points {
			if math.IsNaN(p.Y) {
				continue
			}
			spec.xLo, spec.xHi = math.Min(spec.xLo, p.X), math.Max(spec.xHi, p.X)
			spec.yLo, spec.yHi = math.Min(spec.yLo, p.Y), math.Max(spec.yHi, p.Y)
		}
	}
	for _, h := range c.Highlights {
		spec.xLo, spec.xHi = math.Min(spec.xLo, h.X), math.Max(spec.xHi, h.X)
		spec.yLo, spec.yHi = math.Min(spec.yLo, h.Y), math.Max(spec.yHi, h.Y)
	}
	for _, r := range c.Refs {
		spec.yLo, spec.yHi = math.Min(spec.yLo, r.Y), math.Max(spec.yHi, r.Y)
	}
	f, err := layout(spec)
	if err != nil {
		return fmt.Errorf("x-y chart %s: %w", chartName(c.ID, c.Title), err)
	}

	var m markup
	m.open(f, c.ID, "xy")
	m.axes(f)
	m.refLines(f, c.Refs, c.YUnit)
	m.WriteString(`<g class="series" fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">`)
	segs := make([][][]int, len(c.Series))
	for i, s := range c.Series {
		xs, ys := splitXY(s.Points)
		segs[i] = splitGaps(ys)
		if s.Scatter {
			continue
		}
		m.WriteString(`<path class="line"`)
		m.attr("data-series", s.Name)
		m.seriesStroke(s)
		m.WriteString(` d="`)
		for _, seg := range segs[i] {
			m.polyline(f, xs, ys, seg)
		}
		m.WriteString(`"/>`)
	}
	m.WriteString("</g>")
	for i, s := range c.Series {
		m.WriteString(`<g class="pts" stroke="#fff"`)
		m.attr("data-series", s.Name)
		m.attr("fill", s.stroke())
		m.WriteString(">")
		for _, seg := range segs[i] {
			for _, j := range seg {
				p := s.Points[j]
				m.point(f.x.at(p.X), f.y.at(p.Y), 4, c.hover(s.Name, p))
			}
		}
		m.WriteString("</g>")
	}
	c.writeHighlights(&m, f)
	m.refLabels(f, c.Refs)
	m.WriteString("</svg>\n")
	_, err = w.Write(m.Bytes())
	return err
}

// hover is a point's title: series, step label, x and y with their units.
func (c *XYChart) hover(series string, p Point) string {
	return joinDot(series, p.Label, withUnit(formatValue(p.X), c.XUnit), withUnit(formatValue(p.Y), c.YUnit))
}

// writeHighlights rings each highlighted point and writes its label beside
// it, on the side with more room.
func (c *XYChart) writeHighlights(m *markup, f *frame) {
	for _, h := range c.Highlights {
		// Labels keep off every ring, not only their own.
		x, y := f.x.at(h.X), f.y.at(h.Y)
		f.ink(x-9, y, x+9, y)
		f.ink(x, y-9, x, y+9)
	}
	for _, h := range c.Highlights {
		x, y := f.x.at(h.X), f.y.at(h.Y)
		m.WriteString(`<g class="highlight"`)
		m.attr("data-label", h.Label)
		m.WriteString(`><circle fill="none" stroke-width="2.5" r="8"`)
		m.attr("stroke", ColorOf(h.Color))
		m.numAttr("cx", x)
		m.numAttr("cy", y)
		m.WriteString(">")
		m.title(joinDot(h.Label, withUnit(formatValue(h.X), c.XUnit), withUnit(formatValue(h.Y), c.YUnit)))
		m.WriteString("</circle>")
		if h.Label != "" {
			// The label goes beside the ring where it covers the least of
			// the curves; it is then inked so that later labels keep off.
			lw := textWidth(h.Label, fontPx) * 1.1 // bold
			var spot labelSpot
			best := -1
			for _, cand := range []labelSpot{
				{x + 12, y - 10, "start"}, {x - 12, y - 10, "end"},
				{x + 12, y + 20, "start"}, {x - 12, y + 20, "end"},
				{x, y - 14, "middle"}, {x, y + 24, "middle"},
				{x + 12, y - 24, "start"}, {x - 12, y - 24, "end"},
				{x, y - 28, "middle"},
			} {
				x0 := cand.x
				switch cand.anchor {
				case "end":
					x0 -= lw
				case "middle":
					x0 -= lw / 2
				}
				if x0 < f.left || x0+lw > f.right || cand.y-fontPx < f.top || cand.y > f.bottom {
					continue
				}
				if n := f.crowd(x0, cand.y-fontPx, x0+lw, cand.y+2); best < 0 || n < best {
					spot, best = cand, n
				}
			}
			if best < 0 {
				spot = labelSpot{x + 12, y - 10, "start"}
			}
			x0 := spot.x
			switch spot.anchor {
			case "end":
				x0 -= lw
			case "middle":
				x0 -= lw / 2
			}
			for yy := spot.y - fontPx; yy <= spot.y; yy += inkPx {
				f.ink(x0, yy, x0+lw, yy)
			}
			m.WriteString(`<text font-weight="bold" stroke="#fff" stroke-width="3" paint-order="stroke"`)
			m.attr("text-anchor", spot.anchor)
			m.attr("fill", inkColor)
			m.numAttr("x", spot.x)
			m.numAttr("y", spot.y)
			m.WriteString(">")
			m.text(h.Label)
			m.WriteString("</text>")
		}
		m.WriteString("</g>")
	}
}

// splitGaps returns the runs of indices of present (non-NaN) values.
func splitGaps(ys []float64) [][]int {
	var out [][]int
	var seg []int
	for i, y := range ys {
		if math.IsNaN(y) {
			if len(seg) > 0 {
				out = append(out, seg)
			}
			seg = nil
			continue
		}
		seg = append(seg, i)
	}
	if len(seg) > 0 {
		out = append(out, seg)
	}
	return out
}

func (c *XYChart) validate() error {
	if err := checkSize(c.Width, c.Height); err != nil {
		return err
	}
	if err := checkSeries(c.Series, false); err != nil {
		return err
	}
	for _, h := range c.Highlights {
		if !finite(h.X) || !finite(h.Y) {
			return fmt.Errorf("highlight %s is at (%v, %v): give finite values", textsafe.Quote(h.Label), h.X, h.Y)
		}
	}
	return checkRefs(c.Refs)
}
