package svgplot

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestVariantsStayApart: the variants of one colour each have their own
// shade and dash pattern, variant 0 is the colour itself and solid, and a
// series, its hover points and its legend entry are drawn in its variant.
func TestVariantsStayApart(t *testing.T) {
	shades, dashes := map[string]bool{}, map[string]bool{}
	for v := range VariantLen {
		shades[VariantColor(2, v)] = true
		dashes[VariantDash(v)] = true
	}
	if len(shades) != VariantLen || len(dashes) != VariantLen {
		t.Errorf("%d shades and %d dash patterns for %d variants", len(shades), len(dashes), VariantLen)
	}
	if VariantColor(2, 0) != ColorOf(2) || VariantDash(0) != "" || VariantColor(2, VariantLen+1) != VariantColor(2, 1) {
		t.Error("variant 0 is not the plain colour, or variants do not repeat")
	}
	// Variant 1 darkens: every channel of #2ca02c moves towards 0 by 40%.
	if got := VariantColor(2, 1); got != "#1a601a" {
		t.Errorf("variant 1 of #2ca02c is %s, want #1a601a", got)
	}
	c := &TimeChart{Series: []Series{
		{Name: "a", Color: 2, Points: []Point{{1, 1, ""}, {2, 2, ""}}},
		{Name: "b", Color: 2, Variant: 1, Dashed: true, Points: []Point{{1, 2, ""}, {2, 3, ""}}},
	}}
	root, _ := parse(t, c)
	a, b := seriesPath(t, root, "a"), seriesPath(t, root, "b")
	if a.attr["stroke"] != ColorOf(2) || a.attr["stroke-dasharray"] != "" {
		t.Errorf("variant 0: stroke %q dash %q", a.attr["stroke"], a.attr["stroke-dasharray"])
	}
	if b.attr["stroke"] != VariantColor(2, 1) || b.attr["stroke-dasharray"] != VariantDash(1) {
		t.Errorf("variant 1: stroke %q dash %q, want %s and its own pattern over Dashed's", b.attr["stroke"], b.attr["stroke-dasharray"], VariantColor(2, 1))
	}
	if got := seriesPoints(t, root, "b").attr["fill"]; got != VariantColor(2, 1) {
		t.Errorf("variant 1's hover points are %s", got)
	}
	legend := root.find(func(n *node) bool { return n.name == "g" && n.attr["data-legend"] == "b" })
	if len(legend) != 1 {
		t.Fatal("no legend entry for b")
	}
	line := legend[0].find(func(n *node) bool { return n.name == "path" })
	if len(line) != 1 || line[0].attr["stroke"] != VariantColor(2, 1) || line[0].attr["stroke-dasharray"] != VariantDash(1) {
		t.Errorf("b's legend line %v", line)
	}
}

// bandTitles are the hover titles of the bands with the label.
func bandTitles(root *node, label string) []string {
	var out []string
	for _, g := range root.find(func(n *node) bool { return n.name == "g" && n.hasClass("band") && n.attr["data-label"] == label }) {
		rects := g.find(func(n *node) bool { return n.name == "rect" })
		if len(rects) > 0 && len(rects[0].children) > 0 {
			out = append(out, rects[0].children[0].text)
		}
	}
	return out
}

// TestBands: each band is drawn beneath the data over its exact span with
// a hover title giving it, has a lane by label, and its label a legend
// entry apart from the series'.
func TestBands(t *testing.T) {
	s := Series{Name: "tput", Points: []Point{}}
	for i := 0; i <= 60; i++ {
		s.Points = append(s.Points, Point{X: float64(i), Y: 100})
	}
	c := &TimeChart{Width: 600, Height: 270, YUnit: "infer/s", Series: []Series{s}, Bands: []Band{
		{From: 10, To: 15, Label: "b:8001 out", Color: 0, Variant: 1},
		{From: 30, To: 32, Label: "b:8001 out", Color: 0, Variant: 1},
		{From: 12, To: 20, Label: "c:8001 out", Color: 0, Variant: 2},
	}}
	root, raw := parse(t, c)
	if got := bandTitles(root, "b:8001 out"); !slices.Equal(got, []string{"b:8001 out · 10s to 15s", "b:8001 out · 30s to 32s"}) {
		t.Errorf("b's bands %q", got)
	}
	if got := bandTitles(root, "c:8001 out"); !slices.Equal(got, []string{"c:8001 out · 12s to 20s"}) {
		t.Errorf("c's bands %q", got)
	}
	// The bands lie beneath the series: they come first in the markup.
	if strings.Index(string(raw), `class="band"`) > strings.Index(string(raw), `class="line"`) {
		t.Error("bands are drawn over the lines")
	}
	// Each label has its own lane and colour.
	lanes := map[string]string{}
	for _, r := range root.find(func(n *node) bool { return n.name == "rect" && n.hasClass("lane") }) {
		lanes[r.attr["y"]] = r.attr["y"]
	}
	if len(lanes) != 2 {
		t.Errorf("lanes at %v, want two", lanes)
	}
	var legend []string
	for _, g := range root.find(func(n *node) bool { return n.name == "g" && n.hasClass("legend-band") }) {
		legend = append(legend, g.attr["data-band"])
		if r := g.find(func(n *node) bool { return n.name == "rect" }); len(r) != 1 || r[0].attr["fill"] == "" {
			t.Errorf("legend entry %q has no box", g.attr["data-band"])
		}
	}
	if !slices.Equal(legend, []string{"b:8001 out", "c:8001 out"}) {
		t.Errorf("band legend %q", legend)
	}
	if n := len(root.find(func(n *node) bool { return n.hasClass("legend-item") })); n != 1 {
		t.Errorf("%d series legend entries, want 1: a band is no series", n)
	}
	// A band's rectangle spans its seconds on the x axis: 10 s to 15 s is a
	// twelfth of the 0–60 s axis.
	var rect *node
	for _, g := range root.find(func(n *node) bool { return n.hasClass("band") }) {
		rect = g.children[0]
		break
	}
	var x, w float64
	fmt.Sscan(rect.attr["x"], &x)
	fmt.Sscan(rect.attr["width"], &w)
	frame := root.find(func(n *node) bool { return n.hasClass("frame") })[0].attr["d"]
	var left, top, bottom, right float64
	fmt.Sscanf(frame, "M%g %gV%gH%g", &left, &top, &bottom, &right)
	if want := (right - left) * 5 / 60; w < want-0.2 || w > want+0.2 {
		t.Errorf("band width %v px, want %v", w, want)
	}
}

// TestBandsMergeWhenDense: an hour of a replica flapping every other
// second draws a bounded number of bands, each titled with how many it
// holds, and all of them together still hold every band.
func TestBandsMergeWhenDense(t *testing.T) {
	c := &TimeChart{Width: 600, Height: 270, Series: []Series{{Name: "s", Points: []Point{{0, 1, ""}, {3600, 1, ""}}}}}
	for i := 0; i < 1800; i++ {
		c.Bands = append(c.Bands, Band{From: float64(2 * i), To: float64(2*i + 1), Label: "out"})
	}
	root, _ := parse(t, c)
	titles := bandTitles(root, "out")
	if len(titles) == 0 || len(titles) > 100 {
		t.Fatalf("%d drawn bands for 1800 over an hour on 600 pixels", len(titles))
	}
	total := 0
	for _, title := range titles {
		n := 1
		fmt.Sscanf(title, "out %d times", &n)
		total += n
	}
	if total != 1800 {
		t.Errorf("the drawn bands hold %d bands, want 1800", total)
	}
}

func TestInvalidBands(t *testing.T) {
	for _, b := range []Band{{From: 2, To: 1, Label: "x"}, {From: 1, To: 2}} {
		c := &TimeChart{Bands: []Band{b}}
		var sb strings.Builder
		if err := c.WriteSVG(&sb); err == nil || sb.Len() > 0 {
			t.Errorf("band %+v: error %v, %d bytes", b, err, sb.Len())
		}
	}
}
