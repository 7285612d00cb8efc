package session_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
)

// sharedSolo is how long one execution of the shared-GPU test's models
// takes alone: long against the few milliseconds a loaded host's timers
// wake late, which a comparison of two runs would otherwise read.
const sharedSolo = 40 * time.Millisecond

// sharedModel is a model without batching whose one instance runs on gpu:
// each execution takes sharedSolo, without jitter; 1 GiB of device memory.
func sharedModel(name string, gpu int) sim.ModelSpec {
	return sim.ModelSpec{
		Name: name, Platform: "onnxruntime_onnx", Backend: "onnxruntime",
		Inputs:         []sim.TensorSpec{{Name: "input", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Outputs:        []sim.TensorSpec{{Name: "output", DataType: "TYPE_FP32", Dims: []int64{16}}},
		InstanceGroups: []sim.InstanceGroupSpec{{Count: 1, Kind: "KIND_GPU", GPUs: []int{gpu}}},
		Latency:        sim.LatencySpec{FixedUS: float64(sharedSolo / time.Microsecond)},
		MemoryBytes:    1 << 30,
		Behaviour:      sim.BehaviourIdentity,
	}
}

// sharedRun is one measured run of the shared-GPU test: Triton's count of
// the requests it served over the run's ticks after the first, and the
// medians over its ticks of Triton's per-tick averages and of one GPU's
// gauges. Medians, so that a tick in which a busy test machine stalled the
// process does not decide the comparison.
type sharedRun struct {
	throughput           float64
	queue, computeInfer  time.Duration
	util, utilMax, power float64
	memory               float64
}

func (r sharedRun) String() string {
	return fmt.Sprintf("%.0f infer/s, queue %v, compute infer %v; GPU utilization %.3f (max %.3f), %.0f W, %.0f bytes",
		r.throughput, r.queue, r.computeInfer, r.util, r.utilMax, r.power, r.memory)
}

func sharedMedian[T int64 | float64](v []T) T {
	slices.Sort(v)
	return v[len(v)/2]
}

// sharedTicks is how many ticks with Triton's statistics and the GPU's
// gauges a measurement of the shared-GPU test lasts.
const sharedTicks = 8

// sharedMeasured reports whether tick s carries Triton's statistics of
// requests that finished in it and gpu's gauges.
func sharedMeasured(s stats.Snapshot, gpu string) bool {
	if sv := s.Server; !sv.Available || sv.Reset || sv.SuccessCount == 0 {
		return false
	}
	for _, g := range s.Metrics.GPUs {
		if g.UUID == gpu && g.HasUtilization && g.HasPower && g.HasMemory {
			return true
		}
	}
	return false
}

// sharedMeasure runs model on srv at concurrency 3, recording the run,
// until sharedTicks of its ticks carry Triton's statistics and gpu's
// gauges (within a minute), and reads the step's ticks back. Its ticks are
// 250 ms: each reads Triton's statistics within two ticks, which a loaded
// host under the race detector does not always manage in 200 ms. It may
// run on a goroutine of its own.
func sharedMeasure(t *testing.T, srv *sim.Server, model, gpu string) (sharedRun, error) {
	c := quickConfig(srv, model)
	c.Concurrency, c.Record = 3, filepath.Join(t.TempDir(), model+".jsonl")
	c.Tick, c.Duration = 250*time.Millisecond, 0
	b := session.BuilderFunc(func(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
		p, err := session.Build(ctx, cfg, stdout, stderr)
		if err != nil {
			return nil, err
		}
		// OnEnd runs in Start, before the collector's first tick.
		var end func()
		onEnd := p.OnEnd
		p.OnEnd = func(f func()) {
			if onEnd != nil {
				onEnd(f)
			}
			end = f
		}
		seen := 0
		p.Sinks = append(p.Sinks, report.SinkFunc(func(s stats.Snapshot) {
			if !s.Load.Drain && sharedMeasured(s, gpu) {
				if seen++; seen == sharedTicks {
					end()
				}
			}
		}))
		return p, nil
	})
	if err := sharedRunSession(c, b); err != nil {
		return sharedRun{}, fmt.Errorf("run of %s: %w", model, err)
	}
	run, err := record.ReadAll(c.Record)
	if err != nil {
		return sharedRun{}, err
	}
	if run.Summary == nil || len(run.Summary.Steps) != 1 {
		return sharedRun{}, fmt.Errorf("%s: no summary of one step", c.Record)
	}
	st := run.Summary.Steps[0]
	var queue, infer []int64
	var util, power, memory []float64
	var done int64
	var span time.Duration
	var r sharedRun
	for _, s := range run.Snapshots {
		if s.Seq < st.FirstSeq || s.Seq > st.LastSeq {
			continue
		}
		if sv := s.Server; sv.Available && !sv.Reset && sv.SuccessCount > 0 {
			queue = append(queue, int64(sv.Queue))
			infer = append(infer, int64(sv.ComputeInfer))
			if len(queue) > 1 { // the first tick holds the connection's start
				done += sv.SuccessCount
				span += s.Interval
			}
		}
		for _, g := range s.Metrics.GPUs {
			if g.UUID == gpu && g.HasUtilization && g.HasPower && g.HasMemory {
				util = append(util, g.Utilization)
				power = append(power, g.PowerW)
				memory = append(memory, g.MemoryUsed)
				r.utilMax = max(r.utilMax, g.Utilization)
			}
		}
	}
	if len(queue) < 4 || len(util) < 4 {
		return sharedRun{}, fmt.Errorf("%s: %d ticks with statistics and %d with GPU %s's gauges, want 4 or more", c.Record, len(queue), len(util), gpu)
	}
	r.throughput = float64(done) / span.Seconds()
	r.queue, r.computeInfer = time.Duration(sharedMedian(queue)), time.Duration(sharedMedian(infer))
	r.util, r.power, r.memory = sharedMedian(util), sharedMedian(power), sharedMedian(memory)
	return r, nil
}

// sharedRunSession runs c, built by b, through a session's phases within a
// minute; the error says what it printed on standard error.
func sharedRunSession(c session.Config, b session.Builder) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	s, err := session.New(c, b, io.Discard, &stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Connect(ctx); err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	if err := s.Start(ctx); err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	s.Wait(ctx)
	if err := s.Finish(ctx); err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	return nil
}

// sharedMeasureBoth measures a on GPU 0 and c on GPU 1 at the same time:
// they share no GPU, and they see the same host.
func sharedMeasureBoth(t *testing.T, srv *sim.Server, gpu0, gpu1 string) (a, c sharedRun) {
	t.Helper()
	var wg sync.WaitGroup
	var errA, errC error
	wg.Go(func() { a, errA = sharedMeasure(t, srv, "a", gpu0) })
	wg.Go(func() { c, errC = sharedMeasure(t, srv, "c", gpu1) })
	wg.Wait()
	if errA != nil || errC != nil {
		t.Fatalf("a: %v; c: %v", errA, errC)
	}
	return a, c
}

// sharedLoad keeps 3 requests of model in flight on srv, closed loop,
// until the test ends; it returns once the simulator has answered some.
func sharedLoad(t *testing.T, srv *sim.Server, model string) {
	t.Helper()
	cl, err := triton.Dial(context.Background(), srv.GRPCAddr(), triton.Options{Protocol: "grpc"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cl.Prepare(&triton.InferRequest{Model: model,
		Inputs: []triton.Tensor{{Name: "input", Datatype: "FP32", Shape: []int64{16}, Data: make([]byte, 64)}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var load sync.WaitGroup
	loadErr := make(chan error, 3)
	for range 3 {
		load.Go(func() {
			for ctx.Err() == nil {
				if _, err := cl.Send(ctx, p); err != nil && ctx.Err() == nil {
					loadErr <- err
					return
				}
			}
		})
	}
	t.Cleanup(func() {
		stop()
		load.Wait()
		cl.Close()
		close(loadErr)
		for err := range loadErr {
			t.Errorf("%s's load: %v", model, err)
		}
	})
	answered := func() bool {
		st, err := srv.Engine().ModelStatistics(model, "")
		return err == nil && len(st.GetModelStats()) == 1 && st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount() >= 3
	}
	if !eventually(t, 30*time.Second, answered) {
		t.Fatalf("%s's load: no request answered", model)
	}
}

// TestQuietSharedGPUInterference: models a and b share GPU 0, c has GPU 1. a
// runs at concurrency 3 alone, then while b's load keeps GPU 0 busy too;
// each execution of a then shares the GPU with one of b, running 1.8 times
// as long (the default overlap, 0.2), so a's compute time and, its one
// instance being busy longer, its queue time rise by about that much.
// GPU 0 is busier (never over 1), draws more power, and holds both models'
// memory. c, on GPU 1, keeps its compute and queue times under the same
// load; it runs beside a each time, so that both see the same host.
func TestQuietSharedGPUInterference(t *testing.T) {
	testenv.Quiet(t) // the simulator's timing against its config: an idle host's
	const gpu0, gpu1 = "GPU-shared-0", "GPU-other-1"
	srv := startSimRepo(t, sim.Repository{
		GPUs:   []sim.GPUSpec{{UUID: gpu0}, {UUID: gpu1}},
		Models: []sim.ModelSpec{sharedModel("a", 0), sharedModel("b", 0), sharedModel("c", 1)},
	})
	aloneA, aloneC := sharedMeasureBoth(t, srv, gpu0, gpu1)
	sharedLoad(t, srv, "b")
	sharedA, sharedC := sharedMeasureBoth(t, srv, gpu0, gpu1)
	t.Logf("a alone:              %v", aloneA)
	t.Logf("a with b's load:      %v", sharedA)
	t.Logf("c alone:              %v", aloneC)
	t.Logf("c with load on GPU 0: %v", sharedC)

	// Alone, a's executions take their solo time (plus the lateness of
	// timers on a busy machine); with b each shares the GPU nearly all its
	// time, so 1.8 times as long. A third more is far from both.
	if aloneA.computeInfer > sharedSolo*4/3 {
		t.Errorf("a alone: compute infer %v, want about %v", aloneA.computeInfer, sharedSolo)
	}
	if sharedA.computeInfer < aloneA.computeInfer*4/3 {
		t.Errorf("a's compute infer %v with b's load, %v alone: want it to rise", sharedA.computeInfer, aloneA.computeInfer)
	}
	// Queued behind two executions of its own, each longer.
	if sharedA.queue < aloneA.queue*4/3 {
		t.Errorf("a's queue time %v with b's load, %v alone: want it to rise", sharedA.queue, aloneA.queue)
	}
	if sharedA.throughput > aloneA.throughput*3/4 {
		t.Errorf("a's throughput %.0f/s with b's load, %.0f/s alone: want it to fall", sharedA.throughput, aloneA.throughput)
	}
	// Alone, GPU 0 idles between a's executions; b fills those gaps.
	if sharedA.util <= aloneA.util || sharedA.power <= aloneA.power {
		t.Errorf("GPU 0: utilization %.4f and %.0f W with b, %.4f and %.0f W alone: want both higher",
			sharedA.util, sharedA.power, aloneA.util, aloneA.power)
	}
	for _, r := range []sharedRun{aloneA, sharedA, aloneC, sharedC} {
		if r.utilMax > 1 {
			t.Errorf("GPU utilization %.4f, over 1", r.utilMax)
		}
	}
	// Both models are loaded throughout: 512 MiB base + 1 GiB each.
	if want := float64(512<<20 + 2<<30); aloneA.memory != want || sharedA.memory != want {
		t.Errorf("GPU 0 memory used %.0f alone, %.0f with b: want %.0f", aloneA.memory, sharedA.memory, want)
	}

	// c shares nothing: its times stay what they are alone, give or take
	// the timer lateness of a busy machine.
	if !capacityWithin(float64(sharedC.computeInfer), float64(aloneC.computeInfer), 0.15) {
		t.Errorf("c's compute infer %v with load on GPU 0, %v alone: want it unchanged",
			sharedC.computeInfer, aloneC.computeInfer)
	}
	if !capacityWithin(float64(sharedC.queue), float64(aloneC.queue), 0.15) {
		t.Errorf("c's queue time %v with load on GPU 0, %v alone: want it unchanged", sharedC.queue, aloneC.queue)
	}
}
