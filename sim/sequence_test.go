package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// The values Triton's sequence example clients send, and what the example
// models answer: the first request of a sequence carries START, the last
// END.
var (
	seqValues0 = []int32{0, 11, 7, 5, 3, 2, 0, 1}
	seqWant0   = []int32{1, 11, 7, 5, 3, 2, 0, 1}
	seqValues1 = []int32{100, -11, -7, -5, -3, -2, 0, -1}
	seqWant1   = []int32{101, -11, -7, -5, -3, -2, 0, -1}
)

func boolParam(v bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}
}

// seqRequest is request i of a sequence as Triton's Python gRPC client
// builds it: sequence_id (a number or a string), sequence_start and
// sequence_end, INPUT [1,1].
func seqRequest(model string, id any, i, n int, v int32) *pb.ModelInferRequest {
	params := map[string]*pb.InferParameter{"sequence_start": boolParam(i == 0), "sequence_end": boolParam(i == n-1)}
	switch c := id.(type) {
	case int:
		params["sequence_id"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(c)}}
	case string:
		params["sequence_id"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: c}}
	}
	return &pb.ModelInferRequest{
		ModelName:        model,
		Id:               fmt.Sprintf("%v_%d", id, i+1),
		Parameters:       params,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}}},
		Outputs:          []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT"}},
		RawInputContents: [][]byte{triton.PutInt32s([]int32{v})},
	}
}

// streamSequences sends the sequences on one ModelStreamInfer stream the
// way simple_grpc_sequence_stream_infer_client does (every request of the
// first, then of the second, without waiting), or interleaved request by
// request, and returns each sequence's answers in the order they came.
func streamSequences(t *testing.T, s *Server, model string, interleave bool, ids []any, values [][]int32) map[string][]int32 {
	t.Helper()
	raw, _ := rawGRPC(t, s)
	stream, err := raw.ModelStreamInfer(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*pb.ModelInferRequest
	if interleave {
		for i := range values[0] {
			for k, id := range ids {
				reqs = append(reqs, seqRequest(model, id, i, len(values[k]), values[k][i]))
			}
		}
	} else {
		for k, id := range ids {
			for i, v := range values[k] {
				reqs = append(reqs, seqRequest(model, id, i, len(values[k]), v))
			}
		}
	}
	for _, r := range reqs {
		if err := stream.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	got := map[string][]int32{}
	for range reqs {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if msg.ErrorMessage != "" {
			t.Fatalf("request %s: %s", msg.InferResponse.GetId(), msg.ErrorMessage)
		}
		resp := msg.InferResponse
		id, _, _ := strings.Cut(resp.Id, "_")
		got[id] = append(got[id], triton.Int32s(resp.RawOutputContents[0])...)
	}
	return got
}

func checkTranscript(t *testing.T, what string, got, want []int32) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s answered %v, want %v", what, got, want)
	}
}

func TestSimpleSequenceTranscriptsOverGRPCStream(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	for _, interleave := range []bool{false, true} {
		got := streamSequences(t, s, "simple_sequence", interleave, []any{1000, 1001}, [][]int32{seqValues0, seqValues1})
		checkTranscript(t, "sequence 1000", got["1000"], seqWant0)
		checkTranscript(t, "sequence 1001", got["1001"], seqWant1)
	}
	// A string correlation ID works on simple_sequence (no CORRID input).
	got := streamSequences(t, s, "simple_sequence", true, []any{1002, "SEQ-3"}, [][]int32{seqValues0, seqValues1})
	checkTranscript(t, "sequence 1002", got["1002"], seqWant0)
	checkTranscript(t, "sequence SEQ-3", got["SEQ-3"], seqWant1)
	engCheckInvariants(t, s.Engine(), "simple_sequence")

	st, err := s.Engine().SequenceStats("simple_sequence")
	if err != nil {
		t.Fatal(err)
	}
	if st.Started != 6 || st.Ended != 6 || st.Active != 0 || st.OutOfOrder != 0 || len(st.Sequences) != 6 {
		t.Errorf("sequence stats %+v", st)
	}
	for _, r := range st.Sequences {
		if r.Outcome != SequenceEnded || r.Requests != 8 || r.Executed != 8 || r.OutOfOrder != 0 {
			t.Errorf("sequence %+v", r)
		}
	}
	if last := st.Sequences[len(st.Sequences)-1]; !(last.CorrelationID == "SEQ-3" && last.StringID || st.Sequences[len(st.Sequences)-2].CorrelationID == "SEQ-3") {
		t.Errorf("string sequence not recorded as such: %+v", st.Sequences[4:])
	}
}

// TestSimpleSequenceTranscriptsOverHTTP does what
// simple_http_sequence_sync_infer_client does: one request at a time,
// alternating between the two sequences.
func TestSimpleSequenceTranscriptsOverHTTP(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	url := "http://" + s.HTTPAddr() + "/v2/models/simple_sequence/infer"
	for _, ids := range [][]any{{1000, 1001}, {1000, "SEQ-3"}} {
		got := map[int][]int32{}
		for i := range seqValues0 {
			for k, id := range ids {
				v := []int32{seqValues0[i], seqValues1[i]}[k]
				body := map[string]any{
					"id":         fmt.Sprintf("%v_%d", id, i+1),
					"parameters": map[string]any{"sequence_id": id, "sequence_start": i == 0, "sequence_end": i == len(seqValues0)-1},
					"inputs":     []map[string]any{{"name": "INPUT", "shape": []int{1, 1}, "datatype": "INT32", "data": []int32{v}}},
					"outputs":    []map[string]any{{"name": "OUTPUT", "parameters": map[string]any{"binary_data": false}}},
				}
				var resp inferJSON
				if code, msg := httpJSON(t, url, body, &resp); code != 200 {
					t.Fatalf("sequence %v request %d: %d %s", id, i, code, msg)
				}
				for _, x := range resp.ints(t, "OUTPUT") {
					got[k] = append(got[k], int32(x))
				}
			}
		}
		checkTranscript(t, fmt.Sprint("sequence ", ids[0]), got[0], seqWant0)
		checkTranscript(t, fmt.Sprint("sequence ", ids[1]), got[1], seqWant1)
	}
	engCheckInvariants(t, s.Engine(), "simple_sequence")
}

// TestDynaSequenceAddsCorrelationIDAtEnd: simple_dyna_sequence answers
// like simple_sequence, except that the END response adds the correlation
// ID.
func TestDynaSequenceAddsCorrelationIDAtEnd(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	got := streamSequences(t, s, "simple_dyna_sequence", false, []any{1000, 1001}, [][]int32{seqValues0, seqValues1})
	want0, want1 := slices.Clone(seqWant0), slices.Clone(seqWant1)
	want0[7] += 1000
	want1[7] += 1001
	checkTranscript(t, "sequence 1000", got["1000"], want0)
	checkTranscript(t, "sequence 1001", got["1001"], want1)

	got = streamSequences(t, s, "simple_dyna_sequence", true, []any{1, 2}, [][]int32{seqValues0, seqValues1})
	if g := got["1"]; len(g) != 8 || g[7] != 1+1 {
		t.Errorf("sequence 1 answered %v, want its last answer 1 + 1", g)
	}
	if g := got["2"]; len(g) != 8 || g[7] != -1+2 {
		t.Errorf("sequence 2 answered %v, want its last answer -1 + 2", g)
	}
	engCheckInvariants(t, s.Engine(), "simple_dyna_sequence")

	// Its CORRID control is UINT64: a string ID is refused, as Triton's
	// ValidateCorrelationId refuses it.
	raw, _ := rawGRPC(t, s)
	_, err := raw.ModelInfer(ctxT(t), seqRequest("simple_dyna_sequence", "SEQ-3", 0, 2, 1))
	want := "[request id: SEQ-3_1] sequence batching control 'CORRID' data-type is 'BYTES', but model 'simple_dyna_sequence' expects 'UINT64'"
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != want {
		t.Errorf("string ID on simple_dyna_sequence: %v\nwant %q", err, want)
	}
}

func TestSequenceErrorsAreTritons(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{})
	raw, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	infer := func(r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) { return raw.ModelInfer(ctx, r) }
	tests := []struct {
		name string
		req  *pb.ModelInferRequest
		msg  string
	}{
		{"no START on an unknown ID", seqRequest("simple_sequence", 77, 1, 3, 5),
			"inference request for sequence 77 to model 'simple_sequence' must specify the START flag on the first request of the sequence"},
		{"no START on an unknown string ID", seqRequest("simple_sequence", "abc", 1, 3, 5),
			"inference request for sequence abc to model 'simple_sequence' must specify the START flag on the first request of the sequence"},
		{"no correlation ID", func() *pb.ModelInferRequest {
			r := seqRequest("simple_sequence", 5, 0, 3, 5)
			delete(r.Parameters, "sequence_id")
			return r
		}(), "inference request to model 'simple_sequence' must specify a non-zero or non-empty correlation ID"},
		{"batch of two", func() *pb.ModelInferRequest {
			r := seqRequest("simple_sequence", 5, 0, 3, 5)
			r.Inputs[0].Shape = []int64{2, 1}
			r.RawInputContents[0] = triton.PutInt32s([]int32{1, 2})
			return r
		}(), "inference request to model 'simple_sequence' must specify batch-size 1 due to requirements of sequence batcher"},
		{"uint64 sequence_id", func() *pb.ModelInferRequest {
			r := seqRequest("simple_sequence", 5, 0, 3, 5)
			r.Parameters["sequence_id"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 5}}
			return r
		}(), "invalid value type for 'sequence_id' parameter, expected int64_param or string_param."},
	}
	for _, tc := range tests {
		_, err := infer(tc.req)
		if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != tc.msg {
			t.Errorf("%s: %v\nwant INVALID_ARGUMENT %q", tc.name, err, tc.msg)
		}
	}
	// A sequence that ended takes no more requests without a new START.
	for i, v := range []int32{4, 5} {
		if _, err := infer(seqRequest("simple_sequence", 9, i, 2, v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := infer(seqRequest("simple_sequence", 9, 1, 3, 6)); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "inference request for sequence 9 to model 'simple_sequence' must specify the START flag") {
		t.Errorf("request after END: %v", err)
	}
	// Refused requests are not counted, as on Triton.
	if st := engStats(t, s.Engine(), "simple_sequence"); st.InferenceStats.Fail.Count != 0 || st.InferenceStats.Success.Count != 2 {
		t.Errorf("statistics after refusals: %v", st.InferenceStats)
	}
}

// seqModel is a stateful INT32 model for engine-level tests.
func seqModel(name, behaviour string, maxBatch, instances int, sb SequenceBatchingSpec) ModelSpec {
	if sb.ControlInputs == nil {
		sb.ControlInputs = []ControlInputSpec{{Name: "START", Control: []ControlSpec{{Kind: "CONTROL_SEQUENCE_START", Int32FalseTrue: []int32{0, 1}}}}}
	}
	return ModelSpec{
		Name: name, Backend: "python", MaxBatchSize: maxBatch,
		Inputs:           []TensorSpec{{Name: "INPUT", DataType: "TYPE_INT32", Dims: []int64{1}}},
		Outputs:          []TensorSpec{{Name: "OUTPUT", DataType: "TYPE_INT32", Dims: []int64{1}}},
		SequenceBatching: &sb,
		InstanceGroups:   []InstanceGroupSpec{{Count: instances, Kind: "KIND_CPU"}},
		Latency:          LatencySpec{FixedUS: 200},
		Behaviour:        behaviour,
	}
}

func engSeqInfer(t *testing.T, e *Engine, model string, id any, i, n int, v int32) (int32, error) {
	t.Helper()
	resp, err := engInfer(t, e, seqRequest(model, id, i, n, v))
	if err != nil {
		return 0, err
	}
	return triton.Int32s(resp.RawOutputContents[0])[0], nil
}

// TestInterleavedSequencesKeepTheirOwnState runs many sequences at once on
// an accumulating model, each from its own goroutine: every answer is that
// sequence's running sum, so no sequence ever saw another's values, and
// the per-sequence counts show every sequence started, ended and ran in
// order.
func TestInterleavedSequencesKeepTheirOwnState(t *testing.T) {
	for _, strategy := range []string{"direct", "oldest"} {
		t.Run(strategy, func(t *testing.T) {
			sb := SequenceBatchingSpec{}
			if strategy == "oldest" {
				sb.Oldest = &SequenceOldestSpec{MaxCandidateSequences: 16, MaxQueueDelayMicroseconds: 300}
			}
			e := engNew(t, Repository{Models: []ModelSpec{seqModel("acc", BehaviourAccumulate, 4, 2, sb)}}, EngineOptions{})
			const sequences, length = 12, 15
			var wg sync.WaitGroup
			for k := range sequences {
				wg.Go(func() {
					id := 500 + k
					sum := int32(0)
					for i := range length {
						v := int32((k+1)*100 + i)
						sum += v
						got, err := engSeqInfer(t, e, "acc", id, i, length, v)
						if err != nil {
							t.Errorf("sequence %d request %d: %v", id, i, err)
							return
						}
						if got != sum {
							t.Errorf("sequence %d request %d: %d, want running sum %d", id, i, got, sum)
							return
						}
					}
				})
			}
			wg.Wait()
			engCheckInvariants(t, e, "acc")
			st, err := e.SequenceStats("acc")
			if err != nil {
				t.Fatal(err)
			}
			if st.Started != sequences || st.Ended != sequences || st.Active != 0 || st.Backlog != 0 || st.OutOfOrder != 0 {
				t.Errorf("stats %+v", st)
			}
			for _, r := range st.Sequences {
				if r.Outcome != SequenceEnded || r.Requests != length || r.Executed != length || r.OutOfOrder != 0 {
					t.Errorf("sequence %+v", r)
				}
			}
		})
	}
}

// TestStreamedSequenceRunsInOrder sends all the requests of several
// sequences back to back on one stream; the stream queues them in arrival
// order, so every sequence executes in order.
func TestStreamedSequenceRunsInOrder(t *testing.T) {
	repo := Repository{Models: []ModelSpec{seqModel("acc", BehaviourAccumulate, 8, 2, SequenceBatchingSpec{})}}
	s := startSim(t, repo, EngineOptions{})
	const length = 30
	ids := []any{1, 2, 3, "four"}
	values := make([][]int32, len(ids))
	for k := range ids {
		for i := range length {
			values[k] = append(values[k], int32(k*1000+i))
		}
	}
	got := streamSequences(t, s, "acc", true, ids, values)
	for k, id := range ids {
		want, sum := make([]int32, length), int32(0)
		for i, v := range values[k] {
			sum += v
			want[i] = sum
		}
		// Answers of one sequence come back in execution order.
		checkTranscript(t, fmt.Sprint("sequence ", id), got[fmt.Sprint(id)], want)
	}
	st, err := s.Engine().SequenceStats("acc")
	if err != nil || st.OutOfOrder != 0 || st.Ended != 4 {
		t.Errorf("stats %+v, %v", st, err)
	}
}

// TestOldestStrategyBatchesAcrossSequences: with the oldest strategy,
// requests of different sequences share executions; with direct and one
// slot per instance they cannot.
func TestOldestStrategyBatchesAcrossSequences(t *testing.T) {
	sb := SequenceBatchingSpec{Oldest: &SequenceOldestSpec{PreferredBatchSize: []int{4}, MaxQueueDelayMicroseconds: 2_000_000}}
	e := engNew(t, Repository{Models: []ModelSpec{seqModel("old", BehaviourSequence, 4, 1, sb)}}, EngineOptions{})
	var wg sync.WaitGroup
	for k := range 4 {
		wg.Go(func() {
			if got, err := engSeqInfer(t, e, "old", 10+k, 0, 1, int32(k)); err != nil || got != int32(k)+1 {
				t.Errorf("sequence %d: %d, %v", 10+k, got, err)
			}
		})
	}
	wg.Wait()
	st := engStats(t, e, "old")
	if st.ExecutionCount != 1 || len(st.BatchStats) != 1 || st.BatchStats[0].BatchSize != 4 {
		t.Errorf("4 sequences' requests ran in %d executions %v, want one batch of 4", st.ExecutionCount, st.BatchStats)
	}
	engCheckInvariants(t, e, "old")
}

// TestDirectStrategyBacklog: with every sequence slot taken, a new
// sequence waits in the backlog until a sequence ends.
func TestDirectStrategyBacklog(t *testing.T) {
	e := engNew(t, Repository{Models: []ModelSpec{seqModel("direct", BehaviourSequence, 2, 1, SequenceBatchingSpec{})}}, EngineOptions{})
	for _, id := range []int{1, 2} {
		if _, err := engSeqInfer(t, e, "direct", id, 0, 3, 0); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := engSeqInfer(t, e, "direct", 3, 0, 2, 0)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("third sequence ran with both slots taken (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	st, _ := e.SequenceStats("direct")
	if st.Active != 3 || st.Backlog != 1 {
		t.Errorf("with a backlog: %+v", st)
	}
	if _, err := engSeqInfer(t, e, "direct", 1, 2, 3, 0); err != nil { // END of sequence 1
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("backlogged sequence never got the freed slot")
	}
}

// TestIdleSequenceIsReleased: after max_sequence_idle_microseconds without
// a request a sequence is gone, and its next request needs START again.
func TestIdleSequenceIsReleased(t *testing.T) {
	sb := SequenceBatchingSpec{MaxSequenceIdleMicroseconds: 50_000}
	e := engNew(t, Repository{Models: []ModelSpec{seqModel("idle", BehaviourSequence, 1, 1, sb)}}, EngineOptions{})
	if _, err := engSeqInfer(t, e, "idle", 42, 0, 3, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := engSeqInfer(t, e, "idle", 42, 1, 3, 1); err != nil {
		t.Fatalf("within the idle time: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := e.SequenceStats("idle")
		if st.TimedOut == 1 {
			if st.Active != 0 || st.Sequences[0].Outcome != SequenceTimedOut || st.Sequences[0].Requests != 2 {
				t.Errorf("after the timeout: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sequence never timed out: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err := engSeqInfer(t, e, "idle", 42, 2, 3, 1)
	if triton.ErrorCode(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "must specify the START flag") {
		t.Errorf("request after the idle timeout: %v", err)
	}
	// Its slot is free again: the only slot takes a new sequence.
	if _, err := engSeqInfer(t, e, "idle", 43, 0, 1, 1); err != nil {
		t.Errorf("new sequence after the timeout: %v", err)
	}
}

// TestSequenceRestart: a START on an active ID begins a new sequence in
// the same slot, as Triton does after warning.
func TestSequenceRestart(t *testing.T) {
	e := engNew(t, Repository{Models: []ModelSpec{seqModel("acc", BehaviourAccumulate, 1, 1, SequenceBatchingSpec{})}}, EngineOptions{})
	for i, v := range []int32{5, 6} {
		if _, err := engSeqInfer(t, e, "acc", 7, i, 4, v); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := engSeqInfer(t, e, "acc", 7, 0, 2, 100); err != nil || got != 100 {
		t.Fatalf("restart answered %d, %v; want 100 (a fresh sum)", got, err)
	}
	if got, err := engSeqInfer(t, e, "acc", 7, 1, 2, 1); err != nil || got != 101 {
		t.Fatalf("end answered %d, %v; want 101", got, err)
	}
	st, _ := e.SequenceStats("acc")
	if st.Started != 2 || st.Restarted != 1 || st.Ended != 1 || st.OutOfOrder != 0 || len(st.Sequences) != 2 ||
		st.Sequences[0].Outcome != SequenceRestarted || st.Sequences[1].Outcome != SequenceEnded {
		t.Errorf("stats %+v", st)
	}
}

func TestSequenceStatsErrors(t *testing.T) {
	e := engNew(t, ExampleRepository(), EngineOptions{})
	if _, err := e.SequenceStats("simple"); err == nil || !strings.Contains(err.Error(), "has no sequence batching") {
		t.Errorf("SequenceStats(simple) = %v", err)
	}
	if _, err := e.SequenceStats("nope"); triton.ErrorCode(err) != codes.NotFound {
		t.Errorf("SequenceStats(nope) = %v", err)
	}
}

func TestSequenceRepositoryChecks(t *testing.T) {
	base := func() ModelSpec { return seqModel("m", BehaviourSequence, 4, 1, SequenceBatchingSpec{}) }
	tests := []struct {
		name string
		edit func(m *ModelSpec)
		want string
	}{
		{"both strategies", func(m *ModelSpec) {
			m.SequenceBatching.Direct, m.SequenceBatching.Oldest = &SequenceDirectSpec{}, &SequenceOldestSpec{}
		}, "choose one strategy"},
		{"with dynamic batching", func(m *ModelSpec) { m.DynamicBatching = &DynamicBatchingSpec{} }, "not both"},
		{"control named like an input", func(m *ModelSpec) { m.SequenceBatching.ControlInputs[0].Name = "INPUT" }, "already a model input"},
		{"bad kind", func(m *ModelSpec) { m.SequenceBatching.ControlInputs[0].Control[0].Kind = "CONTROL_SEQUENCE_BEGIN" }, "is not CONTROL_SEQUENCE_START"},
		{"one false_true value", func(m *ModelSpec) { m.SequenceBatching.ControlInputs[0].Control[0].Int32FalseTrue = []int32{1} }, "give two values"},
		{"CORRID type", func(m *ModelSpec) {
			m.SequenceBatching.ControlInputs = append(m.SequenceBatching.ControlInputs,
				ControlInputSpec{Name: "CORRID", Control: []ControlSpec{{Kind: "CONTROL_SEQUENCE_CORRID", DataType: "TYPE_FP32"}}})
		}, "CORRID is TYPE_UINT64"},
		{"sequence behaviour without sequence batching", func(m *ModelSpec) { m.SequenceBatching = nil }, "needs a sequence_batching section"},
		{"FP32 accumulator", func(m *ModelSpec) {
			m.Behaviour = BehaviourAccumulate
			m.Inputs[0].DataType, m.Outputs[0].DataType = "FP32", "FP32"
		}, "needs an INT32 or INT64 input"},
	}
	for _, tc := range tests {
		m := base()
		sb := *m.SequenceBatching
		sb.ControlInputs = slices.Clone(sb.ControlInputs)
		sb.ControlInputs[0].Control = slices.Clone(sb.ControlInputs[0].Control)
		m.SequenceBatching = &sb
		tc.edit(&m)
		err := Repository{Models: []ModelSpec{m}}.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
