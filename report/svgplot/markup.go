package svgplot

import (
	"bytes"
	"html"
	"math"
	"strconv"
)

// fontFamily uses fonts the reader's machine has: Arial's metrics (Liberation
// Sans on Linux) match the layout's width estimate.
const fontFamily = "Helvetica,Arial,'Liberation Sans',sans-serif"

// style makes the invisible hover points of a time chart show when the
// pointer is on them. It is the only rule a chart needs; a page may add its
// own for the classes.
const style = `<style>.svgplot .pts circle:hover{fill-opacity:1}</style>`

// markup accumulates a chart's SVG text.
type markup struct{ bytes.Buffer }

// num writes a pixel coordinate with one decimal, without a trailing ".0".
func (m *markup) num(v float64) {
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	b := strconv.AppendFloat(m.AvailableBuffer(), v, 'f', 1, 64)
	if n := len(b); n >= 2 && b[n-2] == '.' && b[n-1] == '0' {
		b = b[:n-2]
	}
	m.Write(b)
}

// attr writes ` name="value"` with value escaped.
func (m *markup) attr(name, value string) {
	m.WriteByte(' ')
	m.WriteString(name)
	m.WriteString(`="`)
	m.WriteString(html.EscapeString(value))
	m.WriteByte('"')
}

// numAttr writes ` name="v"` for a coordinate.
func (m *markup) numAttr(name string, v float64) {
	m.WriteByte(' ')
	m.WriteString(name)
	m.WriteString(`="`)
	m.num(v)
	m.WriteByte('"')
}

// text writes escaped character data.
func (m *markup) text(s string) { m.WriteString(html.EscapeString(s)) }

// title writes a hover title element.
func (m *markup) title(s string) {
	m.WriteString("<title>")
	m.text(s)
	m.WriteString("</title>")
}

// open writes the root element of a chart of the given kind.
func (m *markup) open(f *frame, id, kind string) {
	m.WriteString(`<svg xmlns="http://www.w3.org/2000/svg"`)
	m.attr("class", "svgplot svgplot-"+kind)
	if id != "" {
		m.attr("id", id)
	}
	m.attr("data-chart", kind)
	m.numAttr("width", f.w)
	m.numAttr("height", f.h)
	m.WriteString(` viewBox="0 0 `)
	m.num(f.w)
	m.WriteByte(' ')
	m.num(f.h)
	m.WriteByte('"')
	m.attr("font-family", fontFamily)
	m.WriteString(` font-size="12" role="img"`)
	if f.title != "" {
		m.attr("aria-label", f.title)
	}
	m.WriteString(">")
	m.WriteString(style)
	m.WriteString(`<rect class="background" width="100%" height="100%" fill="#fff"/>`)
	if f.title != "" {
		m.WriteString(`<text class="title" x="8" y="22" font-size="14" font-weight="bold"`)
		m.attr("fill", inkColor)
		m.WriteString(">")
		m.text(f.title)
		m.WriteString("</text>")
	}
}

// axes writes the grid, the axes with their ticks and titles, and the
// legend.
func (m *markup) axes(f *frame) {
	m.WriteString(`<g class="grid"`)
	m.attr("stroke", gridColor)
	m.WriteString(">")
	for _, t := range f.yTicks {
		y := f.y.at(t.v)
		m.WriteString(`<path d="M`)
		m.num(f.left)
		m.WriteByte(' ')
		m.num(y)
		m.WriteString("H")
		m.num(f.right)
		m.WriteString(`"/>`)
	}
	for _, t := range f.xTicks {
		x := f.x.at(t.v)
		m.WriteString(`<path d="M`)
		m.num(x)
		m.WriteByte(' ')
		m.num(f.top)
		m.WriteString("V")
		m.num(f.bottom)
		m.WriteString(`"/>`)
	}
	m.WriteString("</g>")

	// y axis: tick labels right-aligned against the plot, title rotated.
	m.WriteString(`<g class="axis y" font-size="11" text-anchor="end"`)
	m.attr("fill", inkColor)
	m.WriteString(">")
	for _, t := range f.yTicks {
		m.WriteString("<text")
		m.numAttr("x", f.left-6)
		m.numAttr("y", f.y.at(t.v)+4)
		m.WriteString(">")
		m.text(t.label)
		m.WriteString("</text>")
	}
	if f.yTitle != "" {
		cy := (f.top + f.bottom) / 2
		m.WriteString(`<text class="axis-title" text-anchor="middle" font-size="12" transform="translate(`)
		m.num(padPx + fontPx)
		m.WriteByte(' ')
		m.num(cy)
		m.WriteString(`) rotate(-90)">`)
		m.text(f.yTitle)
		m.WriteString("</text>")
	}
	m.WriteString("</g>")

	// x axis: tick marks and labels centred under them, title below.
	m.WriteString(`<g class="axis x" font-size="11" text-anchor="middle"`)
	m.attr("fill", inkColor)
	m.WriteString(">")
	for _, t := range f.xTicks {
		m.WriteString("<text")
		m.numAttr("x", f.x.at(t.v))
		m.numAttr("y", f.bottom+16)
		m.WriteString(">")
		m.text(t.label)
		m.WriteString("</text>")
	}
	if f.xTitle != "" {
		m.WriteString(`<text class="axis-title" font-size="12"`)
		m.numAttr("x", (f.left+f.right)/2)
		m.numAttr("y", f.bottom+34)
		m.WriteString(">")
		m.text(f.xTitle)
		m.WriteString("</text>")
	}
	m.WriteString("</g>")
	m.WriteString(`<path class="frame" fill="none"`)
	m.attr("stroke", axisColor)
	m.WriteString(` d="M`)
	m.num(f.left)
	m.WriteByte(' ')
	m.num(f.top)
	m.WriteString("V")
	m.num(f.bottom)
	m.WriteString("H")
	m.num(f.right)
	m.WriteString(`"/>`)

	if len(f.legend) == 0 {
		return
	}
	m.WriteString(`<g class="legend"`)
	m.attr("fill", inkColor)
	m.WriteString(">")
	for _, it := range f.legend {
		if it.band {
			// A band's entry is no series: tests and pages that walk the
			// series by their legend entries do not meet it.
			m.WriteString(`<g class="legend-band"`)
			m.attr("data-band", it.name)
		} else {
			m.WriteString(`<g class="legend-item"`)
			m.attr("data-legend", it.name)
		}
		m.WriteString(">")
		if it.label != it.name {
			m.title(it.name)
		}
		c := it.stroke
		switch {
		case it.band:
			m.WriteString(`<rect`)
			m.numAttr("x", it.x)
			m.numAttr("y", it.y-9)
			m.WriteString(` width="18" height="10"`)
			m.attr("fill", c)
			m.attr("fill-opacity", bandOpacity)
			m.attr("stroke", c)
			m.WriteString("/>")
		case it.area:
			m.WriteString(`<rect`)
			m.numAttr("x", it.x)
			m.numAttr("y", it.y-9)
			m.WriteString(` width="18" height="10"`)
			m.attr("fill", c)
			m.WriteString("/>")
		default:
			m.WriteString(`<path fill="none" stroke-width="2.5"`)
			m.attr("stroke", c)
			if it.dash != "" {
				m.attr("stroke-dasharray", it.dash)
			}
			m.WriteString(` d="M`)
			m.num(it.x)
			m.WriteByte(' ')
			m.num(it.y - 4)
			m.WriteString(`h18"/>`)
		}
		m.WriteString("<text")
		m.numAttr("x", it.x+legendSwatch+5)
		m.numAttr("y", it.y)
		m.WriteString(">")
		m.text(it.label)
		m.WriteString("</text></g>")
	}
	m.WriteString("</g>")
}

// markers writes the vertical markers with their labels in the rows that
// layout gave them.
func (m *markup) markers(f *frame, ms []Marker) {
	if len(ms) == 0 {
		return
	}
	m.WriteString(`<g class="markers" font-size="11"`)
	m.attr("fill", inkColor)
	m.WriteString(">")
	for i, mk := range ms {
		x := f.x.at(mk.X)
		m.WriteString(`<g class="marker"`)
		m.attr("data-label", mk.Label)
		m.WriteString(`><path stroke-dasharray="3 3"`)
		m.attr("stroke", axisColor)
		m.WriteString(` d="M`)
		m.num(x)
		m.WriteByte(' ')
		m.num(f.top)
		m.WriteString("V")
		m.num(f.bottom)
		m.WriteString(`">`)
		m.title(mk.Label + " at " + f.mode.hover(mk.X))
		m.WriteString("</path>")
		if p := f.markers[i]; p.row >= 0 {
			m.WriteString("<text")
			m.numAttr("x", p.x)
			m.numAttr("y", f.top-4-float64(p.row)*markerRowPx)
			m.WriteString(">")
			m.text(mk.Label)
			m.WriteString("</text>")
		}
		m.WriteString("</g>")
	}
	m.WriteString("</g>")
}

// refLines writes the horizontal reference lines, beneath the data.
func (m *markup) refLines(f *frame, rs []RefLine, unit string) {
	if len(rs) == 0 {
		return
	}
	m.WriteString(`<g class="refs" stroke-width="1.5" stroke-dasharray="6 4"`)
	m.attr("stroke", refColor)
	m.WriteString(">")
	for _, r := range rs {
		m.WriteString(`<path class="ref"`)
		m.attr("data-label", r.Label)
		m.WriteString(` d="M`)
		m.num(f.left)
		m.WriteByte(' ')
		m.num(f.y.at(r.Y))
		m.WriteString("H")
		m.num(f.right)
		m.WriteString(`">`)
		m.title(joinDot(r.Label, withUnit(formatValue(r.Y), unit)))
		m.WriteString("</path>")
	}
	m.WriteString("</g>")
}

// refLabels writes the labels of the reference lines above the data, each
// at the end of its line, above or below it, where it covers the fewest
// drawn points.
func (m *markup) refLabels(f *frame, rs []RefLine) {
	if len(rs) == 0 {
		return
	}
	m.WriteString(`<g class="ref-labels" font-size="11" stroke="#fff" stroke-width="3" paint-order="stroke"`)
	m.attr("fill", refColor)
	m.WriteString(">")
	for _, r := range rs {
		if r.Label == "" {
			continue
		}
		y := f.y.at(r.Y)
		w := textWidth(r.Label, tickFontPx)
		best, bestN := labelSpot{}, -1
		for _, c := range []labelSpot{
			{f.right - 4, y - 4, "end"}, {f.left + 4, y - 4, "start"},
			{f.right - 4, y + 13, "end"}, {f.left + 4, y + 13, "start"},
		} {
			x0 := c.x
			if c.anchor == "end" {
				x0 -= w
			}
			n := f.crowd(x0, c.y-10, x0+w, c.y+2)
			if bestN < 0 || n < bestN {
				best, bestN = c, n
			}
		}
		m.WriteString(`<text class="ref-label"`)
		m.attr("text-anchor", best.anchor)
		m.numAttr("x", best.x)
		m.numAttr("y", best.y)
		m.WriteString(">")
		m.text(r.Label)
		m.WriteString("</text>")
	}
	m.WriteString("</g>")
}

// labelSpot is a place a label may go: its anchor point and alignment.
type labelSpot struct {
	x, y   float64
	anchor string
}

// joinDot joins the non-empty parts of a hover title with " · ".
func joinDot(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += " · "
		}
		out += p
	}
	return out
}

// seriesStroke writes a series' stroke colour and, when it is dashed, its
// dash pattern.
func (m *markup) seriesStroke(s Series) {
	m.attr("stroke", s.stroke())
	if d := s.dash(); d != "" {
		m.attr("stroke-dasharray", d)
	}
}

// point writes one hover point with its title. Its centre is rounded to
// the pixel: a hover target needs no more, and there are thousands.
func (m *markup) point(x, y, r float64, title string) {
	m.WriteString("<circle")
	m.numAttr("cx", math.Round(x))
	m.numAttr("cy", math.Round(y))
	m.numAttr("r", r)
	m.WriteString(">")
	m.title(title)
	m.WriteString("</circle>")
}
