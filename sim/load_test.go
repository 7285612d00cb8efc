package sim

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// loadRepository has one dynamically batched model on two GPUs.
func loadRepository() Repository {
	return Repository{Models: []ModelSpec{{
		Name: "loaded", Backend: "python", MaxBatchSize: 16,
		Inputs:          []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{8}}},
		Outputs:         []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{8}}},
		DynamicBatching: &DynamicBatchingSpec{PreferredBatchSize: []int{4, 8}, MaxQueueDelayMicroseconds: 1000},
		InstanceGroups:  []InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU"}},
		Latency:         LatencySpec{FixedUS: 300, PerItemUS: 20},
		Behaviour:       BehaviourIdentity,
	}}}
}

// TestLoadStatisticsInvariants drives many concurrent clients over both
// protocols and checks Triton's statistics invariants and that /metrics
// agrees with ModelStatistics.
func TestLoadStatisticsInvariants(t *testing.T) {
	s := startSim(t, loadRepository(), EngineOptions{})
	clients := []triton.Client{dial(t, s, "grpc"), dial(t, s, "http")}
	const workers, perWorker = 24, 20
	ctx := ctxT(t)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		items     int64
		firstErr  error
		wrongData int
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%len(clients)]
			for i := range perWorker {
				b := 1 + (w+i)%3
				vals := make([]float32, 8*b)
				for j := range vals {
					vals[j] = float32(w*1000 + i*10 + j)
				}
				data := triton.PutFloat32s(vals)
				resp, err := c.Infer(ctx, &triton.InferRequest{
					Model: "loaded", ID: fmt.Sprint(w, "-", i),
					Inputs: []triton.Tensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{int64(b), 8}, Data: data}},
				})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					items += int64(b)
					if out, ok := resp.Output("OUTPUT0"); !ok || !bytes.Equal(out.Data, data) {
						wrongData++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("request failed: %v", firstErr)
	}
	if wrongData > 0 {
		t.Fatalf("%d responses carried another request's data", wrongData)
	}

	st, err := s.Engine().ModelStatistics("loaded", "")
	if err != nil {
		t.Fatal(err)
	}
	ms := st.GetModelStats()[0]
	is := ms.GetInferenceStats()
	n := uint64(workers * perWorker)
	eq := func(what string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", what, got, want)
		}
	}
	eq("success.count", is.GetSuccess().GetCount(), n)
	eq("fail.count", is.GetFail().GetCount(), 0)
	eq("queue.count", is.GetQueue().GetCount(), n)
	eq("compute_input.count", is.GetComputeInput().GetCount(), n)
	eq("compute_infer.count", is.GetComputeInfer().GetCount(), n)
	eq("compute_output.count", is.GetComputeOutput().GetCount(), n)
	eq("inference_count", ms.GetInferenceCount(), uint64(items))
	var batches, batchItems uint64
	for _, b := range ms.GetBatchStats() {
		c := b.GetComputeInfer().GetCount()
		if b.GetComputeInput().GetCount() != c || b.GetComputeOutput().GetCount() != c {
			t.Errorf("batch_stats[%d] counts differ: %v", b.GetBatchSize(), b)
		}
		if b.GetBatchSize() > 16 {
			t.Errorf("batch of %d exceeds max_batch_size 16", b.GetBatchSize())
		}
		batches += c
		batchItems += b.GetBatchSize() * c
	}
	eq("Σ batch_stats count", batches, ms.GetExecutionCount())
	eq("Σ batch_size × count", batchItems, ms.GetInferenceCount())
	if ms.GetExecutionCount() >= n {
		t.Errorf("execution_count %d for %d concurrent requests: the dynamic batcher never batched", ms.GetExecutionCount(), n)
	}
	if is.GetSuccess().GetNs() < is.GetQueue().GetNs()+is.GetComputeInfer().GetNs() {
		t.Errorf("success.ns %d < queue.ns %d + compute_infer.ns %d", is.GetSuccess().GetNs(), is.GetQueue().GetNs(), is.GetComputeInfer().GetNs())
	}

	code, _, body := httpDo(t, "GET", "http://"+s.MetricsAddr()+"/metrics", nil, nil)
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	m, err := triton.ParseMetrics(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	checkMetricsMatchStats(t, s, m, "loaded")
	if mm := m.Models[triton.ModelKey{Model: "loaded", Version: "1"}]; mm.PendingRequests != 0 {
		t.Errorf("pending = %v after all requests finished", mm.PendingRequests)
	}
	// One instance on each of the two GPUs: the success counter has one
	// gpu_uuid series per GPU.
	if got := successSeries(body); got != 2 {
		t.Errorf("nv_inference_request_success has %d gpu_uuid series, want 2", got)
	}

	// Counters only grow: another round raises every ns total.
	raw, _ := rawGRPC(t, s)
	req := &pb.ModelInferRequest{ModelName: "loaded",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 8}}},
		RawInputContents: [][]byte{make([]byte, 32)}}
	if _, err := raw.ModelInfer(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	st2, _ := s.Engine().ModelStatistics("loaded", "")
	is2 := st2.GetModelStats()[0].GetInferenceStats()
	if is2.GetSuccess().GetNs() <= is.GetSuccess().GetNs() || is2.GetComputeInfer().GetNs() <= is.GetComputeInfer().GetNs() {
		t.Errorf("ns totals did not grow: %v then %v", is, is2)
	}
}

func successSeries(body []byte) int {
	n := 0
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if bytes.HasPrefix(line, []byte(`nv_inference_request_success{gpu_uuid="`)) {
			n++
		}
	}
	return n
}
