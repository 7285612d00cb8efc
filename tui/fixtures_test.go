package tui

import (
	"sync"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// base is the fixed wall clock of the constructed runs.
var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// latencyAt is a latency summary around p50 with a fixed tail shape.
func latencyAt(count int64, p50 time.Duration) stats.Latency {
	f := func(x float64) time.Duration { return time.Duration(float64(p50) * x) }
	return stats.Latency{Count: count, Min: f(0.5), Mean: f(1.05), P50: p50, P90: f(1.3),
		P95: f(1.4), P99: f(1.7), P999: f(2.0), Max: f(2.3)}
}

// closedLoopRun is n one-second ticks of a closed-loop run whose
// concurrency doubles every 20 ticks from 4 to 32 against a server that
// saturates near 1,200 req/s: past the knee the queue grows and compute
// stays flat. Two GPUs, no errors.
func closedLoopRun(n int) []stats.Snapshot {
	out := make([]stats.Snapshot, 0, n)
	var runReq int64
	for i := 1; i <= n; i++ {
		c := 4 << min(3, (i-1)/20)
		rps := min(float64(c)*100, 1200) + float64(i%5*7)
		req := int64(rps)
		runReq += req
		lat := time.Duration(float64(c) / rps * float64(time.Second))
		compute := min(lat*8/10, 8*time.Millisecond)
		input, output, overhead := 300*time.Microsecond, 200*time.Microsecond, 400*time.Microsecond
		queue := max(0, lat-compute-input-output-overhead)
		batch := float64(min(c/2, 8))
		util := min(1, rps/1200) * 0.92
		tick := stats.ClientStats{
			Duration: time.Second, Requests: req, Successes: req, Inferences: req,
			RequestsPerS: rps, InferPerS: rps, Latency: latencyAt(req, lat),
			BytesSent: req * 602112, BytesReceived: req * 4000,
		}
		window := tick
		window.Duration = 10 * time.Second
		window.Requests *= 10
		window.Successes *= 10
		window.Inferences *= 10
		run := tick
		run.Duration = time.Duration(i) * time.Second
		run.Requests, run.Successes, run.Inferences = runReq, runReq, runReq
		run.RequestsPerS = float64(runReq) / float64(i)
		run.InferPerS = run.RequestsPerS
		execs := int64(rps / batch)
		out = append(out, stats.Snapshot{
			Seq: i, Time: base.Add(time.Duration(i) * time.Second), Elapsed: time.Duration(i) * time.Second,
			Interval: time.Second,
			Load:     stats.Load{Mode: "concurrency", Concurrency: c, InFlight: c},
			Tick:     tick, Window: window, WindowLength: 10 * time.Second, Run: run,
			Server: stats.ServerStats{
				Available: true, Model: "resnet50", Version: "1",
				SuccessCount: req, InferenceCount: req, ExecutionCount: execs,
				Request: queue + compute + input + output + overhead, Queue: queue,
				ComputeInput: input, ComputeInfer: compute, ComputeOutput: output, Overhead: overhead,
				AvgBatch: batch,
				Batches:  batches(int(batch), execs),
			},
			Metrics: stats.ServerMetrics{
				Available: true,
				GPUs: []stats.GPU{
					{UUID: "GPU-3f2a1b2c", Name: "NVIDIA H100 80GB HBM3", Utilization: util,
						MemoryUsed: 18.2e9, MemoryTotal: 80e9, PowerW: 300 + 400*util, PowerLimitW: 700,
						HasUtilization: true, HasMemory: true, HasPower: true},
					{UUID: "GPU-77e0d9aa", Name: "NVIDIA H100 80GB HBM3", Utilization: util / 2,
						MemoryUsed: 9.1e9, MemoryTotal: 80e9, PowerW: 150 + 200*util, PowerLimitW: 700,
						HasUtilization: true, HasMemory: true, HasPower: true},
				},
				HasCPU: true, CPUUtilization: 0.20 + 0.1*util,
				HasPending: true, Pending: float64(queue / time.Millisecond),
			},
			System: stats.SystemStats{ProcessCPU: 0.07, CPUPerRequest: 11 * time.Microsecond,
				HostCPU: 0.23, NumCPU: 16},
		})
	}
	return out
}

// openLoopRun is a Poisson open-loop run at 800 req/s of batch-4 requests
// whose client falls behind: 3 % late sends, scheduled latency above the
// from-send one.
func openLoopRun(n int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		s := &out[i]
		s.Load = stats.Load{Mode: "rate", Rate: 800, Distribution: "poisson", InFlight: 24}
		for _, cs := range []*stats.ClientStats{&s.Tick, &s.Window, &s.Run} {
			cs.Inferences *= 4
			cs.InferPerS *= 4
			cs.Late = cs.Requests * 3 / 100
			cs.LateShare = 0.03
			sched := latencyAt(cs.Latency.Count, cs.Latency.P50*3/2)
			cs.Scheduled = &sched
		}
		s.System.ProcessCPU = 15.2 // near all of the 16 cores
	}
	return out
}

// degradedRun is a run whose server stopped answering: no statistics, no
// metrics, errors by code.
func degradedRun(n int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		s := &out[i]
		if i < n/2 {
			continue
		}
		s.Server = stats.ServerStats{Err: "rpc error: code = Unavailable desc = connection refused"}
		s.Metrics = stats.ServerMetrics{Err: `Get "http://127.0.0.1:8002/metrics": dial tcp 127.0.0.1:8002: connect: connection refused`}
		// Refused connections fail fast; nothing succeeds or infers.
		s.Tick = stats.ClientStats{Duration: time.Second, Requests: 4, Errors: 4, RequestsPerS: 4}
		s.Window.Requests, s.Window.Successes, s.Window.Inferences = 42, 0, 0
		s.Window.RequestsPerS, s.Window.InferPerS, s.Window.Latency = 4.2, 0, stats.Latency{}
		codes := []stats.ErrorCount{
			{Code: "UNAVAILABLE", Count: 40, Message: "connection refused"},
			{Code: "DEADLINE_EXCEEDED", Count: 2, Message: "context deadline exceeded"},
		}
		s.Window.Errors, s.Window.ErrorsByCode = 42, codes
		s.Run.Errors, s.Run.ErrorsByCode = 42, codes
	}
	return out
}

// partialGPURun is closedLoopRun whose second GPU reports its memory only:
// no utilization, no power.
func partialGPURun(n int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		g := &out[i].Metrics.GPUs[1]
		*g = stats.GPU{UUID: g.UUID, Name: g.Name, MemoryUsed: g.MemoryUsed, MemoryTotal: g.MemoryTotal, HasMemory: true}
	}
	return out
}

// localGPURun is closedLoopRun on a client host with GPUs of its own
// (through NVML): n local GPUs, the second without a utilization reading.
func localGPURun(n, gpus int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		local := make([]stats.GPU, gpus)
		for j := range local {
			local[j] = stats.GPU{UUID: "GPU-local-" + string(rune('a'+j)), Name: "NVIDIA L4",
				Utilization: 0.12 + 0.3*float64(j), MemoryUsed: 3.4e9, MemoryTotal: 24e9, PowerW: 31, PowerLimitW: 72,
				HasUtilization: j != 1, HasMemory: true, HasPower: true}
		}
		out[i].System.LocalGPUs = local
	}
	return out
}

// sharedHeader is the header of a demo: the simulator in this process.
var sharedHeader = HeaderInfo{
	Server: "127.0.0.1:41007", Protocol: "gRPC", Model: "resnet50", Version: "1",
	MaxBatch: 32, DynamicBatching: true, Simulated: true, SharedProcess: true,
}

// feed returns a channel holding snaps, left open as a live run's is.
func feed(snaps []stats.Snapshot) <-chan stats.Snapshot {
	ch := make(chan stats.Snapshot, len(snaps))
	for _, s := range snaps {
		ch <- s
	}
	return ch
}

// header is the header of the constructed runs.
var header = HeaderInfo{
	Server: "127.0.0.1:8001", Protocol: "gRPC", Model: "resnet50", Version: "1",
	MaxBatch: 32, DynamicBatching: true,
}

// batches spreads execs over batch sizes: most at full size, some at half
// size, a few alone.
func batches(size int, execs int64) []stats.BatchCount {
	if size <= 2 {
		return []stats.BatchCount{{Size: 1, Count: execs / 10}, {Size: size, Count: execs - execs/10}}
	}
	return []stats.BatchCount{
		{Size: 1, Count: execs / 50}, {Size: size / 2, Count: execs / 10},
		{Size: size, Count: execs - execs/50 - execs/10},
	}
}

// sweepRun is closedLoopRun as a stepped run: each concurrency level is a
// step of the schedule.
func sweepRun(n int) []stats.Snapshot {
	out := closedLoopRun(n)
	for i := range out {
		out[i].Load.Step = (i) / 20
	}
	return out
}

// fakeSweep is a plan.Stepper's progress, fixed.
type fakeSweep struct {
	mu sync.Mutex
	p  plan.Progress
}

func (f *fakeSweep) Progress() plan.Progress {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.p
}

func (f *fakeSweep) set(p plan.Progress) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.p = p
}

// sweepAt is the progress of sweepRun's range 4:64 (five levels, doubling)
// at its fourth step, concurrency 32, with the three steps before measured
// from the run's ticks; the third failed a 30 ms p99 SLO.
func sweepAt(snaps []stats.Snapshot) *fakeSweep {
	var levels []plan.Level
	for step := range 3 {
		s := snaps[step*20+19]
		st := record.Step{Load: s.Load, Duration: 15 * time.Second, Client: s.Window,
			Measurement: &record.Measurement{Index: step, Stable: true, Trials: 3,
				SLO: &record.SLOCheck{Percentile: 99, Threshold: 30 * time.Millisecond,
					Latency: s.Window.Latency.P99, Pass: s.Window.Latency.P99 < 30*time.Millisecond}}}
		levels = append(levels, plan.Level{Target: s.Load.Target(), Step: st, Pass: st.Measurement.SLO.Pass})
	}
	return &fakeSweep{p: plan.Progress{Step: 4, Total: 5, Level: load.Target{Mode: load.Concurrency, Concurrency: 32},
		Trials: 2, MaxTrials: 10, InStep: 4 * time.Second, Left: 41 * time.Second, Levels: levels}}
}
