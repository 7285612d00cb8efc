package report

import (
	"html"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report/svgplot"
	"github.com/tritontop/tritontop/stats"
)

// replicaRecord is replicaRun (two replicas, b out in ticks 4 and 5) as a
// run read from a file.
func replicaRecord(t *testing.T) *record.Run {
	t.Helper()
	return &record.Run{
		Header: record.Header{Server: record.ServerInfo{URL: "a:8001,b:8001", Protocol: "gRPC",
			Replicas: []string{"a:8001", "b:8001"}, Balance: "least"}, Model: record.ModelInfo{Name: "m"},
			Interval: time.Second, Load: stats.Load{Mode: "concurrency", Concurrency: 4}},
		Snapshots: replicaRun(t),
	}
}

var (
	replicaRowRe = regexp.MustCompile(`(?s)<tr data-replica="([^"]*)"[^>]*>(.*?)</tr>`)
	cellRe       = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	swatchRe     = regexp.MustCompile(`<svg class="line-swatch".*?</svg>`)
	bandRe       = regexp.MustCompile(`<g class="band" data-label="([^"]*)"[^>]*><rect[^>]*><title>([^<]*)</title>`)
)

// replicaRows reads the replica tables of a page: each row's cells by URL
// (a URL in several tables gets the first).
func replicaTableRows(page string) map[string][]string {
	out := map[string][]string{}
	for _, m := range replicaRowRe.FindAllStringSubmatch(page, -1) {
		var cells []string
		for _, c := range cellRe.FindAllStringSubmatch(m[2], -1) {
			cells = append(cells, html.UnescapeString(swatchRe.ReplaceAllString(c[1], "")))
		}
		if _, dup := out[m[1]]; !dup {
			out[m[1]] = cells
		}
	}
	return out
}

// bandsOf are the out-of-service bands of a chart's SVG: label → titles.
func bandsOf(page, id string) map[string][]string {
	svg := ""
	for _, m := range svgRe.FindAllStringSubmatch(page, -1) {
		if m[2] == id {
			svg = m[0]
		}
	}
	out := map[string][]string{}
	for _, m := range bandRe.FindAllStringSubmatch(svg, -1) {
		label := html.UnescapeString(m[1])
		out[label] = append(out[label], html.UnescapeString(m[2]))
	}
	return out
}

// expectedReplicaRow computes replica k's table row straight from the
// ticks: its requests and their share, inferences over its ticks' time,
// latency, errors, Triton's queue and compute weighted by the requests
// they average over, its GPU's mean utilization, the ticks at whose end it
// was in, and how many times it went out.
func expectedReplicaRow(t *testing.T, snaps []stats.Snapshot, k int) []string {
	t.Helper()
	var req, all, inf, errs, succ, computeN int64
	var secs, queueNs, computeNs, gpuSum float64
	var p50, p99 time.Duration
	gpuN, up, downs := 0, 0, 0
	wasDown := false
	for _, s := range snaps {
		r := s.Replicas[k]
		all += s.Tick.Requests
		req += r.Tick.Requests
		inf += r.Tick.Inferences
		errs += r.Tick.Errors
		secs += r.Tick.Duration.Seconds()
		if r.Tick.Latency.Count > 0 {
			if p50 != 0 && (p50 != r.Tick.Latency.P50 || p99 != r.Tick.Latency.P99) {
				t.Fatalf("replica %d's latency changes between ticks: the test reads it off one tick", k)
			}
			p50, p99 = r.Tick.Latency.P50, r.Tick.Latency.P99
		}
		if sv := r.Server; sv.Available && !sv.Reset {
			n := sv.SuccessCount - sv.CacheHitCount
			succ += sv.SuccessCount
			queueNs += float64(sv.Queue) * float64(sv.SuccessCount)
			computeNs += float64(sv.Compute()) * float64(n)
			computeN += n
		}
		if r.Metrics.Available {
			gpuSum += r.Metrics.GPUs[0].Utilization
			gpuN++
		}
		if r.Up {
			up++
		} else if !wasDown {
			downs++
		}
		wasDown = !r.Up
	}
	ms := func(ns float64) string { return strconv.FormatFloat(ns/1e6, 'f', 2, 64) }
	return []string{
		snaps[0].Replicas[k].URL, strconv.FormatInt(req, 10),
		strconv.FormatFloat(100*float64(req)/float64(all), 'f', 1, 64) + "%",
		strconv.FormatFloat(float64(inf)/secs, 'f', 1, 64),
		ms(float64(p50)), ms(float64(p99)), strconv.FormatInt(errs, 10),
		ms(queueNs / float64(succ)), ms(computeNs / float64(computeN)),
		strconv.FormatFloat(100*gpuSum/float64(gpuN), 'f', 1, 64) + "%",
		strconv.Itoa(up) + " / " + strconv.Itoa(len(snaps)), strconv.Itoa(downs),
	}
}

var replicaCharts = []string{"replica-throughput", "replica-queue", "replica-state"}

// TestHTMLOfReplicas renders a run over two replicas of which b was out
// for two ticks: a Replicas section with a row per replica whose numbers
// are the ticks', and charts of throughput and queue time per replica (a
// drawn line for each, in the run's colour with its own shade and dash)
// and of the replicas in service, b's time out shaded on each, with the
// load change marked.
func TestHTMLOfReplicas(t *testing.T) {
	run := replicaRecord(t)
	page := renderHTML(t, HTMLRun{Label: "two replicas", File: "rep.jsonl", Run: run})
	selfContained(t, page)
	if os.Getenv("TRITONTOP_KEEP_PAGE") != "" {
		_ = os.WriteFile(os.Getenv("TRITONTOP_KEEP_PAGE"), []byte(page), 0o644)
	}
	if !strings.Contains(page, `<section id="replicas">`) {
		t.Fatal("no Replicas section")
	}

	rows := replicaTableRows(page)
	if len(rows) != 2 {
		t.Fatalf("replica rows %q, want a and b", rows)
	}
	for k, url := range []string{"a:8001", "b:8001"} {
		want := expectedReplicaRow(t, run.Snapshots, k)
		if got := rows[url]; !slices.Equal(got, want) {
			t.Errorf("row of %s\n got %q\nwant %q", url, got, want)
		}
	}
	// The numbers the ticks were built from, so that the expectation above
	// is itself checked: b answered 50 a tick at 8 ms, in 4 ticks of 6.
	if got := rows["b:8001"]; got[1] != "200" || got[2] != "25.0%" || got[3] != "33.3" || got[5] != "8.00" || got[7] != "5.00" || got[10] != "4 / 6" || got[11] != "1" {
		t.Errorf("b's row %q", got)
	}
	if !strings.Contains(page, "Balanced by least outstanding requests") {
		t.Error("the table does not say how requests were balanced")
	}

	charts := readCharts(t, page)
	for _, id := range replicaCharts {
		c, ok := charts[id]
		if !ok {
			t.Errorf("no chart %s", id)
			continue
		}
		checkDrawn(t, c)
		if !slices.Equal(c.markers, []string{"c=4"}) {
			t.Errorf("chart %s: load markers %q", id, c.markers)
		}
		// b was out at the end of ticks 4 and 5: from 3 s to 5 s.
		bands := bandsOf(page, id)
		if got := bands["b:8001 out"]; !slices.Equal(got, []string{"b:8001 out · 3s to 5s"}) || len(bands) != 1 {
			t.Errorf("chart %s: out-of-service bands %q, want b's from 3 s to 5 s only", id, bands)
		}
	}
	for _, id := range []string{"replica-throughput", "replica-queue"} {
		if got := charts[id].legend; !slices.Equal(got, []string{"a:8001", "b:8001"}) {
			t.Errorf("chart %s: legend %q, want one series per replica named by its URL", id, got)
		}
	}
	if got := charts["replica-state"].legend; !slices.Equal(got, []string{"in service"}) {
		t.Errorf("state chart legend %q", got)
	}
	// b's queue line breaks where it answered nothing.
	if n := strings.Count(charts["replica-queue"].paths["b:8001"], "M"); n != 2 {
		t.Errorf("b's queue line has %d pieces, want 2 around its time out", n)
	}
	for _, want := range []string{
		// Hover titles with the exact values.
		"<title>4s · b:8001 0 infer/s</title>", "<title>2s · a:8001 100 infer/s</title>",
		"<title>2s · b:8001 5 ms</title>", "<title>4s · in service 1</title>",
		// Both replicas in the run's colour, b in a darker shade and dashed.
		`data-series="a:8001" stroke="` + svgplot.ColorOf(0) + `"`,
		`data-series="b:8001" stroke="` + svgplot.VariantColor(0, 1) + `" stroke-dasharray="` + svgplot.VariantDash(1) + `"`,
		`stroke="` + svgplot.VariantColor(0, 1) + `" stroke-dasharray="` + svgplot.VariantDash(1) + `"/></svg>b:8001</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Index(page, `<section id="replicas">`) > strings.Index(page, `<section id="over-time">`) {
		t.Error("the Replicas section comes after the charts over time")
	}
}

// TestHTMLWithoutReplicas: a run of one server has no Replicas section and
// no replica chart.
func TestHTMLWithoutReplicas(t *testing.T) {
	page := renderHTML(t, HTMLRun{Label: "sweep", File: "sweep.jsonl", Run: frozenRun(t, "sweep")})
	for _, bad := range []string{`id="replicas"`, "replicas-table", "Replicas", `class="band"`, "legend-band"} {
		if strings.Contains(page, bad) {
			t.Errorf("a run of one server has %q", bad)
		}
	}
	for _, id := range replicaCharts {
		if _, ok := readCharts(t, page)[id]; ok {
			t.Errorf("a run of one server has the chart %s", id)
		}
	}
}

// TestHTMLOfReplicasOverlaid: with two run files, each run's replicas are
// named after its label, in its colour, each with its own table; a run of
// one server beside them adds nothing to the section.
func TestHTMLOfReplicasOverlaid(t *testing.T) {
	page := renderHTML(t,
		HTMLRun{Label: "before", File: "before.jsonl", Run: replicaRecord(t)},
		HTMLRun{Label: "one server", File: "c1.jsonl", Run: frozenRun(t, "c1")},
		HTMLRun{Label: "after", File: "after.jsonl", Run: replicaRecord(t)})
	charts := readCharts(t, page)
	want := []string{"before a:8001", "before b:8001", "after a:8001", "after b:8001"}
	for _, id := range []string{"replica-throughput", "replica-queue"} {
		c := charts[id]
		checkDrawn(t, c)
		if !slices.Equal(c.legend, want) {
			t.Errorf("chart %s: legend %q, want %q", id, c.legend, want)
		}
		if got := bandsOf(page, id); len(got) != 2 || len(got["before b:8001 out"]) != 1 || len(got["after b:8001 out"]) != 1 {
			t.Errorf("chart %s: bands %q, want each run's b", id, got)
		}
	}
	if got := charts["replica-state"].legend; !slices.Equal(got, []string{"before in service", "after in service"}) {
		t.Errorf("state chart legend %q", got)
	}
	// The third run is the third colour: its replicas are drawn in it.
	for _, w := range []string{`data-series="after a:8001" stroke="` + svgplot.ColorOf(2) + `"`,
		`data-series="after b:8001" stroke="` + svgplot.VariantColor(2, 1) + `"`,
		`<div class="replicas" style="--c:` + svgplot.ColorOf(2) + `" data-run="after">`,
		`<h3><span class="swatch"></span>before</h3>`} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if n := strings.Count(page, `<table class="replicas-table">`); n != 2 {
		t.Errorf("%d replica tables, want one per run over replicas", n)
	}
}

// TestHTMLOfReplicasOfSeveralModels: a run of two models over two replicas
// shows its replicas once, not once per model.
func TestHTMLOfReplicasOfSeveralModels(t *testing.T) {
	run := replicaRecord(t)
	run.Header.Models = []record.ModelInfo{{Name: "m1"}, {Name: "m2"}}
	for i := range run.Snapshots {
		s := &run.Snapshots[i]
		half := s.Tick
		half.Requests, half.Successes, half.Inferences = s.Tick.Requests/2, s.Tick.Successes/2, s.Tick.Inferences/2
		s.Models = []stats.Model{{Name: "m1", Load: s.Load, Tick: half, Server: s.Server}, {Name: "m2", Load: s.Load, Tick: half, Server: s.Server}}
	}
	page := renderHTML(t, HTMLRun{Label: "two models", File: "models.jsonl", Run: run})
	if n := strings.Count(page, `<table class="replicas-table">`); n != 1 {
		t.Errorf("%d replica tables, want 1", n)
	}
	if got := readCharts(t, page)["replica-throughput"].legend; !slices.Equal(got, []string{"a:8001", "b:8001"}) {
		t.Errorf("replica throughput legend %q", got)
	}
}

// TestHTMLOfReplicasOneHour: an hour of two replicas, one flapping in and
// out every minute, draws downsampled lines and bands and stays small; the
// table still counts every time out.
func TestHTMLOfReplicasOneHour(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a one-hour run")
	}
	run := &record.Run{Header: record.Header{Server: record.ServerInfo{URL: "a:8001,b:8001", Replicas: []string{"a:8001", "b:8001"}},
		Model: record.ModelInfo{Name: "m"}, Interval: time.Second}}
	for seq := 1; seq <= 3600; seq++ {
		out := seq%60 >= 55
		s := stats.Snapshot{Seq: seq, Elapsed: time.Duration(seq) * time.Second, Interval: time.Second,
			Load: stats.Load{Mode: "concurrency", Concurrency: 8}}
		n := 100 + 10*math.Sin(float64(seq)/7)
		rep := func(url string, n float64, up bool) stats.Replica {
			c := stats.ClientStats{Duration: time.Second, Requests: int64(n), Successes: int64(n), Inferences: int64(n), InferPerS: n, RequestsPerS: n,
				Latency: stats.Latency{Count: int64(n), P50: 2 * time.Millisecond, P99: 3 * time.Millisecond}}
			return stats.Replica{URL: url, Up: up, Tick: c, Server: stats.ServerStats{Available: n > 0, SuccessCount: int64(n), Queue: time.Millisecond}}
		}
		b := rep("b:8001", n, !out)
		if out {
			b = rep("b:8001", 0, false)
		}
		s.Replicas = []stats.Replica{rep("a:8001", n, true), b}
		s.Tick = s.Replicas[0].Tick
		run.Snapshots = append(run.Snapshots, s)
	}
	page := renderHTML(t, HTMLRun{Label: "hour", File: "hour.jsonl", Run: run})
	charts := readCharts(t, page)
	for _, id := range replicaCharts {
		checkDrawn(t, charts[id])
	}
	for _, name := range []string{"a:8001", "b:8001"} {
		if n := strings.Count(page, "· "+name+" "); n == 0 || n > 2*3600/4 {
			t.Errorf("%s: %d hover titles for 3600 ticks on two charts", name, n)
		}
	}
	if got := replicaTableRows(page)["b:8001"]; got[11] != "60" {
		t.Errorf("b went out %s times, want 60", got[11])
	}
	t.Logf("report of an hour over two replicas: %d bytes", len(page))
	if len(page) >= 2<<20 {
		t.Errorf("%d bytes, want under 2 MB", len(page))
	}
}
