package sim

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton/pb"
)

// engPlanScheduler is a scheduler with only the batching policy set, for
// testing plan without goroutines.
func engPlanScheduler(maxBatch int, pref []int, delay time.Duration, queue ...*request) *scheduler {
	s := &scheduler{dynamic: true, maxBatch: maxBatch, pref: map[int]bool{}, delay: int64(delay), queue: queue}
	for _, p := range pref {
		s.pref[p] = true
		s.maxPref = max(s.maxPref, p)
	}
	if s.maxPref == 0 {
		s.maxPref = maxBatch
	}
	return s
}

// engQueued is a queued request of batch elements, enqueued at ms.
func engQueued(batch int, ms int64) *request {
	return &request{batch: batch, queueStart: ms * int64(time.Millisecond)}
}

func TestPlanFollowsTritonBatchingRules(t *testing.T) {
	ms := int64(time.Millisecond)
	tests := []struct {
		name      string
		s         *scheduler
		now       int64
		wantCount int
		wantWait  int64
	}{
		// 3 queued, no preferred sizes, max 8, 1 ms delay, 0.4 ms old: wait 0.6 ms for more.
		{"waits for more until the delay", engPlanScheduler(8, nil, time.Millisecond, engQueued(1, 0), engQueued(1, 0), engQueued(1, 0)),
			ms * 4 / 10, 3, ms * 6 / 10},
		// Same queue, oldest 1 ms old: the delay is exceeded, send all 3.
		{"sends what it has after the delay", engPlanScheduler(8, nil, time.Millisecond, engQueued(1, 0), engQueued(1, 0), engQueued(1, 0)),
			ms, 3, 0},
		// No delay configured: send at once.
		{"zero delay sends at once", engPlanScheduler(8, nil, 0, engQueued(2, 0)), 0, 1, 0},
		// 5 requests of 2 with max 8: the 5th would overflow, send 4 requests (8 elements).
		{"full batch goes at once", engPlanScheduler(8, nil, time.Second, engQueued(2, 0), engQueued(2, 0), engQueued(2, 0), engQueued(2, 0), engQueued(2, 0)),
			0, 4, 0},
		// Preferred 4 reached with 5 queued singles and max preferred 8: send the preferred 4 now.
		{"preferred size goes at once", engPlanScheduler(16, []int{4, 8}, time.Second, engQueued(1, 0), engQueued(1, 0), engQueued(1, 0), engQueued(1, 0), engQueued(1, 0)),
			0, 4, 0},
		// Preferred 4 reached but the delay is exceeded: send everything pending (5).
		{"after the delay everything goes", engPlanScheduler(16, []int{4, 8}, time.Millisecond, engQueued(1, 0), engQueued(1, 0), engQueued(1, 0), engQueued(1, 0), engQueued(1, 0)),
			2 * ms, 5, 0},
		// Preferred [4]: 3+3 passes max preferred 4 with none reached: send the 3 that fit.
		{"past the largest preferred size", engPlanScheduler(8, []int{4}, time.Second, engQueued(3, 0), engQueued(3, 0)),
			0, 1, 0},
		// Preferred [4,8], 3 singles, young: wait for a preferred size.
		{"waits for a preferred size", engPlanScheduler(8, []int{4, 8}, time.Second, engQueued(1, 0), engQueued(1, 0), engQueued(1, 0)),
			0, 3, int64(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count, wait := tt.s.plan(tt.now)
			if count != tt.wantCount || wait != tt.wantWait {
				t.Errorf("plan = %d requests, wait %v; want %d, %v", count, time.Duration(wait), tt.wantCount, time.Duration(tt.wantWait))
			}
		})
	}
}

func TestPlanSkipsCancelledAndSplitsShapes(t *testing.T) {
	a, b, c := engQueued(1, 0), engQueued(1, 0), engQueued(1, 0)
	b.state.Store(stateCancelled)
	s := engPlanScheduler(8, nil, 0, a, b, c)
	if count, _ := s.plan(0); count != 2 {
		t.Errorf("plan counted %d live requests, want 2", count)
	}
	batch := s.take(2, 0)
	if len(batch) != 2 || batch[0] != a || batch[1] != c {
		t.Errorf("take returned %d requests, want a and c", len(batch))
	}
	// Requests whose variable dimensions differ never share a batch.
	x, y := engQueued(1, 0), engQueued(1, 0)
	y.varKey = 42
	s = engPlanScheduler(8, nil, 0, x, y)
	if count, _ := s.plan(0); count != 1 {
		t.Errorf("plan batched %d requests of different shapes, want 1", count)
	}
}

// engLoad runs open-loop load at rate requests/s for d; it returns once
// the last request is sent, with a function that waits for the responses.
func engLoad(t *testing.T, e *Engine, model string, rate float64, d time.Duration) (wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Int64
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		due := start.Add(time.Duration(n) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		wg.Go(func() {
			if _, err := engInfer(t, e, engFP32Request(model, 1, 4)); err != nil {
				failed.Add(1)
			}
		})
		n++
	}
	return func() {
		wg.Wait()
		if f := failed.Load(); f > 0 {
			t.Errorf("%d of %d requests failed", f, n)
		}
	}
}

func TestThroughputSaturatesAtCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	// Capacity: 2 instances × 4 per batch / the batch time. Alone a batch
	// takes 20 ms; the two instances share GPU 0, so they take longer.
	const batchTime = 20 * time.Millisecond
	repo := Repository{Models: []ModelSpec{
		engTimedModel("timed", batchTime, 4, 2, &DynamicBatchingSpec{MaxQueueDelayMicroseconds: 1000}),
	}}
	e := engNew(t, repo, EngineOptions{})
	capacity := 2 * 4 / batchTime.Seconds()

	// Closed loop, far more requests in flight than fit in two batches.
	const clients = 48
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := engInfer(t, e, engFP32Request("timed", 1, 4)); err != nil {
					t.Errorf("Infer: %v", err)
					return
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // settle
	before := engStats(t, e, "timed")
	t0 := time.Now()
	time.Sleep(time.Second)
	after := engStats(t, e, "timed")
	elapsed := time.Since(t0).Seconds()
	close(stop)
	wg.Wait()

	throughput := float64(after.InferenceCount-before.InferenceCount) / elapsed
	// The batch time is the one the executions really took: on a starved
	// machine timers fire late and every batch runs long, which is not the
	// scheduler's doing. Gaps between batches would be, and they lower
	// throughput below instances × batch / batch time.
	computeNS := func(st *pb.ModelStatistics) uint64 {
		is := st.InferenceStats
		return is.ComputeInput.Ns + is.ComputeInfer.Ns + is.ComputeOutput.Ns
	}
	measured := time.Duration((computeNS(after) - computeNS(before)) / (after.InferenceStats.ComputeInfer.Count - before.InferenceStats.ComputeInfer.Count))
	if measured > batchTime {
		capacity = 2 * 4 / measured.Seconds()
	}
	if throughput < capacity*0.85 || throughput > capacity*1.15 {
		t.Errorf("throughput %.0f/s, want %.0f/s ± 15%% (2 instances × 4 / %v per batch)", throughput, capacity, measured)
	}
	dq := after.InferenceStats.Queue.Ns - before.InferenceStats.Queue.Ns
	dc := after.InferenceStats.Queue.Count - before.InferenceStats.Queue.Count
	// With 48 in flight and 8 executing, a request waits for about five
	// batch times; at least two is a safe lower bound.
	if avg := time.Duration(dq / dc); avg < 2*batchTime {
		t.Errorf("average queue time %v at saturation, want > %v", avg, 2*batchTime)
	}
	engCheckInvariants(t, e, "timed")
}

func TestQueueTimeGrowsAboveCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	// Capacity 1 instance × 2 / 20 ms = 100/s; offer 200/s for 0.6 s.
	repo := Repository{Models: []ModelSpec{
		engTimedModel("timed", 20*time.Millisecond, 2, 1, &DynamicBatchingSpec{}),
	}}
	e := engNew(t, repo, EngineOptions{})
	var mu sync.Mutex
	var pending []uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				mu.Lock()
				pending = append(pending, engMetrics(t, e, "timed").Pending)
				mu.Unlock()
			}
		}
	}()
	wait := engLoad(t, e, "timed", 200, 600*time.Millisecond)
	close(stop)
	<-done
	before := engStats(t, e, "timed").InferenceStats
	wait()
	mu.Lock()
	defer mu.Unlock()
	if len(pending) < 3 {
		t.Fatalf("only %d samples", len(pending))
	}
	// The backlog grows by about 100 requests a second while the load lasts.
	if first, last := pending[0], pending[len(pending)-1]; last < first+15 {
		t.Errorf("pending went from %d to %d: the queue did not grow", first, last)
	}
	// So requests served later waited longer than those served earlier.
	after := engStats(t, e, "timed").InferenceStats
	early := before.Queue.Ns / max(1, before.Queue.Count)
	late := (after.Queue.Ns - before.Queue.Ns) / max(1, after.Queue.Count-before.Queue.Count)
	if late < 2*early {
		t.Errorf("average queue time %v early, %v late: want it to grow", time.Duration(early), time.Duration(late))
	}
	engCheckInvariants(t, e, "timed")
}

func TestQueueTimeBelowCapacityStaysNearDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	// Capacity 2 × 8 / 10 ms = 1600/s; offer 100/s.
	const delay = 2 * time.Millisecond
	repo := Repository{Models: []ModelSpec{
		engTimedModel("timed", 10*time.Millisecond, 8, 2, &DynamicBatchingSpec{MaxQueueDelayMicroseconds: uint64(delay / time.Microsecond)}),
	}}
	e := engNew(t, repo, EngineOptions{})
	engLoad(t, e, "timed", 100, 500*time.Millisecond)()
	s := engStats(t, e, "timed").InferenceStats
	avg := time.Duration(s.Queue.Ns / s.Queue.Count)
	// A lone request waits the batcher's delay; a busy machine adds timer
	// slack, never tens of milliseconds.
	if avg > delay+8*time.Millisecond {
		t.Errorf("average queue time %v below capacity, want about the %v delay", avg, delay)
	}
	if avg < delay/2 {
		t.Errorf("average queue time %v: the batcher did not wait its %v delay", avg, delay)
	}
	engCheckInvariants(t, e, "timed")
}

func TestNoDynamicBatchingExecutesAlone(t *testing.T) {
	repo := Repository{Models: []ModelSpec{engTimedModel("solo", time.Millisecond, 8, 1, nil)}}
	e := engNew(t, repo, EngineOptions{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := engInfer(t, e, engFP32Request("solo", 2, 4)); err != nil {
				t.Errorf("Infer: %v", err)
			}
		})
	}
	wg.Wait()
	s := engStats(t, e, "solo")
	if s.ExecutionCount != 10 || len(s.BatchStats) != 1 || s.BatchStats[0].BatchSize != 2 {
		t.Errorf("executions %d, batch stats %v: want 10 executions of batch 2", s.ExecutionCount, s.BatchStats)
	}
	engCheckInvariants(t, e, "solo")
}

func TestGPUUtilizationAndMemory(t *testing.T) {
	repo := Repository{
		GPUs: []GPUSpec{{MemoryBytes: 16 << 30, BaseMemoryBytes: 1 << 30, PowerIdleW: 50, PowerMaxW: 300}, {}},
		Models: []ModelSpec{
			engTimedModel("busy", 10*time.Millisecond, 1, 1, nil),
			{
				Name: "cpu", Backend: "python", MaxBatchSize: 1,
				Inputs:         []TensorSpec{{Name: "INPUT0", DataType: "FP32", Dims: []int64{4}}},
				Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "FP32", Dims: []int64{4}}},
				InstanceGroups: []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}},
				Latency:        LatencySpec{FixedUS: 10000},
				MemoryBytes:    1 << 30,
			},
		},
	}
	const interval = 200 * time.Millisecond
	e := engNew(t, repo, EngineOptions{MetricsInterval: interval})
	g := e.Metrics().GPUs
	if len(g) != 2 || g[0].UUID == g[1].UUID || len(g[0].UUID) != len("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx") {
		t.Fatalf("GPUs %v", g)
	}
	if g[0].MemoryTotal != 16<<30 || g[0].MemoryUsed != 1<<30+256<<20 || g[1].MemoryUsed != defaultGPUBaseMemory {
		t.Errorf("memory used %d / %d, GPU 1 %d", g[0].MemoryUsed, g[0].MemoryTotal, g[1].MemoryUsed)
	}
	// Keep GPU 0's only instance busy back to back, and the CPU model too.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, model := range []string{"busy", "busy", "cpu", "cpu"} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := engInfer(t, e, engFP32Request(model, 1, 4)); err != nil {
					t.Errorf("Infer: %v", err)
					return
				}
			}
		})
	}
	time.Sleep(3 * interval)
	g = e.Metrics().GPUs
	close(stop)
	wg.Wait()
	if g[0].Utilization < 0.7 {
		t.Errorf("GPU 0 utilization %.2f with its instance always busy, want near 1", g[0].Utilization)
	}
	if g[1].Utilization != 0 {
		t.Errorf("GPU 1 utilization %.2f with nothing on it (CPU instances do not count)", g[1].Utilization)
	}
	if g[0].PowerW <= 50+0.7*250-1 || g[0].PowerLimitW != 300 || g[1].PowerW != defaultGPUPowerIdleW {
		t.Errorf("power GPU 0 %.0f W (limit %.0f), GPU 1 %.0f W", g[0].PowerW, g[0].PowerLimitW, g[1].PowerW)
	}
	if g[0].EnergyJ <= g[1].EnergyJ*50/70 || g[1].EnergyJ <= 0 {
		t.Errorf("energy GPU 0 %.1f J, GPU 1 %.1f J", g[0].EnergyJ, g[1].EnergyJ)
	}
	time.Sleep(2 * interval)
	if u := e.Metrics().GPUs[0].Utilization; u > 0.1 {
		t.Errorf("GPU 0 utilization %.2f after the load stopped, want 0", u)
	}
	m := engMetrics(t, e, "busy")
	if len(m.GPUUUIDs) != 1 || m.GPUUUIDs[0] != g[0].UUID || m.SuccessByGPU[g[0].UUID] != m.Success {
		t.Errorf("busy: GPUs %v success by GPU %v", m.GPUUUIDs, m.SuccessByGPU)
	}
	if c := engMetrics(t, e, "cpu"); len(c.GPUUUIDs) != 0 || c.SuccessByGPU[""] != c.Success {
		t.Errorf("cpu: GPUs %v success by GPU %v", c.GPUUUIDs, c.SuccessByGPU)
	}
}
