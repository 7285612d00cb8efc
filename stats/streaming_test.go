package stats

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/triton/pb"
)

const msec = time.Millisecond

// decoupled is a successful request to a decoupled model sent at sent,
// with its first response ttft later and the given gaps after it.
func decoupled(sent, ttft time.Duration, gaps ...time.Duration) driver.Result {
	r := driver.Result{Scheduled: sent, Sent: sent, Decoupled: true, Responses: int32(len(gaps) + 1), Inferences: 1,
		Timing: &driver.ResponseTiming{First: sent + ttft, Gaps: gaps}}
	r.Done = sent + ttft
	for _, g := range gaps {
		r.Done += g
	}
	return r
}

func TestAggregatorStreaming(t *testing.T) {
	a := NewAggregator(time.Second, 2*time.Second)
	a.Add([]driver.Result{
		decoupled(0, 10*msec, 2*msec, 4*msec),
		decoupled(0, 30*msec, 6*msec),
		decoupled(0, 20*msec),
		// No responses with outputs (only the empty final one): counted,
		// with no time to first response.
		{Sent: 0, Done: 5 * msec, Decoupled: true, Inferences: 1},
		// A failed request's responses do not count.
		{Sent: 0, Done: 5 * msec, Decoupled: true, Code: codes.Unknown, Responses: 3},
	})
	var s Snapshot
	if err := a.Tick(500*msec, false, &s); err != nil {
		t.Fatal(err)
	}
	st := s.Tick.Streaming
	if st == nil {
		t.Fatal("no streaming stats for a decoupled model")
	}
	want := StreamingStats{
		Requests: 4, Responses: 6, ResponsesPerS: 12,
		// No token counted by the driver: a model whose responses are
		// not tokens has no output tokens.
		PerRequest: Counts{Count: 4, Min: 0, Mean: 1.5, P50: 1, P90: 3, P95: 3, P99: 3, P999: 3, Max: 3},
		// The histogram's percentiles are the highest value of their
		// bucket: 20.015 ms for 20 ms at 3 significant digits.
		TTFT: Latency{Count: 3, Min: 10 * msec, Mean: 20 * msec, P50: 20015 * time.Microsecond, P90: 30 * msec, P95: 30 * msec, P99: 30 * msec, P999: 30 * msec, Max: 30 * msec},
		ITL:  Latency{Count: 3, Min: 2 * msec, Mean: 4 * msec, P50: 4001 * time.Microsecond, P90: 6 * msec, P95: 6 * msec, P99: 6 * msec, P999: 6 * msec, Max: 6 * msec},
	}
	if !reflect.DeepEqual(*st, want) {
		t.Fatalf("streaming =\n%+v\nwant\n%+v", *st, want)
	}
	// Request latency runs to the final response.
	if s.Tick.Latency.Max != 36*msec || s.Tick.Latency.Min != 5*msec {
		t.Errorf("latency = %+v", s.Tick.Latency)
	}
	for name, enc := range map[string]string{"ttft": s.TTFTHistogram, "itl": s.ITLHistogram, "responses": s.ResponsesHistogram} {
		h, err := DecodeHistogram(enc)
		if err != nil || enc == "" {
			t.Fatalf("%s histogram %q: %v", name, enc, err)
		}
		switch name {
		case "ttft":
			if got := LatencyFromHistogram(h); got.Count != 3 || got.P50 != want.TTFT.P50 {
				t.Errorf("decoded ttft = %+v", got)
			}
		case "itl":
			if got := LatencyFromHistogram(h); got.Count != 3 || got.P50 != want.ITL.P50 {
				t.Errorf("decoded itl = %+v", got)
			}
		case "responses":
			if got := CountsFromHistogram(h); got != want.PerRequest {
				t.Errorf("decoded responses = %+v, want %+v", got, want.PerRequest)
			}
		}
	}

	// A second tick: the window and the run merge both.
	a.Add([]driver.Result{decoupled(time.Second, 40*msec, 8*msec, 8*msec, 8*msec)})
	var s2 Snapshot
	if err := a.Tick(500*msec, false, &s2); err != nil {
		t.Fatal(err)
	}
	for name, cs := range map[string]ClientStats{"window": s2.Window, "run": s2.Run} {
		st := cs.Streaming
		if st == nil || st.Requests != 5 || st.Responses != 10 || st.ResponsesPerS != 10 ||
			st.TTFT.Count != 4 || st.TTFT.Max != 40*msec || st.ITL.Count != 6 || st.ITL.Mean != 6*msec || st.PerRequest.Max != 4 {
			t.Errorf("%s streaming = %+v", name, st)
		}
	}
	if tk := s2.Tick.Streaming; tk.Requests != 1 || tk.ITL.Count != 3 {
		t.Errorf("second tick = %+v", tk)
	}
}

func TestAggregatorStreamingOnlyForDecoupledModels(t *testing.T) {
	a := NewAggregator(time.Second, time.Second)
	a.Add([]driver.Result{ok(0, msec)})
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"streaming"`, `"ttft_histogram"`, `"itl_histogram"`, `"responses_histogram"`, `"responses"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("a snapshot of another model has %s: %s", key, b)
		}
	}
	// Told the model is decoupled, every tick carries streaming stats,
	// even one in which no request finished.
	a.SetDecoupled()
	var idle Snapshot
	if err := a.Tick(time.Second, false, &idle); err != nil {
		t.Fatal(err)
	}
	if idle.Tick.Streaming == nil || idle.Tick.Streaming.Requests != 0 || idle.TTFTHistogram != "" {
		t.Errorf("idle decoupled tick: %+v %q", idle.Tick.Streaming, idle.TTFTHistogram)
	}
}

func TestCountsMerge(t *testing.T) {
	a := NewAggregator(time.Second, time.Second)
	var snaps []Snapshot
	for _, batch := range [][]driver.Result{
		{decoupled(0, msec), decoupled(0, msec, msec, msec)},
		{decoupled(0, msec, msec, msec, msec, msec, msec)},
	} {
		a.Add(batch)
		var s Snapshot
		if err := a.Tick(time.Second, false, &s); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	var m CountsMerge
	for _, s := range snaps {
		m.Add(s.Tick.Streaming.PerRequest, s.ResponsesHistogram)
	}
	got, approx := m.Counts()
	want := snaps[1].Run.Streaming.PerRequest
	if approx || got != want || got.Count != 3 || got.Mean != 10.0/3 || got.Max != 6 {
		t.Errorf("merged = %+v (approx %t), run says %+v", got, approx, want)
	}
	// Without a histogram the percentiles are weighted.
	var w CountsMerge
	w.Add(Counts{Count: 1, Min: 2, Max: 2, Mean: 2, P50: 2, P90: 2, P95: 2, P99: 2, P999: 2}, "")
	w.Add(Counts{Count: 3, Min: 4, Max: 6, Mean: 5, P50: 6, P90: 6, P95: 6, P99: 6, P999: 6}, "")
	if c, approx := w.Counts(); !approx || c.P50 != 5 || c.Mean != 4.25 || c.Min != 2 || c.Max != 6 {
		t.Errorf("weighted = %+v (approx %t)", c, approx)
	}
}

func rs(success, empty, cancel uint64, inferNs, outNs uint64) *pb.InferResponseStatistics {
	d := func(c, ns uint64) *pb.StatisticDuration { return &pb.StatisticDuration{Count: c, Ns: ns} }
	return &pb.InferResponseStatistics{
		ComputeInfer: d(success+empty, inferNs), ComputeOutput: d(success, outNs),
		Success: d(success, inferNs+outNs), EmptyResponse: d(empty, 0), Cancel: d(cancel, 0), Fail: d(0, 0),
	}
}

func TestServerResponseDeltas(t *testing.T) {
	prev := &pb.ModelStatistics{Name: "llm", Version: "1", InferenceStats: &pb.InferStatistics{},
		ResponseStats: map[string]*pb.InferResponseStatistics{"0": rs(10, 0, 0, 1000, 10), "1": rs(10, 0, 0, 200, 10)}}
	cur := &pb.ModelStatistics{Name: "llm", Version: "1", InferenceStats: &pb.InferStatistics{},
		ResponseStats: map[string]*pb.InferResponseStatistics{
			"0": rs(14, 0, 1, 1800, 14), "1": rs(13, 0, 0, 290, 13), "2": rs(2, 2, 0, 60, 2)}}
	s := ServerDelta(prev, cur)
	want := &ServerResponses{Success: 9, Empty: 2, Cancel: 1,
		ComputeInfer: 950 / 11, ComputeOutput: 9 / 9, ComputeInferCount: 11, ComputeOutputCount: 9,
		FirstComputeInfer: 800 / 4, FirstCount: 4, LaterComputeInfer: 150 / 7, LaterCount: 7}
	if s.Reset || !reflect.DeepEqual(s.Responses, want) {
		t.Fatalf("responses =\n%+v\nwant\n%+v", s.Responses, want)
	}
	// An index gone, or a count gone back, is a restart.
	gone := &pb.ModelStatistics{Name: "llm", Version: "1", InferenceStats: &pb.InferStatistics{},
		ResponseStats: map[string]*pb.InferResponseStatistics{"0": rs(20, 0, 0, 3000, 20)}}
	if s := ServerDelta(cur, gone); !s.Reset {
		t.Errorf("an index gone: %+v", s)
	}
	if s := ServerDelta(cur, prev); !s.Reset {
		t.Errorf("counts gone back: %+v", s)
	}
	// A model without response statistics has none.
	plain := &pb.ModelStatistics{Name: "m", Version: "1", InferenceStats: &pb.InferStatistics{}, ResponseStats: map[string]*pb.InferResponseStatistics{}}
	if s := ServerDelta(plain, plain); s.Reset || s.Responses != nil {
		t.Errorf("plain model: %+v", s)
	}
	// Summing spans weighs the averages by their counts.
	sum := &ServerResponses{}
	sum.Add(want)
	sum.Add(&ServerResponses{Success: 1, ComputeInfer: 1000, ComputeInferCount: 1, LaterComputeInfer: 1000, LaterCount: 1})
	if sum.Success != 10 || sum.ComputeInferCount != 12 || sum.ComputeInfer != time.Duration((float64(want.ComputeInfer)*11+1000)/12) {
		t.Errorf("sum = %+v", sum)
	}
}

// TestAggregatorOutputTokensFromTheServer counts the output tokens the
// driver counted for each request (the server's count, a text endpoint's
// usage; a token per response of an LLM), and none for a request of a
// model whose responses are not tokens.
func TestAggregatorOutputTokensFromTheServer(t *testing.T) {
	a := NewAggregator(time.Second, 2*time.Second)
	usage := decoupled(0, 10*msec, 2*msec, 2*msec) // 3 responses carrying 7 tokens
	usage.Timing.Tokens = 7
	llm := decoupled(0, 10*msec, 2*msec) // an LLM's 2 responses, a token each
	llm.Timing.Tokens = 2
	a.Add([]driver.Result{usage, llm, decoupled(0, 10*msec, 2*msec, 2*msec)})
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	if st := s.Tick.Streaming; st == nil || st.Responses != 8 || st.OutputTokens != 9 || st.OutputTokensPerS != 9 {
		t.Fatalf("streaming %+v; want 8 responses, 9 tokens, 9 per second", st)
	}
	// The run's counters add up and their rate is derived again.
	var sum ClientStats
	sum.Add(&s.Tick)
	sum.Add(&s.Tick)
	sum.Duration = 2 * time.Second
	sum.SetRates()
	if sum.Streaming.OutputTokens != 18 || sum.Streaming.OutputTokensPerS != 9 {
		t.Fatalf("added: %+v", sum.Streaming)
	}
}

// TestAggregatorTTFTFromSchedule measures an open loop's time to first
// response from the schedule too: a request sent 30 ms late waited those
// 30 ms for its first token as well. A closed loop has no such number.
func TestAggregatorTTFTFromSchedule(t *testing.T) {
	a := NewAggregator(time.Second, 2*time.Second)
	late := decoupled(30*msec, 10*msec, 2*msec)
	late.Scheduled = 0
	onTime := decoupled(100*msec, 20*msec)
	onTime.Scheduled = 100*msec - time.Microsecond
	a.Add([]driver.Result{late, onTime})
	var s Snapshot
	if err := a.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	st := s.Tick.Streaming
	if st == nil || st.TTFTScheduled == nil || st.TTFT.Max != 20*msec || st.TTFTScheduled.Max != 40*msec ||
		st.TTFTScheduled.Min != 20*msec+time.Microsecond || st.TTFTScheduled.Count != 2 {
		t.Fatalf("streaming %+v, from schedule %+v", st, st.TTFTScheduled)
	}
	if w := s.Window.Streaming; w == nil || w.TTFTScheduled == nil || w.TTFTScheduled.Max != 40*msec {
		t.Fatalf("window: %+v", w)
	}
	closed := NewAggregator(time.Second, 2*time.Second)
	closed.Add([]driver.Result{decoupled(0, 10*msec)})
	if err := closed.Tick(time.Second, false, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tick.Streaming.TTFTScheduled != nil {
		t.Fatalf("closed loop: %+v", s.Tick.Streaming.TTFTScheduled)
	}
}
