package svgplot

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// Band shades a span of a time chart's x axis, for example the seconds a
// replica was out of service. Bands of one Label share a legend entry and
// a lane, a strip along the top of the plot, so that the bands of several
// labels stay apart where they overlap.
type Band struct {
	// From and To are the span in seconds, To not before From.
	From, To float64
	// Label names the band in the legend and in its hover title
	// ("b:8001 out"); bands with the same label are one kind.
	Label string
	// Color and Variant are the band's colour, as a Series' are.
	Color, Variant int
}

// bandOpacity is the fill opacity of a band across the plot: light
// enough that the lines stay readable through it.
const bandOpacity = "0.14"

// bandLanePx is the height of a band's lane at the top of the plot.
const bandLanePx = 5

// drawnBand is one or more bands of one label merged for drawing.
type drawnBand struct {
	from, to float64
	n        int
}

// mergeBands joins the bands of one label that are closer than gap (one
// downsampling bucket) into one drawn band that counts them, so that a
// replica flapping for an hour draws a few hundred rectangles, not
// thousands; the hover title says how many it holds.
func mergeBands(bs []Band, gap float64) []drawnBand {
	sorted := slices.Clone(bs)
	slices.SortStableFunc(sorted, func(a, b Band) int {
		switch {
		case a.From < b.From:
			return -1
		case a.From > b.From:
			return 1
		}
		return 0
	})
	var out []drawnBand
	for _, b := range sorted {
		if n := len(out); n > 0 && b.From-out[n-1].to < gap {
			out[n-1].to = math.Max(out[n-1].to, b.To)
			out[n-1].n++
			continue
		}
		out = append(out, drawnBand{from: b.From, to: b.To, n: 1})
	}
	return out
}

// bandLabels are the bands' labels in first-seen order, each with the
// first band of that label (its colour).
func bandLabels(bs []Band) []Band {
	var out []Band
	for _, b := range bs {
		if !slices.ContainsFunc(out, func(o Band) bool { return o.Label == b.Label }) {
			out = append(out, b)
		}
	}
	return out
}

// bands writes each band as a pale rectangle across the plot and a solid
// strip in its label's lane, beneath the data, each with a hover title
// giving its span: "b:8001 out · 12s to 15s", or for bands merged for
// drawing "b:8001 out 3 times · 12s to 40s".
func (m *markup) bands(f *frame, bs []Band, bucketW float64) {
	if len(bs) == 0 {
		return
	}
	m.WriteString(`<g class="bands">`)
	for lane, kind := range bandLabels(bs) {
		var same []Band
		for _, b := range bs {
			if b.Label == kind.Label {
				same = append(same, b)
			}
		}
		color := VariantColor(kind.Color, kind.Variant)
		for _, d := range mergeBands(same, bucketW) {
			x0, x1 := f.x.at(d.from), f.x.at(d.to)
			// A band shorter than a pixel still shows.
			w := math.Max(x1-x0, 1.5)
			what := kind.Label
			if d.n > 1 {
				what += " " + strconv.Itoa(d.n) + " times"
			}
			title := what + " · " + f.mode.hover(d.from) + " to " + f.mode.hover(d.to)
			m.WriteString(`<g class="band"`)
			m.attr("data-label", kind.Label)
			m.attr("fill", color)
			m.WriteString(`><rect`)
			m.numAttr("x", x0)
			m.numAttr("y", f.top)
			m.numAttr("width", w)
			m.numAttr("height", f.bottom-f.top)
			m.attr("fill-opacity", bandOpacity)
			m.WriteString(">")
			m.title(title)
			m.WriteString(`</rect><rect class="lane"`)
			m.numAttr("x", x0)
			m.numAttr("y", f.top+float64(lane*bandLanePx))
			m.numAttr("width", w)
			m.numAttr("height", bandLanePx-1)
			m.WriteString(">")
			m.title(title)
			m.WriteString("</rect></g>")
		}
	}
	m.WriteString("</g>")
}

func checkBands(bs []Band) error {
	for i, b := range bs {
		if b.Label == "" {
			return fmt.Errorf("band %d has no label: every band needs one for its legend and hover title", i)
		}
		if !finite(b.From) || !finite(b.To) || b.To < b.From {
			return fmt.Errorf("band %s spans %vs to %vs: give finite times in seconds, the end not before the start", textsafe.Quote(b.Label), b.From, b.To)
		}
	}
	return nil
}
