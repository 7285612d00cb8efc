package sim

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/mem"
)

// cpuState is the server CPU reading that /metrics reports as
// nv_cpu_utilization and nv_cpu_memory_*_bytes.
type cpuState struct {
	Utilization float64 // 0..1 of all cores
	MemoryTotal uint64
	MemoryUsed  uint64
	Valid       bool
}

// cpuSampler measures the simulator's own process CPU once per metrics
// interval, like Triton's poll thread: a /metrics scrape reads the last
// value instead of measuring, so scrapes cost nothing and agree with each
// other within an interval.
type cpuSampler struct {
	lastCPU  float64 // user+system seconds at lastWall
	lastWall time.Time

	mu    sync.Mutex
	state cpuState
}

func newCPUSampler() *cpuSampler {
	s := &cpuSampler{}
	s.sample(time.Now())
	return s
}

// run refreshes the reading every interval until ctx is done.
func (s *cpuSampler) run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.sample(now)
		}
	}
}

// sample takes one reading. Utilization is the process CPU time spent since
// the previous sample over the wall time times the core count, so that it
// stays in 0..1 as Triton's gauge does.
func (s *cpuSampler) sample(now time.Time) {
	var st cpuState
	if vm, err := mem.VirtualMemory(); err == nil {
		st.MemoryTotal = vm.Total
		// Triton reports MemTotal − MemAvailable.
		if vm.Available <= vm.Total {
			st.MemoryUsed = vm.Total - vm.Available
		}
		st.Valid = true
	}
	if cpu, ok := processCPUSeconds(); ok {
		if !s.lastWall.IsZero() {
			wall := now.Sub(s.lastWall).Seconds() * float64(runtime.NumCPU())
			if wall > 0 {
				st.Utilization = min(max((cpu-s.lastCPU)/wall, 0), 1)
			}
		}
		s.lastCPU, s.lastWall = cpu, now
	}
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
}

func (s *cpuSampler) read() cpuState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}
