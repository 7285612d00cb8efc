package browsertest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/report/svgplot"
)

// writePage writes an HTML page with the given body to a temporary file.
func writePage(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	html := "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>test</title></head><body>\n" + body + "\n</body></html>\n"
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// chartPage is a self-contained page with one latency chart of two series.
func chartPage(t *testing.T) string {
	t.Helper()
	c := svgplot.TimeChart{ID: "latency", Title: "Latency", YLabel: "latency", YUnit: "ms",
		Refs: []svgplot.RefLine{{Y: 40, Label: "SLO 40 ms"}}, Markers: []svgplot.Marker{{X: 30, Label: "c=16"}}}
	for k, name := range []string{"p50", "p99"} {
		s := svgplot.Series{Name: name, Color: k}
		for i := 1; i <= 60; i++ {
			s.Points = append(s.Points, svgplot.Point{X: float64(i), Y: float64(10+20*k) + float64(i%7)})
		}
		c.Series = append(c.Series, s)
	}
	var svg bytes.Buffer
	if err := c.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	return writePage(t, "<h1>Run</h1>\n"+svg.String())
}

func TestSelfContainedChartPage(t *testing.T) {
	p := Open(t, chartPage(t))

	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("a self-contained page made requests: %v", ext)
	}
	// The page's own load is the one request seen.
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0].URL != p.URL() || reqs[0].Type != "Document" || reqs[0].Failed != "" {
		t.Errorf("requests %v, want only the document %s", reqs, p.URL())
	}

	if n := p.Count("svg#latency.svgplot"); n != 1 {
		t.Fatalf("%d charts #latency, want 1", n)
	}
	for _, name := range []string{"p50", "p99"} {
		d := p.Attrs(`#latency path[data-series="`+name+`"]`, "d")
		if len(d) != 1 || !strings.HasPrefix(d[0], "M") || len(d[0]) < 100 {
			t.Errorf("series %s: path data %q, want one drawn line", name, d)
		}
	}
	if got := p.Attrs("#latency path.ref", "data-label"); len(got) != 1 || got[0] != "SLO 40 ms" {
		t.Errorf("reference lines %q, want the SLO", got)
	}
	if got := p.Texts("#latency .legend text"); strings.Join(got, ",") != "p50,p99" {
		t.Errorf("legend %q, want p50,p99", got)
	}
	if n := p.Count("#latency .pts circle > title"); n < 100 {
		t.Errorf("%d hover titles, want one per drawn point of 2×60", n)
	}
	if n := p.Count("no-such-element"); n != 0 {
		t.Errorf("Count of nothing = %d", n)
	}

	path := p.Screenshot(ArtifactDir(t), "chart", 1280, 2000)
	img := readPNG(t, path)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Fatalf("screenshot is %dx%d, want 1280x2000", b.Dx(), b.Dy())
	}
	// The chart drew in its series' colours: look for the first series'
	// blue and the SLO red among the pixels of the chart's area.
	if !hasColor(img, image.Rect(0, 0, 820, 400), svgplot.ColorOf(0)) {
		t.Errorf("no pixel of the p50 colour %s in the chart area of %s", svgplot.ColorOf(0), path)
	}
	if !hasColor(img, image.Rect(0, 0, 820, 400), svgplot.ColorOf(1)) {
		t.Errorf("no pixel of the p99 colour %s in the chart area of %s", svgplot.ColorOf(1), path)
	}
	t.Logf("screenshot: %s", path)
}

func TestPageThatReachesOutOrFails(t *testing.T) {
	page := writePage(t, `
<img src="http://192.0.2.1/logo.png" alt="logo">
<link rel="stylesheet" href="https://fonts.example.com/font.css">
<script>
console.log("hello", 42);
console.warn("careful");
console.error("boom:", "the chart is missing");
throw new Error("uncaught in test page");
</script>`)
	p := Open(t, page)

	ext := p.ExternalRequests()
	want := map[string]bool{"http://192.0.2.1/logo.png": false, "https://fonts.example.com/font.css": false}
	for _, r := range ext {
		if _, ok := want[r.URL]; ok {
			want[r.URL] = true
		}
	}
	for u, seen := range want {
		if !seen {
			t.Errorf("request for %s not reported; got %v", u, ext)
		}
	}
	// The browser was told to block them: nothing left the machine.
	for _, r := range ext {
		if r.Failed == "" {
			t.Errorf("request %v went out, want it blocked", r)
		}
	}

	var consoleErr, exception, log, warning bool
	for _, m := range p.Messages() {
		switch {
		case m.Source == "console" && m.Level == "error" && m.Text == "boom: the chart is missing":
			consoleErr = true
		case m.Level == "exception" && strings.Contains(m.Text, "uncaught in test page"):
			exception = true
		case m.Source == "console" && m.Level == "log" && m.Text == "hello 42":
			log = true
		case m.Source == "console" && m.Level == "warning" && m.Text == "careful":
			warning = true
		}
	}
	if !consoleErr || !exception || !log || !warning {
		t.Errorf("console error %v, exception %v, log %v, warning %v; messages: %v", consoleErr, exception, log, warning, p.Messages())
	}
	for _, m := range p.Errors() {
		if !m.IsError() {
			t.Errorf("Errors returned %v", m)
		}
	}
	if len(p.Errors()) < 2 {
		t.Errorf("Errors() = %v, want the console error and the exception", p.Errors())
	}
}

func TestMissingBrowserSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no chromium on PATH either
	_, err := findBrowser(filepath.Join(t.TempDir(), "chromium"))
	if err == nil || !strings.Contains(err.Error(), "chromium not installed: apt-get install chromium") {
		t.Fatalf("err = %v, want the install hint", err)
	}
}

func TestArtifactDir(t *testing.T) {
	root := t.TempDir()
	t.Setenv(ArtifactsEnv, root)
	dir := ArtifactDir(t)
	if dir != filepath.Join(root, "TestArtifactDir") {
		t.Errorf("ArtifactDir = %s, want a folder named for the test under %s", dir, root)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("ArtifactDir did not make %s: %v", dir, err)
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	return img
}

// hasColor reports whether a pixel in r is within a small distance of the
// CSS colour hex ("#1f77b4"); anti-aliasing blends the edges of lines, so
// the test allows some slack.
func hasColor(img image.Image, r image.Rectangle, hex string) bool {
	var want color.RGBA
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &want.R, &want.G, &want.B); err != nil {
		return false
	}
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near8(cr>>8, want.R) && near8(cg>>8, want.G) && near8(cb>>8, want.B) {
				return true
			}
		}
	}
	return false
}

func near8(a uint32, b uint8) bool {
	d := int(a) - int(b)
	return d >= -12 && d <= 12
}
