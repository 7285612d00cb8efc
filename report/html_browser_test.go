package report

import (
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/browsertest"
)

// DocsScreenshotEnv names the environment variable that makes
// TestHTMLInChromium also write its screenshot to docs/report.png, the
// README's picture of a report:
//
//	TRITONTOP_DOCS_SCREENSHOT=1 go test ./report -run TestHTMLInChromium
const DocsScreenshotEnv = "TRITONTOP_DOCS_SCREENSHOT"

// writePage writes a rendered report to a file for the browser.
func writePage(t *testing.T, name, page string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHTMLInChromium opens the report of a recorded sweep in headless
// Chromium: no console error, no network request beyond the file itself,
// every chart there with a drawn path for each series, the SLO line and
// the knee on the latency–throughput curve, and a 1280x2000 screenshot in
// the test's artifact folder. It skips, saying so, without Chromium.
func TestHTMLInChromium(t *testing.T) {
	page := renderHTML(t, HTMLRun{Label: "sweep", File: "testdata/sweep.jsonl", Run: frozenRun(t, "sweep")})
	p := browsertest.Open(t, writePage(t, "sweep.html", page))

	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("the report made network requests: %v", ext)
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0].URL != p.URL() {
		t.Errorf("requests %v, want only the page itself", reqs)
	}
	if n := p.Count("script"); n != 0 {
		t.Errorf("%d script elements", n)
	}

	checkChartsDrawn(t, p, sweepCharts)
	if got := p.Attrs("#curve path.ref", "data-label"); len(got) != 1 || got[0] != "SLO p99 < 80.0 ms" {
		t.Errorf("SLO lines on the curve: %q", got)
	}
	if got := p.Attrs("#latency path.ref", "data-label"); len(got) != 1 {
		t.Errorf("SLO lines on the latency chart: %q", got)
	}
	if got := p.Attrs("#curve g.highlight", "data-label"); len(got) != 2 || got[0] != "knee c=17" {
		t.Errorf("curve highlights %q, want the knee first", got)
	}
	if got := p.Texts("#curve g.highlight text"); len(got) != 2 || got[0] != "knee c=17" {
		t.Errorf("the knee's label is not drawn: %q", got)
	}
	if n := p.Count("table.steps-table tbody tr"); n != 8 {
		t.Errorf("%d step rows, want 8", n)
	}
	if got := p.Texts("tr.knee td.badge"); len(got) != 1 || got[0] != "knee" {
		t.Errorf("knee row badge %q", got)
	}

	dir := browsertest.ArtifactDir(t)
	path := p.Screenshot(dir, "report", 1280, 2000)
	checkPNG(t, path, 1280, 2000)
	t.Logf("screenshot: %s", path)
	if os.Getenv(DocsScreenshotEnv) != "" {
		docs := filepath.Join("..", "docs", "report.png")
		if err := copyFile(path, docs); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", docs)
	}
}

// checkChartsDrawn fails unless the page has exactly the charts ids, each
// once, each with a legend, a drawn path for every series and hover titles.
func checkChartsDrawn(t *testing.T, p *browsertest.Page, ids []string) {
	t.Helper()
	if n := p.Count("svg.svgplot"); n != len(ids) {
		t.Errorf("%d charts, want %d: %v", n, len(ids), ids)
	}
	for _, id := range ids {
		sel := "svg.svgplot#" + id
		if n := p.Count(sel); n != 1 {
			t.Errorf("%d charts %s, want 1", n, sel)
			continue
		}
		legend := p.Attrs(sel+" g.legend-item", "data-legend")
		if len(legend) == 0 {
			t.Errorf("chart %s has no legend", id)
		}
		for _, name := range legend {
			d := p.Attrs(sel+` path[data-series="`+strings.ReplaceAll(name, `"`, `\"`)+`"]`, "d")
			if len(d) != 1 || !strings.HasPrefix(d[0], "M") || len(d[0]) < 12 {
				t.Errorf("chart %s, series %q: path data %q, want one drawn path", id, name, d)
			}
		}
		if n := p.Count(sel + " .pts circle > title"); n == 0 {
			t.Errorf("chart %s has no hover titles", id)
		}
	}
}

// TestStreamingInChromium opens the report of a decoupled LLM's recorded
// sweep in headless Chromium: every chart drawn, the time to first
// response and between responses among them, and the responses' columns
// of the step table on screen.
func TestStreamingInChromium(t *testing.T) {
	page := renderHTML(t, HTMLRun{Label: "llm", File: "testdata/llm-steps.jsonl", Run: frozenRun(t, "llm-steps")})
	p := browsertest.Open(t, writePage(t, "llm.html", page))
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("the report made network requests: %v", ext)
	}
	checkChartsDrawn(t, p, llmCharts)
	for _, id := range []string{"ttft", "itl"} {
		if got := p.Texts("#" + id + " g.legend-item text"); strings.Join(got, ",") != "p50,p90,p99" {
			t.Errorf("chart %s: legend %q", id, got)
		}
	}
	head := p.Texts("table.steps-table thead th")
	if i := slices.Index(head, "TTFT p50 ms"); i < 2 || !slices.Equal(head[i-2:i+4], []string{"p99 ms", "resp/s", "TTFT p50 ms", "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms"}) {
		t.Errorf("step table heading %q", head)
	}
	if n := p.Count("table.steps-table tbody tr"); n != 4 {
		t.Errorf("%d step rows, want 4", n)
	}
	checkPNG(t, p.Screenshot(browsertest.ArtifactDir(t), "llm", 1280, 2000), 1280, 2000)
}

// TestTwoRunsInChromium: the report of concurrency 1 and concurrency 16 on
// the demo model shows both runs on one chart, by label and by path.
func TestTwoRunsInChromium(t *testing.T) {
	page := renderHTML(t,
		HTMLRun{Label: "c=1", File: "c1.jsonl", Run: frozenRun(t, "c1")},
		HTMLRun{Label: "c=16", File: "c16.jsonl", Run: frozenRun(t, "c16")})
	p := browsertest.Open(t, writePage(t, "two.html", page))
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("the report made network requests: %v", ext)
	}
	if got := p.Texts("#throughput g.legend-item text"); strings.Join(got, ",") != "c=1,c=16" {
		t.Errorf("throughput legend %q, want both runs", got)
	}
	for _, label := range []string{"c=1", "c=16"} {
		d := p.Attrs(`#throughput path.line[data-series="`+label+`"]`, "d")
		if len(d) != 1 || !strings.HasPrefix(d[0], "M") {
			t.Errorf("run %s: throughput path %q", label, d)
		}
	}
	if got := p.Attrs("div.run", "data-run"); strings.Join(got, ",") != "c=1,c=16" {
		t.Errorf("run headers %q", got)
	}
	checkPNG(t, p.Screenshot(browsertest.ArtifactDir(t), "two-runs", 1280, 2000), 1280, 2000)
}

// TestReplicasInChromium opens the report of a run over two replicas, one
// of them out for two ticks: the replica charts drawn among the others,
// the replica out shaded on each, a table row per replica on screen.
func TestReplicasInChromium(t *testing.T) {
	page := renderHTML(t, HTMLRun{Label: "two replicas", File: "rep.jsonl", Run: replicaRecord(t)})
	p := browsertest.Open(t, writePage(t, "replicas.html", page))
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("the report made network requests: %v", ext)
	}
	checkChartsDrawn(t, p, append(slices.Clone(replicaCharts), "throughput", "latency", "server-time", "batch", "gpu-utilization", "errors"))
	for _, id := range replicaCharts {
		if got := p.Attrs("#"+id+" g.band", "data-label"); strings.Join(got, ",") != "b:8001 out" {
			t.Errorf("chart %s: bands %q, want b's time out", id, got)
		}
		if got := p.Attrs("#"+id+" g.legend-band", "data-band"); strings.Join(got, ",") != "b:8001 out" {
			t.Errorf("chart %s: band legend %q", id, got)
		}
	}
	if got := p.Attrs("table.replicas-table tbody tr", "data-replica"); strings.Join(got, ",") != "a:8001,b:8001" {
		t.Errorf("replica rows %q", got)
	}
	if got := p.Texts("table.replicas-table tbody tr.out td:last-child"); strings.Join(got, ",") != "1" {
		t.Errorf("times out of the replica that went out: %q", got)
	}
	checkPNG(t, p.Screenshot(browsertest.ArtifactDir(t), "replicas", 1280, 2000), 1280, 2000)
}

func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if cfg.Width != w || cfg.Height != h {
		t.Errorf("screenshot is %dx%d, want %dx%d", cfg.Width, cfg.Height, w, h)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
