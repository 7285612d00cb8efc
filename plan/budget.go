package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tritontop/tritontop/record"
)

// ClientBoundError is a plan refused because the client limited a level it
// rests on: the capacity measured is only a lower bound.
type ClientBoundError struct {
	// Why names the level and the diagnosis.
	Why string
	// LowerBound is the capacity measured, req/s.
	LowerBound float64
}

func (e *ClientBoundError) Error() string {
	if !(e.LowerBound > 0) {
		return fmt.Sprintf("no replicas planned: no level met the SLO, but the client limited the measurement (%s), so the failure may be the client's. Measure from a bigger client machine or from several (--workers)", e.Why)
	}
	return fmt.Sprintf("no replicas planned: the client limited the measurement (%s); one replica holds at least %s req/s. Measure from a bigger client machine or from several (--workers), or pass --allow-client-bound to plan on the lower bound",
		e.Why, num(e.LowerBound))
}

// NoCapacityError is a capacity search in which no level met the SLO.
type NoCapacityError struct{ msg string }

func (e *NoCapacityError) Error() string { return e.msg }

// applyRepeats sets p's capacity from the measurements of the capacity
// level: the lowest that met the SLO (the conservative end), with their
// median and whether they agree: all passed, and max/min − 1 within the
// stability percentage. It returns the measurement the capacity is, nil
// when none passed.
func applyRepeats(p *record.Plan, repeats []Level, stability float64) *Level {
	if stability <= 0 {
		stability = DefaultStabilityPercent
	}
	var lowest *Level
	failed := 0
	same := true
	for i := range repeats {
		r := &repeats[i]
		x := r.Step.Client.RequestsPerS
		p.Repeats = append(p.Repeats, x)
		same = same && r.Target.Level() == repeats[0].Target.Level()
		if r.Pass && x > 0 {
			if lowest == nil || x < lowest.Step.Client.RequestsPerS {
				lowest = r
			}
		} else {
			failed++
		}
	}
	sorted := slices.Clone(p.Repeats)
	slices.Sort(sorted)
	p.CapacityMedian = median(sorted)
	if lowest != nil {
		p.Capacity = lowest.Step.Client.RequestsPerS
	}
	lo, hi := sorted[0], sorted[len(sorted)-1]
	spread := 0.0
	if lo > 0 {
		spread = 100 * (hi/lo - 1)
	}
	p.RepeatsAgree = failed == 0 && spread <= stability
	n := len(repeats)
	if n == 1 {
		p.CapacityBasis = "measured once"
		return lowest
	}
	p.CapacityBasis = fmt.Sprintf("the lowest of %d measurements of %s: median %s, range %s–%s req/s",
		n, repeats[0].Target, num(p.CapacityMedian), num(lo), num(hi))
	if !same {
		p.CapacityBasis = fmt.Sprintf("the lowest passing of %d measurements of rates from %s down to %s: median %s, range %s–%s req/s",
			n, repeats[0].Target, repeats[n-1].Target, num(p.CapacityMedian), num(lo), num(hi))
	}
	switch {
	case failed > 0 && !same:
		p.CapacityBasis += fmt.Sprintf("; REPEATS DISAGREE: %d of %d missed the SLO and no rate held all its repeats in a row, so the capacity is not repeatable", failed, n)
	case failed > 0:
		p.CapacityBasis += fmt.Sprintf("; REPEATS DISAGREE: %d of %d missed the SLO, so the capacity is not repeatable at this rate", failed, n)
	case !p.RepeatsAgree:
		p.CapacityBasis += fmt.Sprintf("; REPEATS DISAGREE: they differ by %s, more than the %s stability percentage",
			strconv.FormatFloat(spread, 'f', 1, 64)+"%", strconv.FormatFloat(stability, 'f', -1, 64)+"%")
	default:
		p.CapacityBasis += fmt.Sprintf(", within %s of each other", strconv.FormatFloat(stability, 'f', -1, 64)+"%")
	}
	return lowest
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// scaleRange sets the autoscaler's range: minReplicas serve the trough
// (MinRate) and maxReplicas the target plus the burst allowance, both by
// the spare rule (ReplicasFor); when the target needs more than one
// replica, maxReplicas is above minReplicas, so that the autoscaler has
// room to scale both ways.
func scaleRange(p *record.Plan, o PlanOptions) {
	p.MinRate = o.MinRate
	if !(p.MinRate > 0) {
		p.MinRate = DefaultMinRateShare * o.TargetRate
	}
	burst := max(o.Burst, 0)
	p.MaxRate = o.TargetRate * (1 + burst)
	p.MinReplicas = min(ReplicasFor(p.MinRate, p.Capacity), p.Replicas)
	p.MaxReplicas = max(ReplicasFor(p.MaxRate, p.Capacity), p.Replicas)
	if p.Replicas > 1 && p.MaxReplicas <= p.MinReplicas {
		p.MaxReplicas = p.MinReplicas + 1
	}
}

// scaleAssumption states the autoscaler's range and the rates it rests on.
func scaleAssumption(p *record.Plan) string {
	return fmt.Sprintf("the autoscaler scales from %s, for a trough of %s req/s (--min-rate; default %s of the target), to %d, for the target plus a %s burst allowance (%s req/s), each by the same rule",
		replicas(p.MinReplicas), num(p.MinRate), pctOf(DefaultMinRateShare), p.MaxReplicas, pctOf(p.MaxRate/p.TargetRate-1), num(p.MaxRate))
}

// planCost prices the plan: the replicas the target needs for an hour, and
// a million requests (or tokens) served by one replica at its capacity.
func planCost(p *record.Plan, o PlanOptions) *record.PlanCost {
	if !(o.GPUHourCost > 0) && !(o.ReplicaHourCost > 0) {
		return nil
	}
	replicaHour := o.ReplicaHourCost + float64(p.GPUsPerReplica)*o.GPUHourCost
	c := &record.PlanCost{GPUHour: o.GPUHourCost, ReplicaHour: o.ReplicaHourCost, Unit: "requests",
		PerHour: float64(p.Replicas) * replicaHour}
	perHour := p.Capacity * 3600
	if o.Tokens > 0 {
		perHour *= o.Tokens
		c.Unit = "tokens"
	}
	if perHour > 0 {
		c.PerMillion = replicaHour / perHour * 1e6
	}
	return c
}

// costAssumption states how the cost was computed.
func costAssumption(p *record.Plan) string {
	c := p.Cost
	return fmt.Sprintf("cost: a replica-hour is %s + %d GPU × %s = %s; %d replicas for the target cost %s/hour; one replica at capacity serves a million %s for %s",
		usd(c.ReplicaHour), p.GPUsPerReplica, usd(c.GPUHour), usd(c.ReplicaHour+float64(p.GPUsPerReplica)*c.GPUHour),
		p.Replicas, usd(c.PerHour), c.Unit, usd(c.PerMillion))
}

// usd is a price in dollars: cents, or four significant figures under a
// dollar.
func usd(v float64) string {
	if v != 0 && math.Abs(v) < 1 && v*100 != math.Round(v*100) {
		return "$" + strconv.FormatFloat(v, 'g', 4, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}

func replicas(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return strconv.Itoa(n) + " replicas"
}
