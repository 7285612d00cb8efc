package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// WriteText writes a one-screen summary of a run. A run at one load level
// gets perf_analyzer's layout and words (Client: Request count, Throughput,
// pNN latency in usec; Server: Inference count, Execution count, Successful
// request count, Avg request latency with its breakdown; Server Prometheus
// Metrics), then tritontop's own client cost and the errors. A run over
// several levels gets the whole run's counts (percentiles pooled across
// levels would mean nothing) and one row per step: throughput, latency
// percentiles (then a decoupled model's responses and a stateful model's
// sequences), Triton's queue and compute time, batch size, GPU
// utilization, client CPU, stability and the SLO; then what the search found
// and what limited the load. A run over several models gets the block of
// one level for all the models together (GPUs, client CPU and replicas are
// shared), then one row per model and each model's step table when it ran
// at several levels.
func WriteText(w io.Writer, s record.Summary) error {
	var b strings.Builder
	model := s.Model
	if s.Version != "" {
		model += " v" + s.Version
	}
	fmt.Fprintf(&b, "%s on %s (%s): %s, %d ticks\n", orDash(model), orDash(s.URL), orDash(s.Protocol),
		s.Duration.Round(time.Millisecond), s.Ticks)
	for _, n := range runNotes(s) {
		b.WriteString(n + "\n")
	}
	switch {
	case len(s.Models) > 0:
		fmt.Fprintf(&b, "All %d models together (%s):\n", len(s.Models), modelLoads(s))
		writeLevelBody(&b, s)
		writeModels(&b, s)
	case len(s.Steps) > 1:
		writeSweep(&b, s)
	default:
		writeLevel(&b, s)
	}
	writeResets(&b, s.ServerResets)
	writeDiagnosis(&b, "What limits the load", namedFindings(s.Diagnosis, s.DiagnosisSpans))
	writeRepeats(&b, s.Repeats)
	writeThresholds(&b, s.Thresholds)
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("report: write summary: %w", err)
	}
	return nil
}

// writeLevel is perf_analyzer's block for a run at one level.
func writeLevel(b *strings.Builder, s record.Summary) {
	span := levelSpan(s)
	if span != "" {
		span = " (" + span + ")"
	}
	fmt.Fprintf(b, "%s%s\n", perfAnalyzerTitle(s.Load), span)
	writeLevelBody(b, s)
}

// modelLoads names each model's load at the end of a run over several.
func modelLoads(s record.Summary) string {
	names := make([]string, len(s.Models))
	for i, m := range s.Models {
		names[i] = m.Name + " " + m.Load.String()
	}
	return strings.Join(names, ", ")
}

// writeLevelBody is writeLevel's block after its title.
func writeLevelBody(b *strings.Builder, s record.Summary) {
	c := s.Client
	b.WriteString("  Client: \n")
	fmt.Fprintf(b, "    Request count: %d\n", c.Requests)
	fmt.Fprintf(b, "    Throughput: %s infer/sec\n", g6(c.InferPerS))
	if c.InferPerS != c.RequestsPerS {
		fmt.Fprintf(b, "    Request throughput: %s req/sec\n", g6(c.RequestsPerS))
	}
	if c.Streaming != nil {
		// perf_analyzer's line for a decoupled model, in its words.
		fmt.Fprintf(b, "    Response Throughput: %s infer/sec\n", g6(c.Streaming.ResponsesPerS))
		if c.Streaming.OutputTokens > 0 {
			fmt.Fprintf(b, "    Output token throughput: %s tokens/sec (%d tokens)\n", g6(c.Streaming.OutputTokensPerS), c.Streaming.OutputTokens)
		}
		writeGoodput(b, c.Streaming)
	}
	writeLatency(b, "", c.Latency)
	if c.Scheduled != nil && c.Scheduled.Count > 0 {
		writeLatency(b, "from schedule", *c.Scheduled)
	}
	writeStreaming(b, c.Streaming)
	writeSequences(b, c.Sequences)
	if c.Late > 0 {
		fmt.Fprintf(b, "    Late sends: %d (%s%%)\n", c.Late, g6(100*c.LateShare))
	}
	writeServer(b, s.Server)
	writeMetrics(b, s.Metrics)
	writeClientCPU(b, s.ClientCPU)
	writeErrors(b, c)
	writeReplicas(b, s)
	if len(s.Steps) == 1 && s.Steps[0].Measurement != nil {
		writeSteps(b, s)
	}
}

// writeSweep is the whole run's counts and the step table.
func writeSweep(b *strings.Builder, s record.Summary) {
	fmt.Fprintf(b, "%d load steps, %s to %s\n", len(s.Steps), s.Steps[0].Load.String(), s.Steps[len(s.Steps)-1].Load.String())
	c := s.Client
	fmt.Fprintf(b, "  Whole run: %d requests, %d inferences, %d errors; Triton counted %d successful requests in %d executions\n",
		c.Requests, c.Inferences, c.Errors, s.Server.SuccessCount, s.Server.ExecutionCount)
	writeClientCPU(b, s.ClientCPU)
	writeErrors(b, c)
	writeReplicas(b, s)
	writeSteps(b, s)
}

// writeSteps is one row per step, then what the search found. A decoupled
// model's steps get its responses' columns too: responses per second, and
// time to first response and between responses; a stateful model's its
// sequences per second and their latency.
func writeSteps(b *strings.Builder, s record.Summary) { writeStepTable(b, "Steps", s) }

// writeStepTable is writeSteps under its own title.
func writeStepTable(b *strings.Builder, title string, s record.Summary) {
	cols := stepColumnsOf(s.Steps)
	b.WriteString(title + stepTableNote(cols) + ":\n")
	head := []string{"step", "load", "infer/s", "p50", "p90", "p95", "p99", "queue", "compute", "batch", "gpu", "cpu/req", "stable", "slo", "limit"}
	head = cols.insert(head, streamingHead, sequenceHead)
	rows := [][]string{head}
	for i, st := range s.Steps {
		rows = append(rows, cols.row(i, st))
	}
	writeTable(b, "  ", rows)
	writeComposingTable(b, s.Steps)
	writeSearch(b, s)
}

// stepColumns says which model-specific columns a step table has: a
// decoupled model's responses, a stateful model's sequences. They follow
// the latency, responses first.
type stepColumns struct{ streaming, sequences bool }

// stepColumnsOf are the columns of steps: a kind's columns when any step
// measured it.
func stepColumnsOf(steps []record.Step) stepColumns {
	return stepColumns{
		streaming: slices.ContainsFunc(steps, func(st record.Step) bool { return st.Client.Streaming != nil }),
		sequences: slices.ContainsFunc(steps, func(st record.Step) bool { return st.Client.Sequences != nil }),
	}
}

// insert puts the columns' cells (or headings) after the latency of row,
// stepRow's layout.
func (c stepColumns) insert(row, streaming, sequences []string) []string {
	var extra []string
	if c.streaming {
		extra = append(extra, streaming...)
	}
	if c.sequences {
		extra = append(extra, sequences...)
	}
	return slices.Insert(row, 7, extra...)
}

// row is a step's row of the step table with the columns' cells.
func (c stepColumns) row(i int, st record.Step) []string {
	return c.insert(stepRow(i, st), streamingCells(st.Client.Streaming), sequenceCells(st.Client.Sequences))
}

// stepRow is a step's row of the step table.
func stepRow(i int, st record.Step) []string {
	c := st.Client
	l := c.Latency
	if c.Scheduled != nil && c.Scheduled.Count > 0 {
		l = *c.Scheduled
	}
	row := []string{strconv.Itoa(i + 1), loadCell(st.Load), fixed(c.InferPerS, 1)}
	if l.Count > 0 {
		row = append(row, msCell(l.P50), msCell(l.P90), msCell(l.P95), msCell(l.P99))
	} else {
		row = append(row, "-", "-", "-", "-")
	}
	if st.Server.Available {
		row = append(row, msCell(st.Server.Queue), msCell(st.Server.Compute()), batchCell(st.Server.ServerStats))
	} else {
		row = append(row, "-", "-", "-")
	}
	row = append(row, gpuCell(st.Metrics), usCell(st.ClientCPU.PerRequest))
	stable, slo := "-", "-"
	if m := st.Measurement; m != nil {
		stable = "no"
		if m.Stable {
			stable = "yes"
		}
		if m.SLO != nil {
			slo = "fail"
			if m.SLO.Pass {
				slo = "pass"
			}
		}
	}
	limit := "-"
	if len(st.Diagnosis) > 0 {
		limit = string(st.Diagnosis[0].Verdict)
	}
	return append(row, stable, slo, limit)
}

// writeSearch says what a stepped run found: the highest level meeting the
// SLO, its goodput, and the knee.
func writeSearch(b *strings.Builder, s record.Summary) {
	for _, l := range searchLines(s) {
		b.WriteString("  " + l + "\n")
	}
}

// searchLines are what a stepped run found, one sentence each.
func searchLines(s record.Summary) []string {
	sr := s.Search
	if sr == nil {
		return nil
	}
	var out []string
	if sr.SLO != nil {
		slo := searchSLOName(sr)
		if sr.Best >= 0 && sr.Best < len(s.Steps) {
			st := s.Steps[sr.Best]
			good := ""
			if m := st.Measurement; m != nil && m.SLO != nil {
				good = fmt.Sprintf(", goodput %s req/s within the SLO", fixed(m.SLO.Goodput, 1))
			}
			good = jointGoodput(sr, st, good)
			out = append(out, fmt.Sprintf("Highest level meeting %s: %s at %s infer/s (step %d)%s", slo, st.Load.String(),
				fixed(st.Client.InferPerS, 1), sr.Best+1, good))
		} else {
			out = append(out, fmt.Sprintf("No level met %s", slo))
		}
	}
	if sr.Knee >= 0 && sr.Knee < len(s.Steps) {
		st := s.Steps[sr.Knee]
		out = append(out, fmt.Sprintf("Knee: %s at %s infer/s (step %d); the highest throughput was %s infer/s", st.Load.String(),
			fixed(st.Client.InferPerS, 1), sr.Knee+1, fixed(sr.MaxThroughput, 1)))
	}
	return out
}

// sloName is an SLO in words: "p99 < 100 ms", "average latency < 20 ms",
// "TTFT p99 < 500 ms" or "ITL average < 50 ms".
func sloName(c *record.SLOCheck) string {
	what := "average latency"
	if c.Percentile > 0 {
		what = "p" + strconv.FormatFloat(c.Percentile, 'g', -1, 64)
	}
	if c.Metric != "" {
		stat := "average"
		if c.Percentile > 0 {
			stat = what
		}
		what = strings.ToUpper(c.Metric) + " " + stat
	}
	s := what + " < " + msCell(c.Threshold) + " ms"
	if c.GPUTarget > 0 {
		s += " with every GPU ≤ " + strconv.FormatFloat(100*c.GPUTarget, 'f', 0, 64) + "%"
	}
	return s
}

func writeServer(b *strings.Builder, sv record.ServerSummary) {
	b.WriteString("  Server: \n")
	if !sv.Available {
		b.WriteString("    statistics not available\n")
		return
	}
	writeServerStats(b, "  ", sv.ServerStats)
}

// writeServerStats is perf_analyzer's account of a model's statistics,
// indented by ident and two more spaces; a pipeline's line has its time
// over its steps (queue and compute, each the sum of its steps' averages
// in whole µs, and the overhead left of the request time), then a
// "Composing models:" block per step, indented a level more, as
// perf_analyzer's ReportServerSideStats writes them.
func writeServerStats(b *strings.Builder, ident string, sv stats.ServerStats) {
	if (sv.Pipeline() || len(ident) > 2) && sv.SuccessCount == 0 {
		// perf_analyzer's words for a pipeline or a step without a request
		// (a model's own block keeps its counts).
		fmt.Fprintf(b, "%s  Request count: 0\n", ident)
		return
	}
	fmt.Fprintf(b, "%s  Inference count: %d\n", ident, sv.InferenceCount)
	fmt.Fprintf(b, "%s  Execution count: %d\n", ident, sv.ExecutionCount)
	fmt.Fprintf(b, "%s  Successful request count: %d\n", ident, sv.SuccessCount)
	if sv.Pipeline() {
		q, c := pipelineUsec(sv)
		req := usec(sv.Request)
		fmt.Fprintf(b, "%s  Avg request latency: %d usec (overhead %d usec + queue %d usec + compute %d usec)\n\n",
			ident, req, max(0, req-q-c), q, c)
	} else {
		fmt.Fprintf(b, "%s  Avg request latency: %d usec (overhead %d usec + queue %d usec + compute input %d usec + compute infer %d usec + compute output %d usec)\n",
			ident, usec(sv.Request), usec(sv.Overhead), usec(sv.Queue), usec(sv.ComputeInput), usec(sv.ComputeInfer), usec(sv.ComputeOutput))
	}
	if sv.ExecutionCount > 0 && !sv.Pipeline() {
		fmt.Fprintf(b, "%s  Avg batch size: %s\n", ident, strconv.FormatFloat(sv.AvgBatch, 'f', 2, 64))
	}
	if sv.FailCount > 0 {
		fmt.Fprintf(b, "%s  Failed request count: %d\n", ident, sv.FailCount)
	}
	if r := sv.Responses; r != nil {
		fmt.Fprintf(b, "%s  Successful response count: %d (empty %d, failed %d, cancelled %d)\n", ident, r.Success, r.Empty, r.Fail, r.Cancel)
		fmt.Fprintf(b, "%s  Avg response compute: infer %d usec (first response %d usec, later responses %d usec), output %d usec\n",
			ident, usec(r.ComputeInfer), usec(r.FirstComputeInfer), usec(r.LaterComputeInfer), usec(r.ComputeOutput))
	}
	if !sv.Pipeline() {
		return
	}
	fmt.Fprintf(b, "%sComposing models: \n", ident)
	for _, st := range sv.Steps {
		fmt.Fprintf(b, "%s%s, version: %s\n", ident, st.Model, st.Version)
		writeServerStats(b, ident+"  ", st)
	}
}

// pipelineUsec is a pipeline's queue and compute in perf_analyzer's whole
// microseconds: the sums of its steps' averages, each truncated to a µs
// first (a composing ensemble's own sums, recursively).
func pipelineUsec(sv stats.ServerStats) (queue, compute int64) {
	for _, st := range sv.Steps {
		switch {
		case !st.Available || st.Reset:
		case st.Pipeline():
			q, c := pipelineUsec(st)
			queue, compute = queue+q, compute+c
		default:
			queue += usec(st.Queue)
			compute += usec(st.Compute())
		}
	}
	return queue, compute
}

func writeClientCPU(b *strings.Builder, cpu record.ClientCPU) {
	fmt.Fprintf(b, "  tritontop CPU: %s cores avg, %s max, %d usec per request\n",
		strconv.FormatFloat(cpu.AvgCores, 'f', 2, 64), strconv.FormatFloat(cpu.MaxCores, 'f', 2, 64), usec(cpu.PerRequest))
}

func writeErrors(b *strings.Builder, c stats.ClientStats) {
	if c.Errors == 0 {
		b.WriteString("  Errors: none\n")
		return
	}
	fmt.Fprintf(b, "  Errors: %d\n", c.Errors)
	for _, e := range c.ErrorsByCode {
		fmt.Fprintf(b, "    %s: %d  %s\n", e.Code, e.Count, e.Message)
	}
}

// writeResets says when the server's counters went backwards.
func writeResets(b *strings.Builder, resets []time.Duration) {
	if len(resets) == 0 {
		return
	}
	at := make([]string, len(resets))
	for i, r := range resets {
		at[i] = clock(r)
	}
	fmt.Fprintf(b, "Server counters reset at %s (the server restarted or the model was reloaded); those ticks' server numbers are left out.\n",
		strings.Join(at, ", "))
}

// clock is a run time as mm:ss, or h:mm:ss past an hour.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

func writeDiagnosis(b *strings.Builder, title string, fs []stats.Finding) {
	if len(fs) == 0 {
		return
	}
	b.WriteString(title + ":\n")
	for _, f := range fs {
		b.WriteString("  ⚠ " + f.Message + "\n")
	}
}

// writeTable writes rows as columns padded to their widest cell, the
// first column left-aligned and the rest right-aligned.
func writeTable(b *strings.Builder, indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i <= 1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		b.WriteString("\n")
	}
}

// gpuCell is the busiest GPU's average utilization, "-" without any.
func gpuCell(m record.MetricsSummary) string {
	u, ok := -1.0, false
	for _, g := range m.GPUs {
		if g.HasUtilization {
			u, ok = max(u, g.UtilizationAvg), true
		}
	}
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(100*u, 'f', 0, 64) + "%"
}

// msCell is milliseconds with three significant digits at most two
// decimals.
func msCell(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// batchCell is the average batch size, "-" for a span without an execution
// (a decoupled model's long requests may end none in a tick).
func batchCell(s stats.ServerStats) string {
	if s.ExecutionCount <= 0 {
		return "-"
	}
	return fixed(s.AvgBatch, 1)
}

func usCell(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return strconv.FormatInt(int64(d/time.Microsecond), 10) + "µs"
}

func fixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// WriteJSON writes the summary as indented JSON.
func WriteJSON(w io.Writer, s record.Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("report: write summary JSON: %w", err)
	}
	return nil
}

// writeLatency writes perf_analyzer's latency lines; a non-empty qualifier
// ("from schedule") names a second distribution.
func writeLatency(b *strings.Builder, qualifier string, l stats.Latency) {
	q := ""
	if qualifier != "" {
		q = " " + qualifier
	}
	if l.Count == 0 {
		// No request succeeded: there is no latency, not a latency of 0.
		fmt.Fprintf(b, "    Avg latency%s: - (no successful request)\n", q)
		return
	}
	fmt.Fprintf(b, "    Avg latency%s: %d usec\n", q, usec(l.Mean))
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}} {
		fmt.Fprintf(b, "    %s latency%s: %d usec\n", p.name, q, usec(p.d))
	}
}

// writeStreaming writes a decoupled model's responses as the client timed
// them, in writeLatency's words: responses per request, time to first
// response and time between responses.
func writeStreaming(b *strings.Builder, st *stats.StreamingStats) {
	if st == nil {
		return
	}
	pr := st.PerRequest
	fmt.Fprintf(b, "    Response count: %d (%s per request: min %d, p50 %d, p90 %d, p99 %d, max %d)\n",
		st.Responses, strconv.FormatFloat(pr.Mean, 'f', 1, 64), pr.Min, pr.P50, pr.P90, pr.P99, pr.Max)
	writeDistribution(b, "time to first response", st.TTFT)
	if st.TTFTScheduled != nil && st.TTFTScheduled.Count > 0 {
		writeDistribution(b, "time to first response from schedule", *st.TTFTScheduled)
	}
	writeDistribution(b, "inter-response latency", st.ITL)
}

// writeSequences writes a stateful model's sequences that ended and their
// latency, from a sequence's first send to its last response, in
// writeLatency's words.
func writeSequences(b *strings.Builder, sq *stats.SequenceStats) {
	if sq == nil {
		return
	}
	fmt.Fprintf(b, "    Sequence count: %d (%s seq/sec)\n", sq.Ended, g6(sq.EndedPerS))
	writeDistribution(b, "sequence latency", sq.Latency)
}

// writeDistribution writes "Avg NAME: N usec" and its percentiles.
func writeDistribution(b *strings.Builder, name string, l stats.Latency) {
	fmt.Fprintf(b, "    Avg %s: %d usec\n", name, usec(l.Mean))
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}} {
		fmt.Fprintf(b, "    %s %s: %d usec\n", p.name, name, usec(p.d))
	}
}

// streamingHead are the step table's columns of a decoupled model.
var streamingHead = []string{"resp/s", "ttft p50", "ttft p99", "itl p50", "itl p99"}

// streamingCells are a step's cells under streamingHead, "-" where the
// step did not time responses.
func streamingCells(st *stats.StreamingStats) []string {
	if st == nil {
		return []string{"-", "-", "-", "-", "-"}
	}
	cells := []string{fixed(st.ResponsesPerS, 1), "-", "-", "-", "-"}
	if ttft, _ := stepTTFT(st); ttft.Count > 0 {
		cells[1], cells[2] = msCell(ttft.P50), msCell(ttft.P99)
	}
	if st.ITL.Count > 0 {
		cells[3], cells[4] = msCell(st.ITL.P50), msCell(st.ITL.P99)
	}
	return cells
}

// sequenceHead are the step table's columns of a stateful model.
var sequenceHead = []string{"seq/s", "seq p50", "seq p99"}

// sequenceCells are a step's cells under sequenceHead: sequences ended
// per second and their latency's p50 and p99. A step of a stateful model
// without them ended no sequence: none per second, no latency.
func sequenceCells(sq *stats.SequenceStats) []string {
	if sq == nil {
		return []string{fixed(0, 1), "-", "-"}
	}
	cells := []string{fixed(sq.EndedPerS, 1), "-", "-"}
	if sq.Latency.Count > 0 {
		cells[1], cells[2] = msCell(sq.Latency.P50), msCell(sq.Latency.P99)
	}
	return cells
}

func writeMetrics(b *strings.Builder, m record.MetricsSummary) {
	if len(m.GPUs) == 0 && !m.HasCPU {
		return
	}
	b.WriteString("  Server Prometheus Metrics: \n")
	// Each gauge lists the GPUs that reported it; a gauge that no GPU
	// reported is left out rather than printed as zero.
	util := func(g record.GPUSummary) bool { return g.HasUtilization }
	power := func(g record.GPUSummary) bool { return g.HasPower }
	memory := func(g record.GPUSummary) bool { return g.HasMemory }
	writeGPUs(b, "Avg GPU Utilization", m.GPUs, util, func(g record.GPUSummary) string { return g6(100*g.UtilizationAvg) + "%" })
	writeGPUs(b, "Avg GPU Power Usage", m.GPUs, power, func(g record.GPUSummary) string { return g6(g.PowerAvgW) + " watts" })
	writeGPUs(b, "Max GPU Memory Usage", m.GPUs, memory, func(g record.GPUSummary) string {
		return strconv.FormatFloat(g.MemoryUsedMax, 'f', 0, 64) + " bytes"
	})
	writeGPUs(b, "Total GPU Memory", m.GPUs, memory, func(g record.GPUSummary) string {
		return strconv.FormatFloat(g.MemoryTotal, 'f', 0, 64) + " bytes"
	})
	writeGPUs(b, "Max GPU Utilization", m.GPUs, util, func(g record.GPUSummary) string { return g6(100*g.UtilizationMax) + "%" })
	if m.HasCPU {
		fmt.Fprintf(b, "    Server CPU: %s%% avg, %s%% max\n", g6(100*m.CPUAvg), g6(100*m.CPUMax))
	}
	if m.HasPending {
		fmt.Fprintf(b, "    Pending requests: %s avg, %s max\n", g6(m.PendingAvg), g6(m.PendingMax))
	}
}

// writeGPUs writes one gauge's heading and a "uuid : value" line per GPU
// that reported it, nothing when none did.
func writeGPUs(b *strings.Builder, title string, gpus []record.GPUSummary, has func(record.GPUSummary) bool, value func(record.GPUSummary) string) {
	if !slices.ContainsFunc(gpus, has) {
		return
	}
	b.WriteString("    " + title + ":\n")
	for _, g := range gpus {
		if !has(g) {
			continue
		}
		if g.Replica != "" {
			// Replicas may report the same UUIDs.
			fmt.Fprintf(b, "      %s %s : %s\n", g.Replica, g.UUID, value(g))
		} else {
			fmt.Fprintf(b, "      %s : %s\n", g.UUID, value(g))
		}
	}
}

// perfAnalyzerTitle is perf_analyzer's heading for a load level.
func perfAnalyzerTitle(l stats.Load) string {
	if l.Mode == load.Mixed {
		return "Load: " + l.String()
	}
	if l.Open() {
		s := "Request Rate: " + g6(l.Rate) + " inference requests per seconds"
		if l.Distribution != "" {
			s += " (" + string(l.Distribution) + ")"
		}
		return s
	}
	return "Request concurrency: " + strconv.Itoa(l.Concurrency)
}

// g6 formats like a C++ ostream's default (6 significant digits), which is
// how perf_analyzer prints throughputs and rates.
func g6(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// usec is a duration in whole microseconds, truncated as perf_analyzer's
// integer division by 1000 does.
func usec(d time.Duration) int64 { return int64(d / time.Microsecond) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
