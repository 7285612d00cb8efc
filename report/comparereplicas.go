package report

import (
	"slices"
	"strings"

	"github.com/tritontop/tritontop/record"
)

// ReplicaComparison is one replica of run A set beside one of run B.
type ReplicaComparison struct {
	// A and B are the replicas' URLs, the same when matched by URL.
	A       string   `json:"a"`
	B       string   `json:"b"`
	Metrics []Change `json:"metrics"`
}

// Ways replicas are matched (Comparison.ReplicasMatchedBy).
const (
	// MatchByURL pairs the replicas of the same URL: both runs listed the
	// same servers.
	MatchByURL = "url"
	// MatchByPosition pairs A's first replica with B's first, and so on.
	MatchByPosition = "position"
)

// replicaMetrics are the numbers of each pair of replicas: throughput,
// p99, Triton's queue time on the server, and errors.
var replicaMetrics = []compared{
	comparedMetric("throughput"),
	comparedMetric("p99_latency"),
	comparedMetric("queue"),
	{"errors", "errors", "requests", func(n levelNumbers) (float64, bool) {
		return float64(n.client.Errors), n.client.Duration > 0
	}},
}

// comparedMetric is the metric of comparedMetrics with the identifier.
func comparedMetric(id string) compared {
	i := slices.IndexFunc(comparedMetrics, func(c compared) bool { return c.metric == id })
	return comparedMetrics[i]
}

// compareReplicas sets the replicas of two runs over several replicas side
// by side, when both ran over several: by URL when both listed the same
// URLs, else by position, the replicas past the shorter list named as one
// run's only.
func (c *Comparison) compareReplicas(a, b []record.ReplicaSummary) {
	if len(a) == 0 || len(b) == 0 {
		return
	}
	urls := func(rs []record.ReplicaSummary) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.URL
		}
		slices.Sort(out)
		return out
	}
	pairs := make([][2]int, 0, min(len(a), len(b)))
	if slices.Equal(urls(a), urls(b)) {
		c.ReplicasMatchedBy = MatchByURL
		for i, r := range a {
			j := slices.IndexFunc(b, func(x record.ReplicaSummary) bool { return x.URL == r.URL })
			pairs = append(pairs, [2]int{i, j})
		}
	} else {
		c.ReplicasMatchedBy = MatchByPosition
		for i := range min(len(a), len(b)) {
			pairs = append(pairs, [2]int{i, i})
		}
		for _, r := range a[len(pairs):] {
			c.OnlyAReplicas = append(c.OnlyAReplicas, r.URL)
		}
		for _, r := range b[len(pairs):] {
			c.OnlyBReplicas = append(c.OnlyBReplicas, r.URL)
		}
	}
	numbers := func(r record.ReplicaSummary) levelNumbers {
		return levelNumbers{client: r.Client, server: r.Server, metrics: r.Metrics}
	}
	for _, p := range pairs {
		ra, rb := a[p[0]], b[p[1]]
		lc := compareLevel(replicaMetrics, "", numbers(ra), numbers(rb))
		c.Replicas = append(c.Replicas, ReplicaComparison{A: ra.URL, B: rb.URL, Metrics: lc.Metrics})
	}
}

// name is the replica's name in a table: its URL, or both URLs when they
// differ.
func (r ReplicaComparison) name() string {
	if r.A == r.B {
		return r.A
	}
	return r.A + " vs " + r.B
}

// replicasTitle heads the replica table.
func (c *Comparison) replicasTitle() string {
	return "Replicas, matched by " + map[string]string{MatchByURL: "URL", MatchByPosition: "position"}[c.ReplicasMatchedBy]
}

// replicaRows are the replica table's rows: replica, metric, A, B, change.
func (c *Comparison) replicaRows() [][]string {
	var rows [][]string
	for _, rc := range c.Replicas {
		for i, m := range rc.Metrics {
			name := ""
			if i == 0 {
				name = rc.name()
			}
			rows = append(rows, []string{name, m.heading(), m.cell(m.A), m.cell(m.B), m.percentCell()})
		}
	}
	return rows
}

// replicaNotes name the replicas only one run had.
func (c *Comparison) replicaNotes() []string {
	var out []string
	if len(c.OnlyAReplicas) > 0 {
		out = append(out, "Replicas only in "+c.A.Label+": "+strings.Join(c.OnlyAReplicas, ", "))
	}
	if len(c.OnlyBReplicas) > 0 {
		out = append(out, "Replicas only in "+c.B.Label+": "+strings.Join(c.OnlyBReplicas, ", "))
	}
	return out
}

// writeReplicaTable is the text table of the replicas, after a blank line;
// nothing when no replicas were compared.
func (c *Comparison) writeReplicaTable(b *strings.Builder) {
	if len(c.Replicas) == 0 {
		return
	}
	b.WriteString("\n" + c.replicasTitle() + "\n")
	writeGroupedTable(b, append([][]string{{"replica", "metric", c.A.Label, c.B.Label, "change"}}, c.replicaRows()...), c.replicaNotes())
}

// writeMarkdownReplicaTable is writeReplicaTable in Markdown.
func (c *Comparison) writeMarkdownReplicaTable(b *strings.Builder) {
	if len(c.Replicas) == 0 {
		return
	}
	b.WriteString("\n**" + mdText(c.replicasTitle()) + "**\n\n")
	b.WriteString("| replica | metric | " + mdCell(c.A.Label) + " | " + mdCell(c.B.Label) + " | change |\n")
	b.WriteString("|---|---|---:|---:|---:|\n")
	for _, row := range c.replicaRows() {
		b.WriteString("| " + mdCell(row[0]) + " | " + mdCell(row[1]) + " | " + row[2] + " | " + row[3] + " | " + row[4] + " |\n")
	}
	if notes := c.replicaNotes(); len(notes) > 0 {
		b.WriteString("\n")
		for _, l := range notes {
			b.WriteString(mdText(l) + "  \n")
		}
	}
}
