package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// WriteText writes a one-screen summary of a run in perf_analyzer's layout
// and words (Client: Request count, Throughput, pNN latency in usec;
// Server: Inference count, Execution count, Successful request count, Avg
// request latency with its breakdown; Server Prometheus Metrics), followed
// by tritontop's own client cost, the errors, and one line per load step
// when there was more than one.
func WriteText(w io.Writer, s record.Summary) error {
	var b strings.Builder
	model := s.Model
	if s.Version != "" {
		model += " v" + s.Version
	}
	fmt.Fprintf(&b, "%s on %s (%s): %s, %d ticks\n", orDash(model), orDash(s.URL), orDash(s.Protocol),
		s.Duration.Round(time.Millisecond), s.Ticks)
	if len(s.Steps) > 1 {
		fmt.Fprintf(&b, "Whole run, %d load steps (last: %s)\n", len(s.Steps), perfAnalyzerLabel(s.Load))
	} else {
		fmt.Fprintf(&b, "%s\n", perfAnalyzerTitle(s.Load))
	}

	c := s.Client
	b.WriteString("  Client: \n")
	fmt.Fprintf(&b, "    Request count: %d\n", c.Requests)
	fmt.Fprintf(&b, "    Throughput: %s infer/sec\n", g6(c.InferPerS))
	if c.InferPerS != c.RequestsPerS {
		fmt.Fprintf(&b, "    Request throughput: %s req/sec\n", g6(c.RequestsPerS))
	}
	writeLatency(&b, "", c.Latency)
	if c.Scheduled != nil && c.Scheduled.Count > 0 {
		writeLatency(&b, "from schedule", *c.Scheduled)
	}
	if c.Late > 0 {
		fmt.Fprintf(&b, "    Late sends: %d (%s%%)\n", c.Late, g6(100*c.LateShare))
	}

	sv := s.Server
	b.WriteString("  Server: \n")
	if !sv.Available {
		b.WriteString("    statistics not available\n")
	} else {
		fmt.Fprintf(&b, "    Inference count: %d\n", sv.InferenceCount)
		fmt.Fprintf(&b, "    Execution count: %d\n", sv.ExecutionCount)
		fmt.Fprintf(&b, "    Successful request count: %d\n", sv.SuccessCount)
		fmt.Fprintf(&b, "    Avg request latency: %d usec (overhead %d usec + queue %d usec + compute input %d usec + compute infer %d usec + compute output %d usec)\n",
			usec(sv.Request), usec(sv.Overhead), usec(sv.Queue), usec(sv.ComputeInput), usec(sv.ComputeInfer), usec(sv.ComputeOutput))
		if sv.ExecutionCount > 0 {
			fmt.Fprintf(&b, "    Avg batch size: %s\n", strconv.FormatFloat(sv.AvgBatch, 'f', 2, 64))
		}
		if sv.FailCount > 0 {
			fmt.Fprintf(&b, "    Failed request count: %d\n", sv.FailCount)
		}
	}
	writeMetrics(&b, s.Metrics)

	cpu := s.ClientCPU
	fmt.Fprintf(&b, "  tritontop CPU: %s cores avg, %s max, %d usec per request\n",
		strconv.FormatFloat(cpu.AvgCores, 'f', 2, 64), strconv.FormatFloat(cpu.MaxCores, 'f', 2, 64), usec(cpu.PerRequest))

	if c.Errors == 0 {
		b.WriteString("  Errors: none\n")
	} else {
		fmt.Fprintf(&b, "  Errors: %d\n", c.Errors)
		for _, e := range c.ErrorsByCode {
			fmt.Fprintf(&b, "    %s: %d  %s\n", e.Code, e.Count, e.Message)
		}
	}

	if len(s.Steps) > 1 {
		b.WriteString("Inferences/Second vs. Client Average Batch Latency\n")
		for _, st := range s.Steps {
			fmt.Fprintf(&b, "%s, throughput: %s infer/sec, latency %d usec\n",
				perfAnalyzerLabel(st.Load), g6(st.Client.InferPerS), usec(st.Client.Latency.Mean))
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("report: write summary: %w", err)
	}
	return nil
}

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
	fmt.Fprintf(b, "    Avg latency%s: %d usec\n", q, usec(l.Mean))
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}} {
		fmt.Fprintf(b, "    %s latency%s: %d usec\n", p.name, q, usec(p.d))
	}
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
		if has(g) {
			fmt.Fprintf(b, "      %s : %s\n", g.UUID, value(g))
		}
	}
}

// perfAnalyzerTitle is perf_analyzer's heading for a load level.
func perfAnalyzerTitle(l stats.Load) string {
	if l.Open() {
		s := "Request Rate: " + g6(l.Rate) + " inference requests per seconds"
		if l.Distribution != "" {
			s += " (" + string(l.Distribution) + ")"
		}
		return s
	}
	return "Request concurrency: " + strconv.Itoa(l.Concurrency)
}

// perfAnalyzerLabel is perf_analyzer's label for a load level in its closing list.
func perfAnalyzerLabel(l stats.Load) string {
	if l.Open() {
		return "Request Rate: " + g6(l.Rate)
	}
	return "Concurrency: " + strconv.Itoa(l.Concurrency)
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
