package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// llmTestModel is a quick LLM: 2 ms prefill (+10 µs per prompt word), 3 ms
// iterations (+1 ms per further running request), exactly tokens tokens.
func llmTestModel(name string, tokens int, mod func(*ModelSpec)) ModelSpec {
	m := DemoLLM()
	m.Name = name
	m.LLM = &LLMSpec{PrefillUS: 2000, PrefillPerTokenUS: 10, TokenUS: 3000, TokenPerSequenceUS: 1000,
		MaxSequences: 8, OutputTokens: LengthSpec{Mean: float64(tokens)}}
	if mod != nil {
		mod(&m)
	}
	return m
}

// llmRequest is a request to an LLM test model with a prompt, max_tokens
// (a tensor, when the model has the input) and the stream flag.
func llmRequest(model, id, prompt string, maxTokens int32, stream bool) *pb.ModelInferRequest {
	mt := make([]byte, 4)
	binary.LittleEndian.PutUint32(mt, uint32(maxTokens))
	st := []byte{0}
	if stream {
		st[0] = 1
	}
	return &pb.ModelInferRequest{
		ModelName: model, Id: id,
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "text_input", Datatype: "BYTES", Shape: []int64{1}},
			{Name: "max_tokens", Datatype: "INT32", Shape: []int64{1}},
			{Name: "stream", Datatype: "BOOL", Shape: []int64{1}},
		},
		RawInputContents: [][]byte{kserve.EncodeBytes([][]byte{[]byte(prompt)}), mt, st},
	}
}

// openLLMStream opens a raw ModelStreamInfer stream on the simulator.
func openLLMStream(t *testing.T, s *Server) (grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse], context.CancelFunc) {
	t.Helper()
	raw, _ := rawGRPC(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	st, err := raw.ModelStreamInfer(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return st, cancel
}

// recvAll reads responses until the stream ends.
func recvAll(t *testing.T, st grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]) []*pb.ModelStreamInferResponse {
	t.Helper()
	var out []*pb.ModelStreamInferResponse
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		out = append(out, m)
	}
}

func isFinal(m *pb.ModelStreamInferResponse) bool {
	return m.GetInferResponse().GetParameters()["triton_final_response"].GetBoolParam()
}

func TestLLMStreamsOneResponsePerToken(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 8, nil)}}, EngineOptions{})
	st, cancel := openLLMStream(t, s)
	defer cancel()
	if err := st.Send(llmRequest("llm", "r1", "one two three", 5, true)); err != nil {
		t.Fatal(err)
	}
	_ = st.CloseSend()
	msgs := recvAll(t, st)
	if len(msgs) != 5 {
		t.Fatalf("%d responses, want 5 (max_tokens 5 of the 8 the model would write)", len(msgs))
	}
	for i, m := range msgs {
		ir := m.GetInferResponse()
		if m.GetErrorMessage() != "" || ir.GetId() != "r1" || len(ir.GetOutputs()) != 1 || ir.GetOutputs()[0].GetName() != "text_output" {
			t.Fatalf("response %d = %v", i, m)
		}
		if _, ok := ir.GetParameters()["triton_final_response"]; !ok {
			t.Fatalf("response %d lacks triton_final_response", i)
		}
		if final := isFinal(m); final != (i == 4) {
			t.Errorf("response %d: triton_final_response = %t", i, final)
		}
		words, err := kserve.DecodeBytes(ir.GetRawOutputContents()[0], 1)
		if err != nil || len(words) != 1 || string(words[0]) != tokenWords[i] {
			t.Errorf("response %d text = %q, %v", i, words, err)
		}
	}

	e := s.Engine()
	engCheckInvariants(t, e, "llm")
	ms := engStats(t, e, "llm")
	if ms.InferenceStats.Success.Count != 1 || ms.InferenceCount != 1 || ms.ExecutionCount != 1 {
		t.Errorf("stats: success %d inference %d execution %d, want 1 1 1", ms.InferenceStats.Success.Count, ms.InferenceCount, ms.ExecutionCount)
	}
	if len(ms.ResponseStats) != 5 {
		t.Fatalf("response_stats has %d indexes, want 5: %v", len(ms.ResponseStats), ms.ResponseStats)
	}
	for i := range 5 {
		r := ms.ResponseStats[string(rune('0'+i))]
		if r.GetSuccess().GetCount() != 1 || r.GetComputeInfer().GetCount() != 1 || r.GetComputeOutput().GetCount() != 1 ||
			r.GetEmptyResponse().GetCount() != 0 || r.GetSuccess().GetNs() != r.GetComputeInfer().GetNs()+r.GetComputeOutput().GetNs() {
			t.Errorf("response_stats[%d] = %v", i, r)
		}
	}
	ls, err := e.LLMStats("llm")
	if err != nil || len(ls.Requests) != 1 || ls.InFlight != 0 {
		t.Fatalf("LLMStats = %+v, %v", ls, err)
	}
	rec := ls.Requests[0]
	if rec.ID != "r1" || rec.PromptTokens != 3 || rec.MaxTokens != 5 || rec.Tokens != 5 || rec.Responses != 5 ||
		len(rec.Gaps) != 4 || rec.Outcome != LLMDone || !rec.Stream || rec.InFlightAtArrival != 1 {
		t.Errorf("record = %+v", rec)
	}
	if rec.FirstResponse <= 0 || rec.Final < rec.FirstResponse {
		t.Errorf("record times: first %v final %v", rec.FirstResponse, rec.Final)
	}
}

func TestLLMEmptyFinalResponse(t *testing.T) {
	emptyFinal := func(m *ModelSpec) { m.LLM.EmptyFinal = true }
	for _, asked := range []bool{true, false} {
		s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 3, emptyFinal)}}, EngineOptions{})
		st, cancel := openLLMStream(t, s)
		req := llmRequest("llm", "e1", "hello", 10, true)
		if asked {
			req.Parameters = map[string]*pb.InferParameter{emptyFinalResponse: {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
		}
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
		_ = st.CloseSend()
		msgs := recvAll(t, st)
		cancel()
		want := 3
		if asked {
			want = 4
		}
		if len(msgs) != want {
			t.Fatalf("asked %t: %d responses, want %d", asked, len(msgs), want)
		}
		for i, m := range msgs[:3] {
			if isFinal(m) || len(m.GetInferResponse().GetOutputs()) != 1 {
				t.Errorf("asked %t: token response %d = %v", asked, i, m)
			}
		}
		if asked {
			last := msgs[3].GetInferResponse()
			if !isFinal(msgs[3]) || len(last.GetOutputs()) != 0 || last.GetId() != "e1" || last.GetModelName() != "llm" {
				t.Errorf("empty final response = %v", msgs[3])
			}
		}
		ms := engStats(t, s.Engine(), "llm")
		if r := ms.ResponseStats["3"]; r.GetEmptyResponse().GetCount() != 1 || r.GetComputeInfer().GetCount() != 1 || r.GetSuccess().GetCount() != 0 {
			t.Errorf("asked %t: response_stats[3] = %v, want one empty response", asked, r)
		}
		if ms.InferenceStats.Success.Count != 1 {
			t.Errorf("asked %t: success %d", asked, ms.InferenceStats.Success.Count)
		}
	}
}

func TestLLMMaxTokensParameterAndNoStream(t *testing.T) {
	// A model without the max_tokens input reads the request parameter.
	noInput := func(m *ModelSpec) {
		m.Inputs = []TensorSpec{m.Inputs[0], m.Inputs[2]}
	}
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 20, noInput)}}, EngineOptions{})
	st, cancel := openLLMStream(t, s)
	defer cancel()
	req := llmRequest("llm", "p1", "a b", 0, true)
	req.Inputs = []*pb.ModelInferRequest_InferInputTensor{req.Inputs[0], req.Inputs[2]}
	req.RawInputContents = [][]byte{req.RawInputContents[0], req.RawInputContents[2]}
	req.Parameters = map[string]*pb.InferParameter{"max_tokens": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 3}}}
	if err := st.Send(req); err != nil {
		t.Fatal(err)
	}
	// stream=false: one response with every token, at the end.
	quiet := llmRequest("llm", "p2", "a b", 0, false)
	quiet.Inputs = req.Inputs
	quiet.RawInputContents = [][]byte{req.RawInputContents[0], {0}}
	quiet.Parameters = req.Parameters
	if err := st.Send(quiet); err != nil {
		t.Fatal(err)
	}
	_ = st.CloseSend()
	byID := map[string][]*pb.ModelStreamInferResponse{}
	for _, m := range recvAll(t, st) {
		if m.GetErrorMessage() != "" {
			t.Fatalf("error: %s", m.GetErrorMessage())
		}
		byID[m.GetInferResponse().GetId()] = append(byID[m.GetInferResponse().GetId()], m)
	}
	if len(byID["p1"]) != 3 || !isFinal(byID["p1"][2]) {
		t.Errorf("streamed request: %d responses, want 3 (max_tokens parameter)", len(byID["p1"]))
	}
	if len(byID["p2"]) != 1 || !isFinal(byID["p2"][0]) {
		t.Fatalf("request with stream=false: %d responses, want 1", len(byID["p2"]))
	}
	text, err := kserve.DecodeBytes(byID["p2"][0].GetInferResponse().GetRawOutputContents()[0], 1)
	if err != nil || string(text[0]) != strings.Join(tokenWords[:3], " ") {
		t.Errorf("text = %q, %v", text, err)
	}
}

// runLLMRequests submits requests to the engine as a stream would and
// waits for them all.
func runLLMRequests(t *testing.T, e *Engine, reqs ...*pb.ModelInferRequest) {
	t.Helper()
	done := make(chan *request, len(reqs))
	for _, req := range reqs {
		if _, err := e.submit(req, true, func(r *request) { done <- r }, func(*request, *pb.ModelInferResponse, error) {}, budgetShare{}); err != nil {
			t.Fatal(err)
		}
	}
	for range reqs {
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("request %s: %v", r.req.GetId(), r.err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("requests did not finish")
		}
	}
}

// meanGap is the mean time between responses of the records.
func meanGap(recs []LLMRequest) time.Duration {
	var sum time.Duration
	n := 0
	for _, r := range recs {
		for _, g := range r.Gaps {
			sum += g
			n++
		}
	}
	return sum / time.Duration(max(n, 1))
}

func TestLLMInFlightBatchingAndPrefill(t *testing.T) {
	// Alone, an iteration takes 2 ms; with 6 running, 2 + 5×4 = 22 ms.
	// A prefill takes 1 ms per prompt word.
	spec := func(m *ModelSpec) {
		m.LLM.TokenUS, m.LLM.TokenPerSequenceUS = 2000, 4000
		m.LLM.PrefillUS, m.LLM.PrefillPerTokenUS = 0, 1000
	}
	e := engNew(t, Repository{Models: []ModelSpec{llmTestModel("llm", 6, spec)}}, EngineOptions{})
	runLLMRequests(t, e, llmRequest("llm", "alone", "w", 0, true))
	var six []*pb.ModelInferRequest
	for i := range 6 {
		six = append(six, llmRequest("llm", "six"+string(rune('0'+i)), "w", 0, true))
	}
	runLLMRequests(t, e, six...)
	runLLMRequests(t, e, llmRequest("llm", "long", strings.TrimSpace(strings.Repeat("w ", 60)), 0, true))
	ls, err := e.LLMStats("llm")
	if err != nil || len(ls.Requests) != 8 {
		t.Fatalf("LLMStats: %d records, %v", len(ls.Requests), err)
	}
	alone, together := meanGap(ls.Requests[:1]), meanGap(ls.Requests[1:7])
	// The designed ratio is 11; a loaded machine stretches short sleeps
	// more than long ones, so ask only for a clear slowdown.
	if together < 4*alone {
		t.Errorf("time per token: %v alone, %v with 6 running; in-flight batching should slow it", alone, together)
	}
	short, long := ls.Requests[0].FirstResponse, ls.Requests[7].FirstResponse
	if long < short+40*time.Millisecond {
		t.Errorf("time to first token: %v for 1 prompt word, %v for 60 (prefill 1 ms per word)", short, long)
	}
	if ls.Requests[7].PromptTokens != 60 {
		t.Errorf("prompt tokens = %d, want 60", ls.Requests[7].PromptTokens)
	}
	engCheckInvariants(t, e, "llm")
}

func TestLLMQueuesBeyondMaxSequences(t *testing.T) {
	e := engNew(t, Repository{Models: []ModelSpec{llmTestModel("llm", 5, func(m *ModelSpec) { m.LLM.MaxSequences = 2 })}}, EngineOptions{})
	var reqs []*pb.ModelInferRequest
	for i := range 4 {
		reqs = append(reqs, llmRequest("llm", string(rune('a'+i)), "w", 0, true))
	}
	runLLMRequests(t, e, reqs...)
	ls, _ := e.LLMStats("llm")
	byID := map[string]LLMRequest{}
	for _, r := range ls.Requests {
		byID[r.ID] = r
	}
	for i, id := range []string{"a", "b", "c", "d"} {
		if got := byID[id].InFlightAtArrival; got != i+1 {
			t.Errorf("request %s arrived with %d in flight, want %d", id, got, i+1)
		}
	}
	// c and d wait for a and b to finish: their queue time is at least the
	// first ones' time to their last token.
	for _, id := range []string{"c", "d"} {
		if byID[id].Queue < byID["a"].Final/2 {
			t.Errorf("request %s queued %v; a took %v to finish", id, byID[id].Queue, byID["a"].Final)
		}
	}
	if n, _ := e.InFlight("llm"); n != 0 {
		t.Errorf("InFlight = %d after all finished", n)
	}
	engCheckInvariants(t, e, "llm")
}

func TestLLMCancelWhenTheStreamEnds(t *testing.T) {
	s := startSim(t, Repository{Models: []ModelSpec{llmTestModel("llm", 10000, nil)}}, EngineOptions{})
	st, cancel := openLLMStream(t, s)
	if err := st.Send(llmRequest("llm", "long", "w", 0, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	e := s.Engine()
	if n, _ := e.InFlight("llm"); n != 1 {
		t.Errorf("InFlight = %d while generating, want 1", n)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls, _ := e.LLMStats("llm")
		if len(ls.Requests) == 1 && ls.InFlight == 0 {
			if ls.Requests[0].Outcome != LLMCancelled {
				t.Errorf("outcome = %s, want cancelled", ls.Requests[0].Outcome)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the request was not given up: %+v", ls)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ms := engStats(t, e, "llm")
	if ms.InferenceStats.Fail.Count != 1 || ms.InferenceStats.Success.Count != 0 {
		t.Errorf("fail %d success %d, want 1 0", ms.InferenceStats.Fail.Count, ms.InferenceStats.Success.Count)
	}
	var cancels uint64
	for _, r := range ms.ResponseStats {
		cancels += r.GetCancel().GetCount()
	}
	if cancels != 1 {
		t.Errorf("response_stats cancels = %d, want 1", cancels)
	}
	if m := engMetrics(t, e, "llm"); m.FailureByReason["CANCELED"] != 1 {
		t.Errorf("failures = %v", m.FailureByReason)
	}
}

func TestLLMSpecCheck(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*ModelSpec)
		want string
	}{
		{func(m *ModelSpec) { m.Decoupled = false }, `needs "decoupled": true`},
		{func(m *ModelSpec) { m.MaxBatchSize = 4 }, "needs max_batch_size 0"},
		{func(m *ModelSpec) { m.Inputs = m.Inputs[1:] }, `needs a BYTES input "text_input"`},
		{func(m *ModelSpec) { m.Inputs[1].DataType = "FP32" }, `input "max_tokens" must be an integer type`},
		{func(m *ModelSpec) { m.Inputs[2].DataType = "INT32" }, `input "stream" must be BOOL`},
		{func(m *ModelSpec) { m.Outputs[0].DataType = "FP32" }, "needs a BYTES output"},
		{func(m *ModelSpec) { m.LLM.Jitter = 1 }, "llm.jitter"},
		{func(m *ModelSpec) { m.LLM.OutputTokens = LengthSpec{Min: 10, Max: 5} }, "max 5 is below min 10"},
		{func(m *ModelSpec) { m.LLM.TokenUS = -1 }, "must not be negative"},
	} {
		m := DemoLLM()
		tc.mod(&m)
		err := Repository{Models: []ModelSpec{m}}.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check = %v, want %q", err, tc.want)
		}
	}
	if err := (Repository{Models: []ModelSpec{DemoLLM()}}).check(); err != nil {
		t.Errorf("demo llm: %v", err)
	}
}

func TestLengthSpecDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spec := LengthSpec{Mean: 50, StdDev: 200, Min: 10, Max: 60}
	seenMin, seenMax := false, false
	for range 1000 {
		n := spec.draw(rng)
		if n < 10 || n > 60 {
			t.Fatalf("draw = %d outside [10, 60]", n)
		}
		seenMin, seenMax = seenMin || n == 10, seenMax || n == 60
	}
	if !seenMin || !seenMax {
		t.Errorf("a wide distribution should reach both bounds: min %t max %t", seenMin, seenMax)
	}
	if n := (LengthSpec{Mean: 7}).draw(rng); n != 7 {
		t.Errorf("fixed length = %d, want 7", n)
	}
}
