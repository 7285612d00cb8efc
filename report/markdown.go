package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// WriteMarkdown writes a run's summary as Markdown, for an issue or a wiki
// page: a heading naming the model and server, then for a run at one level
// a table of its numbers (throughput, latency percentiles, Triton's
// breakdown, batch size, GPUs, CPU, errors), and for a run of several
// levels the whole run's counts and one table row per step with what the
// search found; last, what limited the load. A decoupled model's run adds
// its responses: per second and per request, time to first response and
// between responses, and Triton's response statistics; its step table
// adds their columns. A stateful model's run adds the sequences that
// ended, per second, and their latency; its step table adds sequences per
// second and their latency's p50 and p99. A run over several models gets the table of one
// level for all of them together, then one row per model and the step
// table of each model that ran at several levels. Numbers are the ones
// WriteText prints.
func WriteMarkdown(w io.Writer, s record.Summary) error {
	var b strings.Builder
	model := orDash(s.Model)
	if s.Version != "" {
		model += " v" + s.Version
	}
	fmt.Fprintf(&b, "### %s on %s (%s)\n\n", mdText(model), mdText(orDash(s.URL)), mdText(orDash(s.Protocol)))
	fmt.Fprintf(&b, "%s, %d ticks", s.Duration.Round(time.Millisecond), s.Ticks)
	if !s.Start.IsZero() {
		fmt.Fprintf(&b, ", started %s", s.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	b.WriteString(".\n\n")
	for _, n := range runNotes(s) {
		b.WriteString("**" + mdText(n) + "**\n\n")
	}
	switch {
	case len(s.Models) > 0:
		mdLevel(&b, s)
		mdModels(&b, s)
	case len(s.Steps) > 1:
		mdSweep(&b, s)
	default:
		mdLevel(&b, s)
	}
	if len(s.Diagnosis) > 0 {
		b.WriteString("\n**What limits the load**\n\n")
		for _, f := range namedFindings(s.Diagnosis, s.DiagnosisSpans) {
			b.WriteString("- " + mdText(f.Message) + "\n")
		}
	}
	mdRepeats(&b, s.Repeats)
	mdThresholds(&b, s.Thresholds)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write Markdown summary: %w", err)
	}
	return nil
}

// mdLevel is a run at one level: a two-column table of its numbers.
func mdLevel(b *strings.Builder, s record.Summary) {
	span := levelSpan(s)
	c := s.Client
	level := s.Load.String()
	if s.Load.Open() && s.Load.Distribution != "" {
		level += " (" + string(s.Load.Distribution) + ")"
	}
	if len(s.Models) > 0 {
		level = fmt.Sprintf("All %d models together (%s)", len(s.Models), modelLoads(s))
	}
	if span != "" {
		level += " (" + span + ")"
	}
	fmt.Fprintf(b, "**%s**\n\n", mdText(level))
	rows := [][2]string{
		{"Requests", strconv.FormatInt(c.Requests, 10)},
		{"Throughput", g6(c.InferPerS) + " infer/s"},
	}
	if c.InferPerS != c.RequestsPerS {
		rows = append(rows, [2]string{"Request throughput", g6(c.RequestsPerS) + " req/s"})
	}
	addLatency := func(what string, l stats.Latency) {
		rows = append(rows,
			[2]string{what + " avg / p50 / p90 / p95 / p99",
				msCell(l.Mean) + " / " + msCell(l.P50) + " / " + msCell(l.P90) + " / " + msCell(l.P95) + " / " + msCell(l.P99) + " ms"})
	}
	if l := c.Latency; l.Count > 0 {
		addLatency("Latency", l)
	}
	if l := c.Scheduled; l != nil && l.Count > 0 {
		addLatency("Latency from schedule", *l)
	}
	if sc := c.Streaming; sc != nil {
		pr := sc.PerRequest
		rows = append(rows,
			[2]string{"Response throughput", g6(sc.ResponsesPerS) + " responses/s"},
			[2]string{"Responses", fmt.Sprintf("%d (%s per request: min %d, p50 %d, p90 %d, p99 %d, max %d)",
				sc.Responses, strconv.FormatFloat(pr.Mean, 'f', 1, 64), pr.Min, pr.P50, pr.P90, pr.P99, pr.Max)})
		if sc.TTFT.Count > 0 {
			addLatency("Time to first response", sc.TTFT)
		}
		if sc.ITL.Count > 0 {
			addLatency("Inter-response latency", sc.ITL)
		}
	}
	if sq := c.Sequences; sq != nil {
		// WriteText's sequence count, rate and latency.
		rows = append(rows, [2]string{"Sequences ended", fmt.Sprintf("%d (%s seq/s)", sq.Ended, g6(sq.EndedPerS))})
		if sq.Latency.Count > 0 {
			addLatency("Sequence latency", sq.Latency)
		}
	}
	if c.Late > 0 {
		rows = append(rows, [2]string{"Late sends", fmt.Sprintf("%d (%s%%)", c.Late, fixed(100*c.LateShare, 1))})
	}
	if sv := s.Server; sv.Available {
		rows = append(rows,
			[2]string{"Triton request time", fmt.Sprintf("%s ms: queue %s + compute input %s + infer %s + output %s + overhead %s",
				msCell(sv.Request), msCell(sv.Queue), msCell(sv.ComputeInput), msCell(sv.ComputeInfer), msCell(sv.ComputeOutput), msCell(sv.Overhead))},
			[2]string{"Triton counts", fmt.Sprintf("%d inferences, %d executions, %d successful requests", sv.InferenceCount, sv.ExecutionCount, sv.SuccessCount)})
		if sv.ExecutionCount > 0 && !sv.Pipeline() {
			rows = append(rows, [2]string{"Average batch size", strconv.FormatFloat(sv.AvgBatch, 'f', 2, 64)})
		}
		rows = append(rows, mdComposingRows(sv.ServerStats)...)
		if r := sv.Responses; r != nil {
			rows = append(rows,
				[2]string{"Triton responses", fmt.Sprintf("%d successful (empty %d, failed %d, cancelled %d)", r.Success, r.Empty, r.Fail, r.Cancel)},
				[2]string{"Triton time per response", fmt.Sprintf("infer %s ms (first response %s, later responses %s), output %s ms",
					msCell(r.ComputeInfer), msCell(r.FirstComputeInfer), msCell(r.LaterComputeInfer), msCell(r.ComputeOutput))})
		}
	} else {
		rows = append(rows, [2]string{"Triton statistics", "not available"})
	}
	for i, g := range s.Metrics.GPUs {
		var parts []string
		if g.HasUtilization {
			parts = append(parts, fmt.Sprintf("%s%% busy (max %s%%)", fixed(100*g.UtilizationAvg, 1), fixed(100*g.UtilizationMax, 1)))
		}
		if g.HasPower {
			parts = append(parts, fixed(g.PowerAvgW, 0)+" W")
		}
		if g.HasMemory {
			parts = append(parts, fmt.Sprintf("memory %s / %s GB", fixed(g.MemoryUsedMax/1e9, 2), fixed(g.MemoryTotal/1e9, 1)))
		}
		if len(parts) > 0 {
			name := fmt.Sprintf("GPU %d (%s)", i, g.UUID)
			if g.Replica != "" {
				name = fmt.Sprintf("GPU %d (%s on %s)", i, g.UUID, g.Replica)
			}
			rows = append(rows, [2]string{name, strings.Join(parts, ", ")})
		}
	}
	if m := s.Metrics; m.HasCPU {
		rows = append(rows, [2]string{"Server CPU", fmt.Sprintf("%s%% avg, %s%% max", fixed(100*m.CPUAvg, 1), fixed(100*m.CPUMax, 1))})
	}
	rows = append(rows, [2]string{"tritontop CPU", clientCPUText(s.ClientCPU)})
	rows = append(rows, [2]string{"Errors", errorsText(c.Errors, c.Requests)})
	b.WriteString("| | |\n|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s |\n", mdCell(r[0]), mdCell(r[1]))
	}
	mdErrors(b, s)
	mdReplicas(b, s)
	if len(s.Steps) == 1 && s.Steps[0].Measurement != nil {
		b.WriteString("\n")
		mdSteps(b, s)
	}
}

// mdSweep is a run over several levels: its counts, the step table and
// what the search found.
func mdSweep(b *strings.Builder, s record.Summary) {
	c := s.Client
	fmt.Fprintf(b, "%d load steps, %s to %s. Whole run: %d requests, %d inferences, %s; Triton counted %d successful requests in %d executions; tritontop CPU %s.\n\n",
		len(s.Steps), s.Steps[0].Load.String(), s.Steps[len(s.Steps)-1].Load.String(),
		c.Requests, c.Inferences, errorsText(c.Errors, c.Requests), s.Server.SuccessCount, s.Server.ExecutionCount, clientCPUText(s.ClientCPU))
	mdSteps(b, s)
	mdErrors(b, s)
	mdReplicas(b, s)
}

// mdSteps is the step table (the columns of WriteText's) and the search's
// findings.
func mdSteps(b *strings.Builder, s record.Summary) {
	cols := stepColumnsOf(s.Steps)
	head := []string{"step", "load", "infer/s", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "queue ms", "compute ms", "batch", "GPU", "CPU/req", "stable", "SLO", "limit"}
	align := []string{"---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---", "---", "---"}
	// The responses' and the sequences' columns after the latency, as in
	// the text table.
	head = cols.insert(head, []string{"resp/s", "TTFT p50 ms", "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms"}, []string{"seq/s", "seq p50 ms", "seq p99 ms"})
	right := func(n int) []string { return slices.Repeat([]string{"---:"}, n) }
	align = cols.insert(align, right(len(streamingHead)), right(len(sequenceHead)))
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("|" + strings.Join(align, "|") + "|\n")
	for i, st := range s.Steps {
		row := cols.row(i, st)
		for j := range row {
			row[j] = mdCell(row[j])
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\nLatency from the send in closed loop, from the schedule in open loop; queue and compute are Triton's, per request.")
	if cols.streaming {
		b.WriteString(" resp/s is responses per second; TTFT is the time to the first response (as the latency: from the send in closed loop, from the schedule in open loop), ITL the time between responses; the latency is to the final response.")
	}
	if cols.sequences {
		b.WriteString(" seq/s is sequences ended per second; seq p50 and p99 are the sequence latency, from a sequence's first send to its last response.")
	}
	b.WriteString("\n")
	mdComposingTable(b, s.Steps)
	if lines := searchLines(s); len(lines) > 0 {
		b.WriteString("\n")
		for _, l := range lines {
			b.WriteString("- " + mdText(l) + "\n")
		}
	}
}

// mdErrors lists the errors by code.
func mdErrors(b *strings.Builder, s record.Summary) {
	if len(s.Client.ErrorsByCode) == 0 {
		return
	}
	b.WriteString("\n| error code | count | last message |\n|---|---:|---|\n")
	for _, e := range s.Client.ErrorsByCode {
		fmt.Fprintf(b, "| %s | %d | %s |\n", mdCell(e.Code), e.Count, mdCell(e.Message))
	}
}

// clientCPUText is tritontop's own CPU in words.
func clientCPUText(cpu record.ClientCPU) string {
	s := fmt.Sprintf("%s cores avg, %s max", fixed(cpu.AvgCores, 2), fixed(cpu.MaxCores, 2))
	if cpu.PerRequest > 0 {
		s += fmt.Sprintf(", %d µs per request", usec(cpu.PerRequest))
	}
	return s
}

// errorsText is an error count with its share of requests.
func errorsText(errs, requests int64) string {
	if errs == 0 {
		return "no errors"
	}
	if requests == 0 {
		return fmt.Sprintf("%d errors", errs)
	}
	return fmt.Sprintf("%d errors (%s%% of requests)", errs, g6(100*float64(errs)/float64(requests)))
}
