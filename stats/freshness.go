package stats

import "time"

// GaugeSettle is how long after the first reading a GPU's utilization is
// taken as it reads even when it has not changed: Triton refreshes its GPU
// gauges every --metrics-interval-ms (2 s by default), so the first
// readings of a run may still describe the time before it.
const GaugeSettle = 5 * time.Second

// gaugeFreshness leaves out a GPU's utilization of 0 read first until the
// server has refreshed it since the run began: a first tick's "0%" is the
// idle GPU of before the load, not a measurement. A gauge is fresh once it
// differs from that first reading or GaugeSettle after it; a first reading
// above 0 already shows load and is fresh.
type gaugeFreshness struct {
	first time.Time
	// base is each GPU's first utilization reading, until it is fresh.
	base  map[string]float64
	fresh map[string]bool
}

// check clears HasUtilization of the GPUs whose gauge is not fresh yet.
func (g *gaugeFreshness) check(gpus []GPU, now time.Time) {
	if g.base == nil {
		g.base, g.fresh, g.first = map[string]float64{}, map[string]bool{}, now
	}
	settled := now.Sub(g.first) >= GaugeSettle
	for i := range gpus {
		u := &gpus[i]
		if !u.HasUtilization || g.fresh[u.UUID] {
			continue
		}
		base, seen := g.base[u.UUID]
		switch {
		case !seen:
			g.base[u.UUID] = u.Utilization
			u.HasUtilization = settled || u.Utilization > 0
		case settled || u.Utilization != base:
			g.fresh[u.UUID] = true
		default:
			u.HasUtilization = false
		}
		if u.HasUtilization {
			g.fresh[u.UUID] = true
			delete(g.base, u.UUID)
		}
	}
}
