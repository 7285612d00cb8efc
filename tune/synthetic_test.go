package tune

import (
	"math"
	"time"
)

// model is a synthetic server for the search's tests: a batch of b costs
// FixedMS + PerItemMS·b on an instance; instances on one GPU slow each
// other by 1 + (n−1)(1−Overlap) when n run at once; a closed loop of c
// requests fills batches up to the max batch size, and a batch short of it
// waits out the queue delay. Latency follows Little's law once every
// instance is busy; the p99 is 1.3 times the mean.
type model struct {
	FixedMS, PerItemMS, Overlap float64
	// MaxLoadable fails the load of a larger max batch size (0: none).
	MaxLoadable int
}

func (m model) measure(p Point, c int, threshold time.Duration) Measure {
	b := max(1, p.MaxBatch)
	n := min(p.Instances, c)
	fill := min(b, int(math.Ceil(float64(c)/float64(n))))
	slow := 1 + float64(n-1)*(1-m.Overlap)
	exec := (m.FixedMS + m.PerItemMS*float64(fill)) * slow
	cycle := exec
	if p.Batcher() && fill < b {
		cycle += float64(p.Delay) / 1000
	}
	x := float64(n*fill) / cycle * 1000 // infer/s
	lat := cycle
	if c > n*fill {
		lat = float64(c) / x * 1000
	}
	util := math.Min(1, exec/cycle)
	me := Measure{Throughput: x, Latency: ms(lat * 1.3), P99: ms(lat * 1.3), GPUs: 1, GPUUtilization: util,
		Queue: ms(lat - exec), Compute: ms(exec), Batch: float64(fill), Stable: true}
	me.Pass = me.Latency < threshold
	return me
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
