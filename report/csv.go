package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// CSV column names, as perf_analyzer's -f writes them with --verbose-csv
// and the default latency report (percentile -1, which adds Avg latency).
const (
	csvConcurrency = "Concurrency"
	csvRequestRate = "Request Rate"
	csvColumns     = "Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue," +
		"Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv," +
		"p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,response wait"
	csvGPUColumns = "Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,Total GPU Memory"
	// csvResponseThroughput follows Inferences/Second for a decoupled
	// model, where perf_analyzer puts it; csvStreamingColumns end the row.
	csvResponseThroughput = "Response Throughput"
	csvStreamingColumns   = "Avg Time To First Response,p50 Time To First Response,p90 Time To First Response," +
		"p95 Time To First Response,p99 Time To First Response,Avg Inter-Response Latency,p50 Inter-Response Latency," +
		"p90 Inter-Response Latency,p95 Inter-Response Latency,p99 Inter-Response Latency,Avg Responses Per Request"
	// csvTokenColumns are genai-perf's LLM throughput and output length,
	// after the streaming columns of a run that counted output tokens.
	csvTokenColumns = "Output Token Throughput (tokens/sec),Avg Output Sequence Length (tokens)"
	// csvSequenceColumns are tritontop's own, written with
	// CSVOptions.Verbose only: perf_analyzer's CSV has no sequence columns.
	csvSequenceColumns = "Sequence Count,Sequences/Second,Avg Sequence Latency,p50 Sequence Latency," +
		"p90 Sequence Latency,p95 Sequence Latency,p99 Sequence Latency"
)

// CSVOptions are the choices of a CSV beyond perf_analyzer's columns.
type CSVOptions struct {
	// Verbose adds tritontop's own columns at the end of each row, after
	// every column perf_analyzer writes (its readers find theirs where
	// they expect them): for a stateful model's run, the sequences that
	// ended in the step, per second, and their latency's average and
	// percentiles. (perf_analyzer's verbose columns, request/response and
	// response wait, are always written.)
	Verbose bool
}

// WriteCSV writes a run in the CSV format of perf_analyzer's -f option (with
// --verbose-csv, and --collect-metrics when the run read GPU metrics), so
// that spreadsheets and scripts made for perf_analyzer read it unchanged:
//
//	Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,response wait
//
// The first column is "Request Rate" for a rate-mode run. When the server's
// metrics reported GPUs, four columns follow, each cell one
// "<gpu uuid>:<value>;" per GPU that reported the gauge: Avg GPU Utilization
// (0..1), Avg GPU Power Usage (W), Max GPU Memory Usage and Total GPU Memory
// (bytes).
//
// A decoupled model's run (its steps time responses) gets perf_analyzer's
// "Response Throughput" column after Inferences/Second (responses per
// second), and eleven columns at the end of each row: the average and p50,
// p90, p95 and p99 time to first response, the same of the time between
// responses, and the average responses per request; then, when the run
// counted output tokens, genai-perf's Output Token Throughput (tokens/sec)
// and the average output tokens per request. Other runs' columns
// are exactly perf_analyzer's; WriteCSVSteps with CSVOptions.Verbose adds
// a stateful model's sequence columns at the end.
//
// There is one row per load step (see record.Step), in the order the steps
// ran: a sweep reads in load order. (perf_analyzer sorts its rows by
// throughput, which past the knee scrambles the levels.) Times are whole
// microseconds. tritontop does not time the client's serialization apart
// from the wait, so Client Send, Client Recv and request/response are empty
// (not measured, rather than 0) and response wait is the average latency;
// Network+Server Send/Recv is then the average latency less the server's
// queue and compute time, floored at 0, as perf_analyzer computes it.
// perf_analyzer's cache columns (Server Cache Hit/Miss, only with the
// response cache on) are not written: run files do not carry cache times.
//
// perf_analyzer's CSV is of one model: of a run over several models, write
// each model's steps (ModelRun(SummarizeRun(run), i).Steps) to a file of
// its own, as tritontop's -f does.
func WriteCSV(w io.Writer, run *record.Run) error {
	if run == nil || len(run.Snapshots) == 0 {
		return fmt.Errorf("report: no snapshots to write as CSV")
	}
	return WriteCSVSteps(w, SummarizeRun(run).Steps, CSVOptions{})
}

// WriteCSVSteps writes load steps (a Summary's Steps) as WriteCSV does, for
// a live run that kept a Summarizer rather than its snapshots, with the
// options o. With o.Verbose, a run whose steps ended sequences of a
// stateful model gets seven columns at the end of each row: Sequence
// Count, Sequences/Second, and Avg, p50, p90, p95 and p99 Sequence Latency
// in whole microseconds, from a sequence's first send to its last
// response. A step that ended no sequence has 0 sequences and empty
// latencies.
func WriteCSVSteps(w io.Writer, recorded []record.Step, o CSVOptions) error {
	if len(recorded) == 0 {
		return fmt.Errorf("report: no load steps to write as CSV")
	}
	steps := recorded

	// The first column follows the first recorded step, as a perf_analyzer
	// run has a single mode.
	rate := recorded[0].Load.Open()
	var cols csvColumnSet
	for _, st := range steps {
		cols.gpus = cols.gpus || len(st.Metrics.GPUs) > 0
		cols.streaming = cols.streaming || st.Client.Streaming != nil
		cols.tokens = cols.tokens || st.Client.Streaming != nil && st.Client.Streaming.OutputTokens > 0
		cols.sequences = cols.sequences || (o.Verbose && st.Client.Sequences != nil)
		cols.fromSchedule(st)
	}

	var b strings.Builder
	if rate {
		b.WriteString(csvRequestRate)
	} else {
		b.WriteString(csvConcurrency)
	}
	columns := csvColumns
	if cols.streaming {
		columns = strings.Replace(columns, "Inferences/Second,", "Inferences/Second,"+csvResponseThroughput+",", 1)
	}
	b.WriteString("," + columns)
	if cols.gpus {
		b.WriteString("," + csvGPUColumns)
	}
	if cols.streaming {
		b.WriteString("," + csvStreamingColumns)
	}
	if cols.tokens {
		b.WriteString("," + csvTokenColumns)
	}
	b.WriteString(cols.scheduleHeader())
	if cols.sequences {
		b.WriteString("," + csvSequenceColumns)
	}
	b.WriteByte('\n')
	for _, st := range steps {
		writeCSVRow(&b, st, rate, cols)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write CSV: %w", err)
	}
	return nil
}

// csvColumnSet says which optional columns a CSV has.
type csvColumnSet struct {
	gpus, streaming, tokens, sequences bool
	// scheduled and ttftScheduled are the latency and the time to first
	// response from the schedule (open loop), tritontop's columns.
	scheduled, ttftScheduled bool
	// goodput is a decoupled model's goodput (--slo).
	goodput bool
}

func writeCSVRow(b *strings.Builder, st record.Step, rate bool, cols csvColumnSet) {
	c, sv := st.Client, st.Server
	if rate {
		b.WriteString(g6(st.Load.Rate))
	} else {
		b.WriteString(strconv.Itoa(st.Load.Concurrency))
	}
	// Client Send and Client Recv are the client's own part of a request
	// (0 for a span in which none was timed: perf_analyzer writes 0 for
	// what it did not measure, and readers parse every column as a
	// number). Network+Server Send/Recv = client wait −
	// (queue + compute), floored at 0, where client wait is latency −
	// send − receive.
	send, _ := c.ClientSend()
	recv, _ := c.ClientRecv()
	wait := max(c.Latency.Mean-send-recv, 0)
	// A pipeline's row has its own entry's times, as perf_analyzer's has
	// (its steps' are in their own files: WriteComposingCSV).
	times := stats.OwnTimes{Queue: sv.Queue, ComputeInput: sv.ComputeInput, ComputeInfer: sv.ComputeInfer, ComputeOutput: sv.ComputeOutput}
	if sv.Own != nil {
		times = *sv.Own
	}
	network := max(wait-times.Queue-times.Compute(), 0)
	fields := []string{
		g6(c.InferPerS),
		us(send),
		us(network),
		us(times.Queue),
		us(times.ComputeInput),
		us(times.ComputeInfer),
		us(times.ComputeOutput),
		us(recv),
		us(c.Latency.P50),
		us(c.Latency.P90),
		us(c.Latency.P95),
		us(c.Latency.P99),
		us(c.Latency.Mean),
		us(send + recv), // request/response = send + receive
		us(wait),        // response wait = request time − send − receive
	}
	sc := c.Streaming
	if sc == nil {
		sc = &stats.StreamingStats{}
	}
	if cols.streaming {
		fields = slices.Insert(fields, 1, g6(sc.ResponsesPerS))
	}
	for _, f := range fields {
		b.WriteByte(',')
		b.WriteString(f)
	}
	if cols.gpus {
		writeGPUCells(b, st.Metrics.GPUs)
	}
	if cols.streaming {
		for _, l := range []stats.Latency{sc.TTFT, sc.ITL} {
			for _, d := range []time.Duration{l.Mean, l.P50, l.P90, l.P95, l.P99} {
				b.WriteString("," + us(d))
			}
		}
		b.WriteString("," + strconv.FormatFloat(sc.PerRequest.Mean, 'f', 2, 64))
	}
	if cols.tokens {
		perReq := 0.0
		if sc.Requests > 0 {
			perReq = float64(sc.OutputTokens) / float64(sc.Requests)
		}
		b.WriteString("," + g6(sc.OutputTokensPerS) + "," + strconv.FormatFloat(perReq, 'f', 2, 64))
	}
	writeScheduleCells(b, st, cols)
	if cols.sequences {
		writeSequenceCells(b, c.Sequences)
	}
	b.WriteByte('\n')
}

// writeSequenceCells writes a step's cells under csvSequenceColumns; a
// step that ended no sequence has no latency to give.
func writeSequenceCells(b *strings.Builder, sq *stats.SequenceStats) {
	if sq == nil {
		b.WriteString(",0,0,,,,,")
		return
	}
	b.WriteString("," + strconv.FormatInt(sq.Ended, 10) + "," + g6(sq.EndedPerS))
	l := sq.Latency
	for _, d := range []time.Duration{l.Mean, l.P50, l.P90, l.P95, l.P99} {
		b.WriteByte(',')
		if l.Count > 0 {
			b.WriteString(us(d))
		}
	}
}

// writeGPUCells writes perf_analyzer's per-GPU cells: ",uuid:v;uuid:v;" for
// each of the four metrics, GPUs ordered by UUID as its std::map orders
// them. A GPU that did not report a gauge has no entry in that cell, as it
// has none in perf_analyzer's map of that metric.
func writeGPUCells(b *strings.Builder, gpus []record.GPUSummary) {
	gpus = slices.Clone(gpus)
	slices.SortFunc(gpus, func(a, b record.GPUSummary) int {
		return cmp.Or(cmp.Compare(a.Replica, b.Replica), cmp.Compare(a.UUID, b.UUID))
	})
	// The four columns: whether a GPU reported the gauge, and its value.
	cells := [...]struct {
		has   func(record.GPUSummary) bool
		value func(record.GPUSummary) string
	}{
		{func(g record.GPUSummary) bool { return g.HasUtilization }, func(g record.GPUSummary) string { return g6(g.UtilizationAvg) }},
		{func(g record.GPUSummary) bool { return g.HasPower }, func(g record.GPUSummary) string { return g6(g.PowerAvgW) }},
		{func(g record.GPUSummary) bool { return g.HasMemory }, func(g record.GPUSummary) string { return strconv.FormatFloat(g.MemoryUsedMax, 'f', 0, 64) }},
		{func(g record.GPUSummary) bool { return g.HasMemory }, func(g record.GPUSummary) string { return strconv.FormatFloat(g.MemoryTotal, 'f', 0, 64) }},
	}
	for _, c := range cells {
		b.WriteByte(',')
		for _, g := range gpus {
			if !c.has(g) {
				continue
			}
			if g.Replica != "" {
				// Replicas may report the same UUIDs: replica/uuid.
				b.WriteString(g.Replica + "/")
			}
			b.WriteString(g.UUID + ":" + c.value(g) + ";")
		}
	}
}

func us(d time.Duration) string { return strconv.FormatInt(usec(d), 10) }
