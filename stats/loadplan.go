package stats

import "time"

// PlanReader is a load generator that follows a load plan (--stages):
// Planned is the integral of its planned level from the plan's start to at,
// an offset from the results' epoch. *driver.Driver is one; it reports ok
// false without a plan.
type PlanReader interface {
	Planned(at time.Duration) (count float64, ok bool)
}

// plannedMean is ctrl's planned level averaged over [from, to): 0 when ctrl
// follows no plan.
func plannedMean(ctrl LoadState, from, to time.Duration) float64 {
	p, ok := ctrl.(PlanReader)
	if !ok || to <= from {
		return 0
	}
	a, ok := p.Planned(from)
	if !ok {
		return 0
	}
	b, _ := p.Planned(to)
	return (b - a) / (to - from).Seconds()
}

// offeredRate is the open-loop rate the ticks asked for: the last tick's
// rate, or under a load plan the planned rate averaged over them.
func offeredRate(tail []Snapshot) float64 {
	var sum, span float64
	planned := false
	for i := range tail {
		l := &tail[i].Load
		planned = planned || l.Planned > 0
		sum += l.Planned * tail[i].Interval.Seconds()
		span += tail[i].Interval.Seconds()
	}
	if !planned || span == 0 {
		if len(tail) == 0 {
			return 0
		}
		return tail[len(tail)-1].Load.Rate
	}
	return sum / span
}
