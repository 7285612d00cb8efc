package tui

import "strconv"

// Saturation cue thresholds.
const (
	// saturationTicks is how many recent ticks are compared with as many
	// before them.
	saturationTicks = 5
	// queueRise is how much the recent queue time must exceed the earlier
	// one, relatively (×1.5) and absolutely (1 ms), to count as rising.
	queueRise    = 1.5
	queueRiseAbs = 1.0 // ms
	// computeFlat is the relative change in compute time still called flat.
	computeFlat = 0.15
	// lateShareWarn is the open-loop late-send share that means the client
	// or the schedule cannot keep up.
	lateShareWarn = 0.01
	// clientBound is the share of the client's cores tritontop may use
	// before it, rather than the server, may limit throughput.
	clientBound = 0.9
)

// warnings returns the saturation cues the history shows, most important
// first: the server saturated (queue time rising while compute stays flat),
// late open-loop sends, tritontop itself near its CPU limit. With the server
// in the same process (shared) the process CPU is mostly the server's, so
// the client-bound cue is not given.
func warnings(h *history, shared bool) []string {
	s := h.latest()
	if s == nil {
		return nil
	}
	var out []string
	if serverSaturated(h) {
		out = append(out, "server saturated: queue time rises while compute stays flat; more load only adds latency")
	}
	if s.Window.LateShare > lateShareWarn {
		out = append(out, "late sends "+fmtPct(s.Window.LateShare)+
			": the client or the schedule cannot keep up; latency counts from the schedule")
	}
	if limit := cpuLimit(s.System.NumCPU); !shared && s.System.ProcessCPU >= limit {
		out = append(out, "tritontop uses "+strconv.FormatFloat(s.System.ProcessCPU, 'f', 1, 64)+
			" cores of "+strconv.Itoa(max(1, s.System.NumCPU))+": the client may limit throughput")
	}
	return out
}

// cpuLimit is the process CPU, in cores, from which the client is called
// the bottleneck.
func cpuLimit(numCPU int) float64 {
	if numCPU <= 1 {
		return clientBound
	}
	return clientBound * float64(numCPU)
}

// serverSaturated compares the last saturationTicks ticks with the ones
// before them: queue time up by half and at least a millisecond, compute
// time within 15 %. Ticks without server times are skipped.
func serverSaturated(h *history) bool {
	var recent, before [2]float64 // queue, compute sums
	var nr, nb int
	for i := 0; i < h.len() && nb < saturationTicks; i++ {
		s := h.fromEnd(i)
		if !serverMeasured(s) {
			continue
		}
		q, _ := queueMs(s)
		c, _ := computeMs(s)
		if nr < saturationTicks {
			recent[0] += q
			recent[1] += c
			nr++
		} else {
			before[0] += q
			before[1] += c
			nb++
		}
	}
	if nb < saturationTicks {
		return false
	}
	qr, qb := recent[0]/saturationTicks, before[0]/saturationTicks
	cr, cb := recent[1]/saturationTicks, before[1]/saturationTicks
	if cb <= 0 {
		return false
	}
	rising := qr >= qb*queueRise && qr-qb >= queueRiseAbs
	flat := cr <= cb*(1+computeFlat) && cr >= cb*(1-computeFlat)
	return rising && flat
}
