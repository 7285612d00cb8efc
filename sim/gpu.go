package sim

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a simulated GPU (an H100 SXM).
const (
	defaultGPUCount       = 2
	defaultGPUName        = "NVIDIA H100 80GB HBM3"
	defaultGPUMemory      = 80 << 30
	defaultGPUBaseMemory  = 512 << 20
	defaultGPUPowerIdleW  = 70
	defaultGPUPowerMaxW   = 700
	defaultGPUPowerLimitW = 700
)

// gpu is one simulated GPU. Busy time is exact: it accumulates while at
// least one instance on the GPU executes, as a GPU is busy while any kernel
// runs. The executions running at once share it (gpu_sharing.go), so each
// runs slower than alone. The gauges (utilization, power, energy) are
// refreshed every metrics interval, like Triton's DCGM polling.
type gpu struct {
	uuid, name         string
	total, base        uint64
	idleW, maxW, limit float64
	overlap            float64      // see GPUSpec.Overlap
	memory             atomic.Int64 // bytes allocated by loaded models

	mu        sync.Mutex
	active    int // executions running
	busySince int64
	busy      int64 // ns busy up to busySince (or now, when idle)
	lastT     int64
	lastBusy  int64
	util      float64
	power     float64
	energy    float64
	// work is the compute time, in solo ns, that each running execution
	// has received since the GPU last went idle, brought up to date at
	// workAt; running are the instances whose executions run.
	work    float64
	workAt  int64
	running []*instance
}

func newGPUs(specs []GPUSpec, start time.Time) []*gpu {
	if len(specs) == 0 {
		specs = make([]GPUSpec, defaultGPUCount)
	}
	gpus := make([]*gpu, len(specs))
	for i, s := range specs {
		g := &gpu{uuid: s.UUID, name: s.Name, total: s.MemoryBytes, base: s.BaseMemoryBytes,
			idleW: s.PowerIdleW, maxW: s.PowerMaxW, limit: s.PowerLimitW, overlap: DefaultGPUOverlap}
		if s.Overlap != nil {
			g.overlap = *s.Overlap
		}
		if g.uuid == "" {
			g.uuid = gpuUUID(i)
		}
		if g.name == "" {
			g.name = defaultGPUName
		}
		if g.total == 0 {
			g.total = defaultGPUMemory
		}
		if g.base == 0 {
			g.base = defaultGPUBaseMemory
		}
		if g.idleW == 0 {
			g.idleW = defaultGPUPowerIdleW
		}
		if g.maxW == 0 {
			g.maxW = max(defaultGPUPowerMaxW, g.idleW)
		}
		if g.limit == 0 {
			g.limit = g.maxW
		}
		g.power = g.idleW
		gpus[i] = g
	}
	return gpus
}

// gpuUUID derives a stable NVIDIA-style UUID from a GPU's index.
func gpuUUID(i int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "tritontop-sim-gpu-%d", i))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// sample refreshes the gauges at t: utilization is the busy fraction since
// the previous sample; energy integrates the power over that time.
func (g *gpu) sample(t int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	busy := g.busy
	if g.active > 0 && t > g.busySince {
		busy += t - g.busySince
	}
	dt := t - g.lastT
	if dt <= 0 {
		return
	}
	g.util = min(1, max(0, float64(busy-g.lastBusy)/float64(dt)))
	g.power = g.idleW + (g.maxW-g.idleW)*g.util
	g.energy += g.power * float64(dt) / float64(time.Second)
	g.lastT, g.lastBusy = t, busy
}

// state returns the gauges as last sampled.
func (g *gpu) state() GPUState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return GPUState{
		UUID:        g.uuid,
		Name:        g.name,
		Utilization: g.util,
		MemoryUsed:  g.base + uint64(max(0, g.memory.Load())),
		MemoryTotal: g.total,
		PowerW:      g.power,
		PowerLimitW: g.limit,
		EnergyJ:     g.energy,
	}
}

// sampleGPUs refreshes every GPU's gauges each metrics interval until the
// engine closes.
func (e *Engine) sampleGPUs() {
	defer e.samplerW.Done()
	tick := time.NewTicker(e.opts.MetricsInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			now := e.now()
			for _, g := range e.gpus {
				g.sample(now)
			}
		case <-e.stop:
			return
		}
	}
}
