package report

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// replicaAcc follows one replica over a run: its share of each tick goes
// through a StepBuilder, so that it is summed, merged and averaged the way
// a load step is.
type replicaAcc struct {
	url     string
	b       *StepBuilder
	ticks   int
	up      int
	downs   int
	wasDown bool
}

// addReplicas adds each replica's share of a tick.
func (z *Summarizer) addReplicas(s *stats.Snapshot) {
	for i := range s.Replicas {
		r := &s.Replicas[i]
		if i == len(z.replicas) {
			z.replicas = append(z.replicas, &replicaAcc{url: r.URL, b: NewStepBuilder(s.Load)})
		}
		a := z.replicas[i]
		a.b.Add(replicaSnapshot(s, r))
		a.ticks++
		if r.Up {
			a.up++
		} else if !a.wasDown {
			a.downs++
		}
		a.wasDown = !r.Up
	}
}

// replicaSnapshot is a replica's share of a tick in a Snapshot's shape.
func replicaSnapshot(s *stats.Snapshot, r *stats.Replica) stats.Snapshot {
	return stats.Snapshot{Seq: s.Seq, Time: s.Time, Elapsed: s.Elapsed, Interval: s.Interval, Load: s.Load,
		Tick: r.Tick, Histogram: r.Histogram, Server: r.Server, Metrics: r.Metrics,
		ServerLate: r.ServerLate, ServerLateSeq: r.ServerLateSeq}
}

// replicaSummaries are the replicas over the ticks added so far.
func (z *Summarizer) replicaSummaries() []record.ReplicaSummary {
	if len(z.replicas) == 0 {
		return nil
	}
	out := make([]record.ReplicaSummary, len(z.replicas))
	for i, a := range z.replicas {
		st := a.b.Step()
		out[i] = record.ReplicaSummary{URL: a.url, Ticks: a.ticks, TicksUp: a.up, Downs: a.downs,
			Client: st.Client, Approximate: st.Approximate, Server: st.Server, Metrics: st.Metrics}
	}
	return out
}

// balanceName is a balancing policy in words.
func balanceName(b string) string {
	switch b {
	case "least":
		return "least outstanding requests"
	case "rr":
		return "round robin"
	}
	return b
}

// writeReplicas is one row per replica: its share of the requests, its
// latency, Triton's queue and compute on that server, its GPUs, and how
// long it was in.
func writeReplicas(b *strings.Builder, s record.Summary) {
	if len(s.Replicas) == 0 {
		return
	}
	b.WriteString(replicasTitle(s) + ":\n")
	writeTable(b, "  ", replicaRows(s))
}

// mdReplicas is writeReplicas' table in Markdown.
func mdReplicas(b *strings.Builder, s record.Summary) {
	if len(s.Replicas) == 0 {
		return
	}
	rows := replicaRows(s)
	b.WriteString("\n**" + mdText(replicasTitle(s)) + "**\n\n")
	b.WriteString("| " + strings.Join(rows[0], " | ") + " |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows[1:] {
		for j := range row {
			row[j] = mdCell(row[j])
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

func replicasTitle(s record.Summary) string {
	title := "Replicas"
	if s.Balance != "" {
		title += " (" + balanceName(s.Balance) + ")"
	}
	return title + "; latency in ms from the send, queue and compute Triton's per request"
}

// replicaRows are the replica table's head and rows.
func replicaRows(s record.Summary) [][]string {
	rows := [][]string{{"replica", "in", "requests", "share", "infer/s", "errors", "p50", "p99", "queue", "compute", "batch", "gpu"}}
	for _, r := range s.Replicas {
		up := strconv.Itoa(r.TicksUp) + "/" + strconv.Itoa(r.Ticks) + " ticks"
		if r.Downs > 0 {
			up += ", out " + strconv.Itoa(r.Downs) + "×"
		}
		share := "-"
		if s.Client.Requests > 0 {
			share = fixed(100*float64(r.Client.Requests)/float64(s.Client.Requests), 1) + "%"
		}
		c := r.Client
		row := []string{r.URL, up, strconv.FormatInt(c.Requests, 10), share, fixed(c.InferPerS, 1), strconv.FormatInt(c.Errors, 10)}
		if c.Latency.Count > 0 {
			row = append(row, msCell(c.Latency.P50), msCell(c.Latency.P99))
		} else {
			row = append(row, "-", "-")
		}
		if r.Server.Available {
			row = append(row, msCell(r.Server.Queue), msCell(r.Server.Compute()), fixed(r.Server.AvgBatch, 1))
		} else {
			row = append(row, "-", "-", "-")
		}
		rows = append(rows, append(row, gpuCell(r.Metrics)))
	}
	return rows
}
