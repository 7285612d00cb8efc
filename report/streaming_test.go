package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

const msec = time.Millisecond

// llmResult is a request to a decoupled LLM: its first response ttft
// after the send, then one response every gap, each a token (as the
// driver counts an LLM's).
func llmResult(ttft, gap time.Duration, responses int) driver.Result {
	r := driver.Result{Decoupled: true, Responses: int32(responses), Inferences: 1,
		Timing: &driver.ResponseTiming{First: ttft, Tokens: int32(responses)}}
	r.Done = ttft
	for range responses - 1 {
		r.Timing.Gaps = append(r.Timing.Gaps, gap)
		r.Done += gap
	}
	return r
}

// llmRun is a decoupled model's run made by the real aggregator: two
// ticks at concurrency 1 (ttft 10 ms, 4 responses 5 ms apart; then 30 ms,
// 2 responses 15 ms apart) and one at concurrency 2 (ttft 20 ms, 3
// responses 10 ms apart, twice), with Triton's response statistics.
func llmRun(t *testing.T) *record.Run {
	a := stats.NewAggregator(time.Second, 10*time.Second)
	a.SetDecoupled()
	var snaps []stats.Snapshot
	for i, tc := range []struct {
		conc    int
		results []driver.Result
	}{
		{1, []driver.Result{llmResult(10*msec, 5*msec, 4)}},
		{1, []driver.Result{llmResult(30*msec, 15*msec, 2)}},
		{2, []driver.Result{llmResult(20*msec, 10*msec, 3), llmResult(20*msec, 10*msec, 3)}},
	} {
		a.Add(tc.results)
		s := stats.Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second,
			Load: stats.Load{Mode: load.Concurrency, Concurrency: tc.conc, InFlight: tc.conc}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		s.Server = stats.ServerStats{Available: true, SuccessCount: int64(len(tc.results)),
			Responses: &stats.ServerResponses{Success: 4, ComputeInfer: 6 * msec, ComputeInferCount: 4,
				ComputeOutput: 10 * time.Microsecond, ComputeOutputCount: 4,
				FirstComputeInfer: 9 * msec, FirstCount: 1, LaterComputeInfer: 5 * msec, LaterCount: 3}}
		snaps = append(snaps, s)
	}
	return &record.Run{Header: testHeader(), Snapshots: snaps}
}

func TestStepBuilderStreaming(t *testing.T) {
	run := llmRun(t)
	b := NewStepBuilder(stats.Load{})
	for _, s := range run.Snapshots[:2] {
		b.Add(s)
	}
	st := b.Step()
	sc := st.Client.Streaming
	if st.Approximate || sc == nil {
		t.Fatalf("step = %+v", st)
	}
	// 2 requests in 2 s with 6 responses; TTFT 10 and 30 ms; gaps three
	// of 5 ms and one of 15 ms.
	if sc.Requests != 2 || sc.Responses != 6 || sc.ResponsesPerS != 3 ||
		sc.PerRequest.Mean != 3 || sc.PerRequest.Min != 2 || sc.PerRequest.Max != 4 ||
		sc.TTFT.Count != 2 || sc.TTFT.Mean != 20*msec || sc.TTFT.Min != 10*msec || sc.TTFT.Max != 30*msec ||
		sc.ITL.Count != 4 || sc.ITL.Mean != 7500*time.Microsecond || sc.ITL.P50 < 5*msec || sc.ITL.P50 > 5010*time.Microsecond {
		t.Errorf("step streaming = %+v", sc)
	}
	if n, ok := b.TTFTAtOrBelow(15 * msec); !ok || n != 1 {
		t.Errorf("TTFTAtOrBelow(15ms) = %d, %t", n, ok)
	}
	r := st.Server.Responses
	if r == nil || r.Success != 8 || r.ComputeInfer != 6*msec || r.FirstCount != 2 {
		t.Errorf("server responses = %+v", r)
	}
	// The step keeps its own copy: adding more ticks changes nothing.
	b.Add(run.Snapshots[2])
	if sc.Requests != 2 {
		t.Errorf("the step's streaming stats moved with the builder: %+v", sc)
	}
}

func TestWriteTextStreaming(t *testing.T) {
	run := llmRun(t)
	for i := range run.Snapshots {
		run.Snapshots[i].Load = stats.Load{Mode: load.Concurrency, Concurrency: 2, InFlight: 2}
	}
	var b bytes.Buffer
	if err := WriteText(&b, Summarize(run.Header, run.Snapshots)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Throughput: 1.33333 infer/sec\n",
		// 12 responses in 3 s.
		"Response Throughput: 4 infer/sec\n",
		"Output token throughput: 4 tokens/sec (12 tokens)\n",
		"Response count: 12 (3.0 per request: min 2, p50 3, p90 4, p99 4, max 4)\n",
		"Avg time to first response: 20000 usec\n",
		// Gaps 3×5, 15 and 4×10 ms.
		"Avg inter-response latency: 8750 usec\n",
		"p99 inter-response latency: 15",
		"Successful response count: 12 (empty 0, failed 0, cancelled 0)\n",
		"Avg response compute: infer 6000 usec (first response 9000 usec, later responses 5000 usec), output 10 usec\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}

	// A sweep adds the responses' columns to its step table.
	var sweep bytes.Buffer
	if err := WriteText(&sweep, Summarize(run.Header, llmRun(t).Snapshots)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"resp/s  ttft p50  ttft p99  itl p50  itl p99", "6.0      20.0      20.0     10.0     10.0"} {
		if !strings.Contains(sweep.String(), want) {
			t.Errorf("sweep lacks %q:\n%s", want, sweep.String())
		}
	}
}

func TestWriteCSVStreaming(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, llmRun(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	wantHeader := "Concurrency,Inferences/Second,Response Throughput,Client Send" + strings.TrimPrefix(csvHeader, "Concurrency,Inferences/Second,Client Send") +
		",Avg Time To First Response,p50 Time To First Response,p90 Time To First Response,p95 Time To First Response,p99 Time To First Response" +
		",Avg Inter-Response Latency,p50 Inter-Response Latency,p90 Inter-Response Latency,p95 Inter-Response Latency,p99 Inter-Response Latency" +
		",Avg Responses Per Request,Output Token Throughput (tokens/sec),Avg Output Sequence Length (tokens)"
	if lines[0] != wantHeader {
		t.Fatalf("header\n got %s\nwant %s", lines[0], wantHeader)
	}
	cols := strings.Split(lines[0], ",")
	// Step 2: 2 requests in 1 s, 6 responses; TTFT 20 ms; gaps 10 ms.
	row := strings.Split(lines[2], ",")
	if len(row) != len(cols) {
		t.Fatalf("row has %d cells, header %d", len(row), len(cols))
	}
	cell := func(name string) string {
		for i, c := range cols {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %q", name)
		return ""
	}
	for name, want := range map[string]string{
		"Concurrency": "2", "Inferences/Second": "2", "Response Throughput": "6",
		"Avg Time To First Response": "20000", "Avg Inter-Response Latency": "10000", "Avg Responses Per Request": "3.00",
		"Avg latency": "40000", "Output Token Throughput (tokens/sec)": "6", "Avg Output Sequence Length (tokens)": "3.00",
	} {
		if got := cell(name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

// TestSummaryTTFTFromSchedule: an open loop's summary gives the time to
// first response from the schedule too, merged over its ticks from their
// histograms: a request sent 40 ms late waited 40 ms more for its first
// token. A closed loop's has no such lines.
func TestSummaryTTFTFromSchedule(t *testing.T) {
	a := stats.NewAggregator(time.Second, 10*time.Second)
	a.SetDecoupled()
	var snaps []stats.Snapshot
	for i := range 2 {
		onTime := llmResult(20*msec, 5*msec, 3)
		late := llmResult(20*msec, 5*msec, 3)
		late.Sent = 40 * msec
		late.Timing.First += late.Sent
		late.Done += late.Sent
		a.Add([]driver.Result{onTime, late})
		s := stats.Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second,
			Load: stats.Load{Mode: load.Rate, Rate: 2}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		if s.TTFTScheduledHistogram == "" {
			t.Fatal("an open loop's tick stored no histogram of the time to first response from the schedule")
		}
		snaps = append(snaps, s)
	}
	var b bytes.Buffer
	if err := WriteText(&b, Summarize(testHeader(), snaps)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Avg time to first response: 20000 usec\n", "Avg time to first response from schedule: 40000 usec\n",
		"p99 time to first response from schedule: 60"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	var closed bytes.Buffer
	if err := WriteText(&closed, Summarize(testHeader(), llmRun(t).Snapshots)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(closed.String(), "from schedule") {
		t.Errorf("a closed loop's summary:\n%s", closed.String())
	}
}

// TestWriteTextDecoupledWithoutTokens: a decoupled model that generates no
// text (the driver counted no token: repeat_int32's numbers) has response
// throughput and no token throughput, in the text summary and the CSV.
func TestWriteTextDecoupledWithoutTokens(t *testing.T) {
	a := stats.NewAggregator(time.Second, 10*time.Second)
	a.SetDecoupled()
	var snaps []stats.Snapshot
	for i := range 2 {
		r := llmResult(10*msec, 5*msec, 4)
		r.Timing.Tokens = 0
		a.Add([]driver.Result{r})
		s := stats.Snapshot{Seq: i + 1, Interval: time.Second, Elapsed: time.Duration(i+1) * time.Second,
			Load: stats.Load{Mode: load.Concurrency, Concurrency: 1, InFlight: 1}}
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	run := &record.Run{Header: testHeader(), Snapshots: snaps}
	var text, csv bytes.Buffer
	if err := WriteText(&text, SummarizeRun(run)); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&csv, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Response Throughput: 4 infer/sec\n") || strings.Contains(text.String(), "token") {
		t.Errorf("summary:\n%s", text.String())
	}
	if strings.Contains(csv.String(), "Token") || !strings.Contains(csv.String(), "Avg Responses Per Request\n") {
		t.Errorf("CSV:\n%s", csv.String())
	}
}
