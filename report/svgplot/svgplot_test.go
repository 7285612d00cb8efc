package svgplot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// node is an element of a parsed chart.
type node struct {
	name     string
	attr     map[string]string
	children []*node
	text     string
}

// parse renders c and parses the output as XML, failing the test when it is
// not well-formed.
func parse(t *testing.T, c chart) (*node, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatalf("WriteSVG: %v", err)
	}
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	root := &node{}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("output is not well-formed XML: %v", err)
		}
		top := stack[len(stack)-1]
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text += string(tok)
		}
	}
	if len(root.children) != 1 || root.children[0].name != "svg" {
		t.Fatalf("output is not one <svg> element")
	}
	return root.children[0], buf.Bytes()
}

// find returns the elements under n (n included) for which match is true.
func (n *node) find(match func(*node) bool) []*node {
	var out []*node
	if match(n) {
		out = append(out, n)
	}
	for _, c := range n.children {
		out = append(out, c.find(match)...)
	}
	return out
}

func (n *node) hasClass(c string) bool {
	return slices.Contains(strings.Fields(n.attr["class"]), c)
}

// titles returns the hover titles of the <circle>s under n.
func (n *node) titles() []string {
	var out []string
	for _, c := range n.find(func(m *node) bool { return m.name == "circle" }) {
		for _, ch := range c.children {
			if ch.name == "title" {
				out = append(out, ch.text)
			}
		}
	}
	return out
}

// seriesPath returns the one <path> of the named series.
func seriesPath(t *testing.T, root *node, name string) *node {
	t.Helper()
	ps := root.find(func(n *node) bool { return n.name == "path" && n.attr["data-series"] == name })
	if len(ps) != 1 {
		t.Fatalf("%d <path data-series=%q> elements, want 1", len(ps), name)
	}
	return ps[0]
}

func seriesPoints(t *testing.T, root *node, name string) *node {
	t.Helper()
	gs := root.find(func(n *node) bool { return n.name == "g" && n.hasClass("pts") && n.attr["data-series"] == name })
	if len(gs) != 1 {
		t.Fatalf("%d <g class=pts data-series=%q> elements, want 1", len(gs), name)
	}
	return gs[0]
}

// subpaths splits a path's d into its subpaths' vertices.
func subpaths(t *testing.T, d string) [][][2]float64 {
	t.Helper()
	var out [][][2]float64
	for _, sub := range strings.Split(d, "M")[1:] {
		sub = strings.TrimSuffix(strings.TrimSuffix(sub, "h0"), "Z")
		f := strings.Fields(strings.ReplaceAll(sub, "L", " "))
		if len(f)%2 != 0 {
			t.Fatalf("odd number of coordinates in subpath %q", sub)
		}
		var pts [][2]float64
		for i := 0; i < len(f); i += 2 {
			var x, y float64
			if _, err := fmt.Sscan(f[i], &x); err != nil {
				t.Fatalf("coordinate %q: %v", f[i], err)
			}
			if _, err := fmt.Sscan(f[i+1], &y); err != nil {
				t.Fatalf("coordinate %q: %v", f[i+1], err)
			}
			pts = append(pts, [2]float64{x, y})
		}
		out = append(out, pts)
	}
	return out
}

func TestNiceRange(t *testing.T) {
	cases := []struct {
		lo, hi      float64
		target      int
		d0, d1, stp float64
	}{
		{0, 41.2, 5, 0, 50, 10},        // 8.24 a step rounds up to 10
		{0, 50, 5, 0, 50, 10},          // an exact top adds no step
		{0, 97, 4, 0, 100, 50},         // 24.25 rounds up to 50
		{0, 0.3, 3, 0, 0.3, 0.1},       // float error does not add a step
		{0, 0.7, 7, 0, 0.7, 0.1},       // nor here
		{0, 1234, 5, 0, 1500, 500},     // 246.8 rounds up to 500
		{0, 0, 5, 0, 1, 0.2},           // nothing to show: [0, 1]
		{-3, 7, 5, -4, 8, 2},           // below zero too
		{0, 18000, 4, 0, 20000, 5000},  // thousands
		{0, 0.012, 4, 0, 0.015, 0.005}, // small values
	}
	for _, c := range cases {
		d0, d1, step := niceRange(c.lo, c.hi, c.target)
		if !near(d0, c.d0) || !near(d1, c.d1) || !near(step, c.stp) {
			t.Errorf("niceRange(%v, %v, %d) = %v, %v, %v; want %v, %v, %v", c.lo, c.hi, c.target, d0, d1, step, c.d0, c.d1, c.stp)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestTickLabels(t *testing.T) {
	cases := []struct {
		v, step, top float64
		want         string
	}{
		{20, 10, 50, "20"},
		{0.3, 0.1, 0.5, "0.3"},
		{0.015, 0.005, 0.015, "0.015"},
		{15000, 5000, 20000, "15k"},
		{0, 5000, 20000, "0"},
		{2500, 500, 12000, "2.5k"},
		{3e7, 1e7, 5e7, "30M"},
		{2e10, 1e10, 4e10, "20G"},
	}
	for _, c := range cases {
		if got := tickLabel(c.v, c.step, c.top); got != c.want {
			t.Errorf("tickLabel(%v, %v, %v) = %q, want %q", c.v, c.step, c.top, got, c.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{41.23, "41.2"},
		{4.123, "4.12"},
		{2, "2"},
		{812.37, "812"},
		{12345.6, "12346"},
		{0.01234, "0.0123"},
		{-3.5, "-3.5"},
		{0, "0"},
	}
	for _, c := range cases {
		if got := formatValue(c.v); got != c.want {
			t.Errorf("formatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := withUnit("95.2", "%"); got != "95.2%" {
		t.Errorf("withUnit percent = %q", got)
	}
	if got := withUnit("41.2", "ms"); got != "41.2 ms" {
		t.Errorf("withUnit ms = %q", got)
	}
}

func TestTimeAxis(t *testing.T) {
	cases := []struct {
		span   float64
		target int
		step   float64
		mode   timeMode
		label  float64 // a tick value and its label
		want   string
	}{
		{45, 9, 5, timeSeconds, 30, "30"},                   // under two minutes: seconds
		{600, 10, 60, timeMinutes, 540, "9:00"},             // ten minutes: m:ss by the minute
		{3600, 12, 300, timeMinutes, 3600, "60:00"},         // an hour still reads as m:ss
		{7200, 10, 900, timeHours, 6300, "1:45:00"},         // two hours: h:mm:ss
		{3, 6, 0.5, timeSeconds, 2.5, "2.5"},                // a short test: tenths
		{200, 8, 30, timeMinutes, 150, "2:30"},              // half minutes
		{86400 * 3, 5, 86400, timeHours, 86400, "24:00:00"}, // days: hours keep counting
	}
	for _, c := range cases {
		if got := timeStep(c.span, c.target); got != c.step {
			t.Errorf("timeStep(%v, %d) = %v, want %v", c.span, c.target, got, c.step)
		}
		m := timeModeFor(c.span)
		if m != c.mode {
			t.Errorf("timeModeFor(%v) = %v, want %v", c.span, m, c.mode)
		}
		if got := m.clock(c.label); got != c.want {
			t.Errorf("clock(%v) in mode %v = %q, want %q", c.label, m, got, c.want)
		}
	}
	if got := timeMinutes.hover(723); got != "12:03" {
		t.Errorf("hover(723) = %q, want 12:03", got)
	}
	if got := timeSeconds.hover(43); got != "43s" {
		t.Errorf("seconds hover(43) = %q, want 43s", got)
	}
}

func TestDownsampleKeepsSpikesAndBounds(t *testing.T) {
	const n = 3600
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range n {
		xs[i], ys[i] = float64(i+1), 10+wobble(i, 1)
	}
	ys[1234] = 500 // a one-tick spike
	ys[2345] = -40 // and a dip
	const buckets = 120
	segs := downsample(xs, ys, 0, n/buckets)
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1 (no gaps)", len(segs))
	}
	kept := segs[0]
	// At most the lowest and highest of each bucket (the bucket of x=n
	// is one past the last), plus the first and last samples.
	if max := 2*(buckets+1) + 2; len(kept) > max {
		t.Errorf("kept %d samples, want at most %d", len(kept), max)
	}
	for _, want := range []int{0, 1234, 2345, n - 1} {
		if !slices.Contains(kept, want) {
			t.Errorf("sample %d was dropped", want)
		}
	}
	if !slices.IsSorted(kept) {
		t.Errorf("kept samples are out of order: %v", kept)
	}
}

func TestDownsampleGapsAndSparseSeries(t *testing.T) {
	nan := math.NaN()
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	ys := []float64{5, 6, nan, nan, 7, nan, 8, 9}
	got := downsample(xs, ys, 0, 0.5) // buckets narrower than the samples
	want := [][]int{{0, 1}, {4}, {6, 7}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("downsample = %v, want %v: gaps split segments, sparse samples are all kept", got, want)
	}
	if got := downsample(xs, []float64{nan, nan, nan, nan, nan, nan, nan, nan}, 0, 1); len(got) != 0 {
		t.Errorf("all missing: %v, want no segment", got)
	}
}

func TestTimeChartSeriesAndHoverTitles(t *testing.T) {
	c := &TimeChart{ID: "lat", YLabel: "latency", YUnit: "ms"}
	for k, name := range []string{"p50", "p99"} {
		s := Series{Name: name, Color: k}
		for i := 1; i <= 800; i++ {
			s.Points = append(s.Points, Point{X: float64(i), Y: float64(10*(k+1)) + wobble(i, k)})
		}
		c.Series = append(c.Series, s)
	}
	c.Series[1].Points[722].Y = 41.23 // at 12:03, the highest value
	root, _ := parse(t, c)
	if root.attr["id"] != "lat" || root.attr["data-chart"] != "time" || !root.hasClass("svgplot") {
		t.Errorf("root attributes %v: want id, data-chart=time, class svgplot", root.attr)
	}
	for _, name := range []string{"p50", "p99"} {
		p := seriesPath(t, root, name)
		subs := subpaths(t, p.attr["d"])
		if len(subs) != 1 || len(subs[0]) < 100 {
			t.Errorf("%s: %d subpaths, want one line of many points", name, len(subs))
		}
		titles := seriesPoints(t, root, name).titles()
		// one hover point per drawn vertex
		if len(titles) != len(subs[0]) {
			t.Errorf("%s: %d hover titles for %d drawn points", name, len(titles), len(subs[0]))
		}
		if len(titles) >= 800 {
			t.Errorf("%s: %d hover titles for 800 samples: not downsampled", name, len(titles))
		}
	}
	if titles := seriesPoints(t, root, "p99").titles(); !slices.Contains(titles, "12:03 · p99 41.2 ms") {
		t.Errorf("no hover title %q among %d", "12:03 · p99 41.2 ms", len(titles))
	}
}

func TestGapBreaksTheLine(t *testing.T) {
	c := sweepLatency() // ticks 200..204 are missing
	root, _ := parse(t, c)
	for _, s := range c.Series {
		subs := subpaths(t, seriesPath(t, root, s.Name).attr["d"])
		if len(subs) != 2 {
			t.Fatalf("%s: %d subpaths, want 2 (broken at the gap)", s.Name, len(subs))
		}
		// Nothing is drawn at zero for the missing ticks: no vertex lies
		// between the last one before the gap and the first one after.
		x0, x1 := subs[0][len(subs[0])-1][0], subs[1][0][0]
		if x1-x0 < 5 {
			t.Errorf("%s: the gap spans %.1f px, want the width of 6 ticks", s.Name, x1-x0)
		}
		spike := false
		for _, title := range seriesPoints(t, root, s.Name).titles() {
			for _, missing := range []string{"3:20 ", "3:21 ", "3:22 ", "3:23 ", "3:24 "} {
				if strings.HasPrefix(title, missing) {
					t.Errorf("%s: hover point %q for a missing tick", s.Name, title)
				}
			}
			if strings.Contains(title, "NaN") {
				t.Errorf("%s: hover point %q", s.Name, title)
			}
			spike = spike || strings.HasPrefix(title, "5:33 ")
		}
		// The one-tick spike at 333 s survives downsampling.
		if !spike {
			t.Errorf("%s: no hover point for the spike at 5:33", s.Name)
		}
	}
}

func TestStackedChart(t *testing.T) {
	c := serverTime()
	root, _ := parse(t, c)
	if root.attr["data-chart"] != "stacked" {
		t.Errorf("data-chart = %q, want stacked", root.attr["data-chart"])
	}
	// Each layer's hover title gives its own value, placed on the top of
	// the stack so far: the top layer's points sit at the sum.
	for _, s := range c.Series {
		p := seriesPath(t, root, s.Name)
		if p.attr["class"] != "area" {
			t.Errorf("%s: class %q, want area", s.Name, p.attr["class"])
		}
		if subs := subpaths(t, p.attr["d"]); len(subs) != 2 {
			t.Errorf("%s: %d areas, want 2 (broken where statistics are missing)", s.Name, len(subs))
		}
	}
	tops := cumulate(c.Series)
	j := 10
	want := c.Series[0].Points[j].Y + c.Series[1].Points[j].Y + c.Series[2].Points[j].Y + c.Series[3].Points[j].Y
	if !near(tops[3][j], want) {
		t.Errorf("top of the stack at %d = %v, want the sum %v", j, tops[3][j], want)
	}
	if !math.IsNaN(tops[0][90]) {
		t.Errorf("a tick with missing statistics is stacked: %v", tops[0][90])
	}
	label := "0:11 · compute infer " + withUnit(formatValue(c.Series[2].Points[j].Y), "ms")
	if titles := seriesPoints(t, root, "compute infer").titles(); !slices.Contains(titles, label) {
		t.Errorf("no hover title %q", label)
	}
}

func TestXYChart(t *testing.T) {
	c := latencyCurve()
	// A curve past saturation turns back: the points stay in their order.
	c.Series[0].Points = append(c.Series[0].Points, Point{X: 700, Y: 120, Label: "c=128"})
	root, _ := parse(t, c)
	for _, s := range c.Series {
		subs := subpaths(t, seriesPath(t, root, s.Name).attr["d"])
		if len(subs) != 1 || len(subs[0]) != len(s.Points) {
			t.Fatalf("%s: want one line through all %d points, got %v", s.Name, len(s.Points), subs)
		}
		for i := 1; i < len(subs[0]); i++ {
			if (subs[0][i][0] < subs[0][i-1][0]) != (s.Points[i].X < s.Points[i-1].X) {
				t.Errorf("%s: point %d drawn out of order", s.Name, i)
			}
		}
	}
	titles := seriesPoints(t, root, "sync c=1..64").titles()
	if want := "sync c=1..64 · c=128 · 700 req/s · 120 ms"; !slices.Contains(titles, want) {
		t.Errorf("no hover title %q in %q", want, titles)
	}
	hs := root.find(func(n *node) bool { return n.hasClass("highlight") })
	if len(hs) != 2 || hs[0].attr["data-label"] != "knee c=16" {
		t.Errorf("want 2 highlights labelled knee c=16, got %d", len(hs))
	}
	refs := root.find(func(n *node) bool { return n.hasClass("ref") })
	if len(refs) != 1 || refs[0].attr["data-label"] != "SLO 50 ms" {
		t.Errorf("want the SLO line, got %d reference lines", len(refs))
	}
}

func TestLabelsKeepApart(t *testing.T) {
	// Markers every 20 s over ten minutes: too many for one row.
	var ms []Marker
	for i := range 30 {
		ms = append(ms, Marker{X: float64(20 * i), Label: fmt.Sprintf("%d req/s", 100*(i+1))})
	}
	x := linear{0, 600, 60, 780}
	placed := placeMarkers(ms, x, 800)
	rows, hidden := 0, 0
	for i, p := range placed {
		if p.row < 0 {
			hidden++
			continue
		}
		rows = max(rows, p.row+1)
		if p.x < 0 || p.x+p.w > 800 {
			t.Errorf("label %q at %.0f..%.0f leaves the chart", ms[i].Label, p.x, p.x+p.w)
		}
		for j, q := range placed[:i] {
			if q.row == p.row && p.x < q.x+q.w && q.x < p.x+p.w {
				t.Errorf("labels %q and %q overlap in row %d", ms[i].Label, ms[j].Label, p.row)
			}
		}
	}
	if rows != maxMarkerRow || hidden == 0 {
		t.Errorf("rows %d, hidden %d: want all %d rows used and the rest left to hover", rows, hidden, maxMarkerRow)
	}

	// The legend of 15 series wraps inside the chart.
	c := hourRun(15)
	c.Series = c.Series[:15]
	f, err := layout(frameSpec{width: 800, height: 280, legend: legendFor(c.Series), xTime: true, xHi: 3600, yHi: 50})
	if err != nil {
		t.Fatal(err)
	}
	if legendRows(f.legend) < 2 {
		t.Errorf("15 legend entries in one row of 800 px")
	}
	for _, it := range f.legend {
		if end := it.x + legendSwatch + 5 + textWidth(it.label, fontPx); end > 800-padPx+0.01 {
			t.Errorf("legend entry %q ends at %.0f, past the chart", it.name, end)
		}
	}
}

func TestHighlightLabelsKeepApart(t *testing.T) {
	for _, width := range []int{300, 500, 800} {
		c := latencyCurve()
		c.Width, c.Height = width, 220
		root, _ := parse(t, c)
		type box struct{ x0, x1, y0, y1 float64 }
		var boxes []box
		for _, h := range root.find(func(n *node) bool { return n.hasClass("highlight") }) {
			for _, txt := range h.find(func(n *node) bool { return n.name == "text" }) {
				var x, y float64
				fmt.Sscan(txt.attr["x"], &x)
				fmt.Sscan(txt.attr["y"], &y)
				w := textWidth(txt.text, fontPx) * 1.1
				switch txt.attr["text-anchor"] {
				case "end":
					x -= w
				case "middle":
					x -= w / 2
				}
				b := box{x, x + w, y - fontPx, y}
				for _, o := range boxes {
					if b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1 {
						t.Errorf("width %d: highlight labels overlap: %v and %v", width, b, o)
					}
				}
				boxes = append(boxes, b)
			}
		}
		if len(boxes) != 2 {
			t.Errorf("width %d: %d highlight labels, want 2", width, len(boxes))
		}
	}
}

func legendFor(ss []Series) []legendItem {
	var out []legendItem
	for _, s := range ss {
		out = append(out, legendItem{name: s.Name, stroke: s.stroke(), dash: s.dash()})
	}
	return out
}

func TestColorsFollowTheIndex(t *testing.T) {
	a := &TimeChart{Series: []Series{{Name: "A p99", Color: 0, Points: []Point{{1, 1, ""}}}, {Name: "B p99", Color: 1, Points: []Point{{1, 2, ""}}}}}
	b := &XYChart{Series: []Series{{Name: "B", Color: 1, Points: []Point{{1, 2, ""}}}, {Name: "A", Color: 0, Points: []Point{{1, 1, ""}}}}}
	ra, _ := parse(t, a)
	rb, _ := parse(t, b)
	if got := seriesPath(t, ra, "B p99").attr["stroke"]; got != palette[1] || seriesPath(t, rb, "B").attr["stroke"] != got {
		t.Errorf("series with colour 1: stroke %q and %q, want %q on both charts", got, seriesPath(t, rb, "B").attr["stroke"], palette[1])
	}
	if ColorOf(PaletteLen+2) != palette[2] || !dashedIndex(PaletteLen+2) || dashedIndex(2) {
		t.Errorf("past the palette, colours repeat dashed")
	}
	c := hourRun(12)
	root, _ := parse(t, c)
	if seriesPath(t, root, "series 11").attr["stroke-dasharray"] == "" || seriesPath(t, root, "series 1").attr["stroke-dasharray"] != "" {
		t.Errorf("the 11th series should be dashed and the first solid")
	}
}

func TestSelfContainedAndEscaped(t *testing.T) {
	name := `<b>&"run's"</b>`
	c := &TimeChart{Title: "t <1>", Series: []Series{{Name: name, Points: []Point{{1, 1, ""}, {2, 3, ""}}}},
		Markers: []Marker{{X: 1, Label: "a&b"}}, Refs: []RefLine{{Y: 2, Label: "<SLO>"}}}
	root, raw := parse(t, c) // parse fails on broken markup
	if seriesPath(t, root, name) == nil {
		t.Fatal("series not found by its name")
	}
	s := string(raw)
	for _, bad := range []string{"<script", "href", "url(", "@import", "<image", "<foreignObject"} {
		if strings.Contains(s, bad) {
			t.Errorf("output contains %q: a chart must need nothing outside itself", bad)
		}
	}
	if strings.Count(s, "http") != 1 { // the SVG namespace only
		t.Errorf("output names %d URLs, want only the SVG namespace", strings.Count(s, "http"))
	}
}

func TestInvalidCharts(t *testing.T) {
	pts := []Point{{1, 1, ""}, {2, 2, ""}}
	cases := []struct {
		name  string
		chart chart
		want  string
	}{
		{"no name", &TimeChart{Series: []Series{{Points: pts}}}, "has no name"},
		{"same name", &TimeChart{Series: []Series{{Name: "a", Points: pts}, {Name: "a", Points: pts}}}, "used twice"},
		{"time goes back", &TimeChart{Series: []Series{{Name: "a", Points: []Point{{2, 1, ""}, {1, 1, ""}}}}}, "must not decrease"},
		{"infinite value", &TimeChart{Series: []Series{{Name: "a", Points: []Point{{1, math.Inf(1), ""}}}}}, "finite value, or NaN"},
		{"NaN time", &XYChart{Series: []Series{{Name: "a", Points: []Point{{math.NaN(), 1, ""}}}}}, "x must be a finite number"},
		{"small", &TimeChart{Width: 100}, "width 100 is too small"},
		{"stack lengths", &TimeChart{Stacked: true, Series: []Series{{Name: "a", Points: pts}, {Name: "b", Points: pts[:1]}}}, "need the same times"},
		{"stack times", &TimeChart{Stacked: true, Series: []Series{{Name: "a", Points: pts}, {Name: "b", Points: []Point{{1, 1, ""}, {3, 1, ""}}}}}, "need the same times"},
		{"stack negative", &TimeChart{Stacked: true, Series: []Series{{Name: "a", Points: []Point{{1, -1, ""}}}}}, "negative"},
		{"ref", &XYChart{Refs: []RefLine{{Y: math.NaN(), Label: "SLO"}}}, `reference line "SLO"`},
		{"knee", &XYChart{Highlights: []Highlight{{X: math.Inf(1), Label: "knee"}}}, `highlight "knee"`},
		{"legend fills the chart", &TimeChart{Height: MinHeight, Series: manyNames(60)}, "leaves no room"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tc.chart.WriteSVG(&buf)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes with an error", buf.Len())
			}
		})
	}
}

func manyNames(n int) []Series {
	var out []Series
	for i := range n {
		out = append(out, Series{Name: fmt.Sprintf("a long series name %d", i), Color: i})
	}
	return out
}

func TestEmptyChartsDraw(t *testing.T) {
	for _, c := range []chart{&TimeChart{}, &XYChart{}, &TimeChart{Stacked: true}, &TimeChart{Series: []Series{{Name: "none"}}}} {
		root, _ := parse(t, c)
		if len(root.find(func(n *node) bool { return n.hasClass("axis") })) != 2 {
			t.Errorf("%T: an empty chart still draws its two axes", c)
		}
	}
}

// TestHourRunSize checks the budget that keeps a report of a one-hour run
// at one tick per second under 2 MB: one chart of 15 series stays under
// 320 KiB, however many samples it has.
func TestHourRunSize(t *testing.T) {
	root, raw := parse(t, hourRun(15))
	if len(raw) > 320<<10 {
		t.Errorf("3600 x 15 chart is %d bytes, want at most 320 KiB", len(raw))
	}
	for i := 1; i <= 15; i++ {
		name := fmt.Sprintf("series %d", i)
		n := len(seriesPoints(t, root, name).titles())
		if n == 0 || n > 2*(800/bucketPx)+4 {
			t.Errorf("%s: %d hover points, want at most two per %d px bucket", name, n, bucketPx)
		}
	}
	t.Logf("3600 x 15 chart: %d bytes", len(raw))
}

func BenchmarkTimeChartHour15(b *testing.B) {
	c := hourRun(15)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := c.WriteSVG(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "svg-bytes")
}

func BenchmarkStackedHour(b *testing.B) {
	c := hourRun(4)
	c.Stacked = true
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := c.WriteSVG(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "svg-bytes")
}

// TestLongLegendNameShortened: a series name wider than the chart is cut
// to fit its legend row with an ellipsis; the whole name stays in the
// document (the entry's title).
func TestLongLegendNameShortened(t *testing.T) {
	long := strings.Repeat("a-very-long-model-name ", 20)
	c := &TimeChart{ID: "thr", YLabel: "throughput", YUnit: "infer/s", Width: 400}
	s := Series{Name: long}
	for i := 1; i <= 10; i++ {
		s.Points = append(s.Points, Point{X: float64(i), Y: float64(i)})
	}
	c.Series = []Series{s}
	_, doc := parse(t, c)
	text := string(doc)
	if !strings.Contains(text, "…</text>") {
		t.Errorf("the legend entry was not shortened:\n%.600s", text)
	}
	if !strings.Contains(text, strings.TrimSpace(long)) {
		t.Error("the whole name is not in the document")
	}
}
