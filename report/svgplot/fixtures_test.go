package svgplot

import (
	"fmt"
	"math"
)

// wobble is a deterministic noise in [-1, 1] for sample i, so that fixtures
// look measured and golden files stay fixed.
func wobble(i, salt int) float64 {
	h := uint32(i*2654435761) ^ uint32(salt*40503)
	h ^= h >> 13
	h *= 0x5bd1e995
	h ^= h >> 15
	return float64(h%2001)/1000 - 1
}

// sweepLatency is a ten-minute concurrency sweep at one tick per second:
// latency percentiles that rise with each step, a spike, and five ticks
// without a measurement.
func sweepLatency() *TimeChart {
	names := []string{"p50", "p90", "p99", "p99.9"}
	factor := []float64{1, 1.4, 2.1, 3}
	c := &TimeChart{
		ID: "latency", Title: "Latency from send", YLabel: "latency", YUnit: "ms",
		Refs: []RefLine{{Y: 50, Label: "SLO p99 50 ms"}},
	}
	for k, name := range names {
		s := Series{Name: name, Color: k}
		for i := 1; i <= 600; i++ {
			step := (i - 1) / 60
			y := (4 + 3*float64(step)) * factor[k] * (1 + 0.08*wobble(i, k))
			if i == 333 {
				y *= 3 // a spike that downsampling must keep
			}
			if i >= 200 && i < 205 {
				y = math.NaN()
			}
			s.Points = append(s.Points, Point{X: float64(i), Y: y})
		}
		c.Series = append(c.Series, s)
	}
	for step := range 10 {
		c.Markers = append(c.Markers, Marker{X: float64(step * 60), Label: fmt.Sprintf("c=%d", 1<<step)})
	}
	return c
}

// serverTime is three minutes of the server's time per request, stacked,
// with a gap where statistics could not be read.
func serverTime() *TimeChart {
	c := &TimeChart{ID: "server", Title: "Server time per request", YLabel: "time", YUnit: "ms", Stacked: true}
	for k, name := range []string{"queue", "compute input", "compute infer", "compute output"} {
		base := []float64{1.5, 0.3, 6, 0.4}[k]
		s := Series{Name: name, Color: k}
		for i := 1; i <= 180; i++ {
			y := base * (1 + 0.15*wobble(i, 10+k))
			if k == 0 {
				y += float64(i) / 30 // queueing grows with load
			}
			if i >= 90 && i < 93 {
				y = math.NaN()
			}
			s.Points = append(s.Points, Point{X: float64(i), Y: y})
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// gpuShort is a 45-second run: a seconds axis and a percentage.
func gpuShort() *TimeChart {
	c := &TimeChart{ID: "gpu", Title: "GPU utilization", YLabel: "utilization", YUnit: "%", YMax: 100, Height: 200}
	for k, name := range []string{"GPU 0", "GPU 1"} {
		s := Series{Name: name, Color: k}
		for i := 1; i <= 45; i++ {
			s.Points = append(s.Points, Point{X: float64(i), Y: 60 + 20*float64(k) + 10*wobble(i, 20+k)})
		}
		c.Series = append(c.Series, s)
	}
	c.Markers = []Marker{{X: 15, Label: "200 req/s"}, {X: 30, Label: "400 req/s"}}
	return c
}

// latencyCurve is the latency–throughput curve of two compared sweeps with
// the SLO and the knee of each.
func latencyCurve() *XYChart {
	c := &XYChart{
		ID: "curve", Title: "Latency against throughput",
		XLabel: "throughput", XUnit: "req/s", YLabel: "p99 latency", YUnit: "ms",
		Refs: []RefLine{{Y: 50, Label: "SLO 50 ms"}},
	}
	runs := []struct {
		name  string
		sat   float64
		color int
	}{{"sync c=1..64", 900, 0}, {"async c=1..64", 1400, 1}}
	for _, r := range runs {
		s := Series{Name: r.name, Color: r.color}
		for step := range 7 {
			conc := 1 << step
			x := r.sat * (1 - math.Exp(-float64(conc)/12))
			y := 3 + 0.4*float64(conc) + 60*math.Pow(x/r.sat, 8)
			s.Points = append(s.Points, Point{X: x, Y: y, Label: fmt.Sprintf("c=%d", conc)})
		}
		c.Series = append(c.Series, s)
		knee := s.Points[4]
		c.Highlights = append(c.Highlights, Highlight{X: knee.X, Y: knee.Y, Label: "knee " + knee.Label, Color: r.color})
	}
	return c
}

// hourRun is a one-hour run at one tick per second with n series: the size
// a report must keep small.
func hourRun(n int) *TimeChart {
	c := &TimeChart{ID: "hour", Title: "One hour", YLabel: "latency", YUnit: "ms"}
	for k := range n {
		s := Series{Name: fmt.Sprintf("series %d", k+1), Color: k}
		for i := 1; i <= 3600; i++ {
			s.Points = append(s.Points, Point{X: float64(i), Y: 10 + 2*float64(k) + 3*wobble(i, k)})
		}
		c.Series = append(c.Series, s)
	}
	for step := range 12 {
		c.Markers = append(c.Markers, Marker{X: float64(step * 300), Label: fmt.Sprintf("%d req/s", 100*(step+1))})
	}
	return c
}
