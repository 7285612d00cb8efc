package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
)

// replicaComparison is two summaries of replicaRun: A as recorded, and B
// over the same two servers listed the other way round, with a:8001 at
// 120 infer/s, p99 3 ms, queue 0.3 ms and 2 errors, and b:8001 at 50
// infer/s, p99 6 ms, queue 4 ms and no error.
func replicaComparison(t *testing.T) (a, b record.Summary) {
	t.Helper()
	h := record.Header{Server: record.ServerInfo{URL: "a:8001,b:8001", Protocol: "gRPC",
		Replicas: []string{"a:8001", "b:8001"}, Balance: "least"}, Model: record.ModelInfo{Name: "m"}}
	a = Summarize(h, replicaRun(t))
	b = Summarize(h, replicaRun(t))
	ra, rb := b.Replicas[0], b.Replicas[1]
	ra.Client.InferPerS, ra.Client.Latency.P99, ra.Server.Queue, ra.Client.Errors = 120, 3*time.Millisecond, 300*time.Microsecond, 2
	rb.Client.InferPerS, rb.Client.Latency.P99, rb.Server.Queue, rb.Client.Errors = 50, 6*time.Millisecond, 4*time.Millisecond, 0
	b.Replicas = []record.ReplicaSummary{rb, ra}
	return a, b
}

var columnsRe = regexp.MustCompile(`\s{2,}`)

// pct is the change from x to y, as the tables print it.
func pct(x, y float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", (y-x)/x*100)
}

// TestCompareReplicas: two runs over the same servers are compared
// replica by replica, matched by URL whatever the order, with A, B and
// the change for throughput, p99, queue and errors, in text, Markdown and
// JSON.
func TestCompareReplicas(t *testing.T) {
	a, b := replicaComparison(t)
	c, err := Compare(a, b, "before", "after")
	if err != nil {
		t.Fatal(err)
	}
	if c.ReplicasMatchedBy != MatchByURL || len(c.Replicas) != 2 || c.Replicas[0].A != "a:8001" || c.Replicas[0].B != "a:8001" {
		t.Fatalf("replicas %+v matched by %q, want a then b by URL", c.Replicas, c.ReplicasMatchedBy)
	}
	aa, ab := a.Replicas[0], a.Replicas[1]
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	// Rows as the text prints them: replica, metric, A, B, change.
	want := [][]string{
		{"a:8001", "throughput (infer/s)", fmt.Sprintf("%.1f", aa.Client.InferPerS), "120.0", pct(aa.Client.InferPerS, 120)},
		{"", "p99 (ms)", fmt.Sprintf("%.2f", ms(aa.Client.Latency.P99)), "3.00", pct(ms(aa.Client.Latency.P99), 3)},
		{"", "queue (ms)", fmt.Sprintf("%.2f", ms(aa.Server.Queue)), "0.30", pct(ms(aa.Server.Queue), 0.3)},
		{"", "errors (requests)", "0", "2", "-"},
		{"b:8001", "throughput (infer/s)", fmt.Sprintf("%.1f", ab.Client.InferPerS), "50.0", pct(ab.Client.InferPerS, 50)},
		{"", "p99 (ms)", fmt.Sprintf("%.2f", ms(ab.Client.Latency.P99)), "6.00", pct(ms(ab.Client.Latency.P99), 6)},
		{"", "queue (ms)", fmt.Sprintf("%.2f", ms(ab.Server.Queue)), "4.00", pct(ms(ab.Server.Queue), 4)},
		{"", "errors (requests)", "0", "0", "-"},
	}
	// The fixture's own numbers, so that the rows above are checked too.
	if want[0][4] != "+20.0%" || want[1][4] != "+50.0%" || want[2][4] != "+50.0%" || want[4][4] != "+50.0%" || want[5][4] != "-25.0%" || want[6][4] != "-20.0%" {
		t.Fatalf("the fixture changed: %q", want)
	}

	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(text.String(), "\nReplicas, matched by URL\n")
	if !ok {
		t.Fatalf("no replica table in\n%s", text.String())
	}
	// Columns are two spaces apart or more; a metric's name has single
	// spaces.
	var got [][]string
	for _, l := range strings.Split(table, "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := columnsRe.Split(strings.TrimSpace(l), -1)
		if strings.HasPrefix(l, " ") {
			f = append([]string{""}, f...)
		}
		got = append(got, f)
	}
	if len(got) != len(want) {
		t.Fatalf("replica table\n%s\nhas %d rows, want %d", table, len(got), len(want))
	}
	for i := range want {
		if g, w := strings.Join(got[i], "|"), strings.Join(want[i], "|"); g != w {
			t.Errorf("text row %d\n got %s\nwant %s", i, g, w)
		}
	}

	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**Replicas, matched by URL**\n\n| replica | metric | before | after | change |\n|---|---|---:|---:|---:|\n") {
		t.Errorf("Markdown has no replica table:\n%s", md.String())
	}
	for _, row := range want {
		line := "| " + strings.Join(row, " | ") + " |"
		if !strings.Contains(md.String(), line) {
			t.Errorf("Markdown lacks %q", line)
		}
	}

	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Replicas []struct {
			A, B    string
			Metrics []struct {
				Metric  string
				A, B    *float64
				Percent *float64 `json:"change_percent"`
			}
		}
		MatchedBy string `json:"replicas_matched_by"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.MatchedBy != "url" || len(back.Replicas) != 2 || back.Replicas[1].A != "b:8001" {
		t.Fatalf("JSON replicas %+v", back)
	}
	for i, r := range back.Replicas {
		for j, m := range r.Metrics {
			row := want[4*i+j]
			if p := row[4]; p == "-" {
				if m.Percent != nil {
					t.Errorf("JSON %s %s: change %v, want none", r.A, m.Metric, *m.Percent)
				}
			} else if m.Percent == nil || fmt.Sprintf("%+.1f%%", math.Round(*m.Percent*10)/10) != p {
				t.Errorf("JSON %s %s: change %v, want %s", r.A, m.Metric, m.Percent, p)
			}
		}
	}
}

// TestCompareReplicasByPosition: runs over different servers are matched
// by position, the pair named by both URLs, and a replica only one run
// had is named.
func TestCompareReplicasByPosition(t *testing.T) {
	a, b := replicaComparison(t)
	b.Replicas[0].URL, b.Replicas[1].URL = "c:8001", "d:8001"
	b.Replicas = append(b.Replicas, record.ReplicaSummary{URL: "e:8001"})
	c, err := Compare(a, b, "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	if c.ReplicasMatchedBy != MatchByPosition || len(c.Replicas) != 2 || c.Replicas[0].B != "c:8001" || len(c.OnlyBReplicas) != 1 {
		t.Fatalf("replicas %+v by %q, only B %v", c.Replicas, c.ReplicasMatchedBy, c.OnlyBReplicas)
	}
	// A's first, a:8001 at 100 infer/s, against B's first, now c:8001 at 50.
	if got := *c.Replicas[0].Metrics[0].Percent; math.Abs(got-(-50)) > 1e-9 {
		t.Errorf("a:8001 against c:8001: throughput change %v%%, want -50%%", got)
	}
	var text, md bytes.Buffer
	c.WriteText(&text)
	c.WriteMarkdown(&md)
	for _, want := range []string{"Replicas, matched by position", "a:8001 vs c:8001", "Replicas only in B: e:8001"} {
		if !strings.Contains(text.String(), want) || !strings.Contains(md.String(), want) {
			t.Errorf("text or Markdown lacks %q:\n%s\n%s", want, text.String(), md.String())
		}
	}
}

// TestCompareOneRunWithoutReplicas: when only one run had replicas, the
// comparison is byte for byte the one of the runs without them.
func TestCompareOneRunWithoutReplicas(t *testing.T) {
	a, b := replicaComparison(t)
	bareA, bareB := a, b
	bareA.Replicas, bareB.Replicas = nil, nil
	c1, err := Compare(a, bareB, "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Compare(bareA, bareB, "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []func(*Comparison, *bytes.Buffer) error{
		func(c *Comparison, b *bytes.Buffer) error { return c.WriteText(b) },
		func(c *Comparison, b *bytes.Buffer) error { return c.WriteMarkdown(b) },
		func(c *Comparison, b *bytes.Buffer) error { return c.WriteJSON(b) },
	} {
		var x, y bytes.Buffer
		write(c1, &x)
		write(c2, &y)
		if x.String() != y.String() || strings.Contains(x.String(), "eplica") {
			t.Errorf("with replicas in one run only:\n%s\nwithout:\n%s", x.String(), y.String())
		}
	}
}
