package driver

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/tritontop/tritontop/load"
)

// A Pacer decides when open-loop requests are due. It is a pure function of
// the time elapsed since pacing began and the number of hits already
// issued, so it can be tested without a clock.
type Pacer interface {
	// Pace returns how long after elapsed the next hit (number hits,
	// counting from 0) is due. A negative wait means the hit is overdue by
	// -wait, so elapsed+wait is always the hit's scheduled time. stop
	// reports that no hit will ever be due (a zero rate).
	Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool)
}

// ConstantPacer paces hits at evenly spaced times: hit n is due at n/Rate
// seconds, hit 0 at once.
type ConstantPacer struct {
	// Rate is in hits per second.
	Rate float64
}

// Pace implements Pacer.
func (p ConstantPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if !(p.Rate > 0) || math.IsInf(p.Rate, 0) {
		return 0, true
	}
	due := time.Duration(float64(hits) * float64(time.Second) / p.Rate)
	return due - elapsed, false
}

// PoissonPacer paces hits as a Poisson process: the gaps between hits are
// exponentially distributed with mean 1/Rate, drawn from a seeded source so
// that a run can be repeated. The first hit is due one gap after the start.
// It remembers the due time of the last hit asked for, so hits must not go
// backwards; start a new PoissonPacer for a new pacing segment.
type PoissonPacer struct {
	rate float64
	rng  *rand.Rand
	n    uint64        // the hit whose due time is in due
	due  time.Duration // due time of hit n
}

// NewPoissonPacer returns a Poisson pacer for rate hits per second whose
// gaps come from seed.
func NewPoissonPacer(rate float64, seed uint64) *PoissonPacer {
	p := &PoissonPacer{rate: rate, rng: rand.New(rand.NewPCG(seed, 0x706f6973736f6e))}
	if rate > 0 {
		p.due = p.gap()
	}
	return p
}

func (p *PoissonPacer) gap() time.Duration {
	return time.Duration(p.rng.ExpFloat64() / p.rate * float64(time.Second))
}

// Pace implements Pacer.
func (p *PoissonPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if !(p.rate > 0) || math.IsInf(p.rate, 0) {
		return 0, true
	}
	for p.n < hits {
		p.due += p.gap()
		p.n++
	}
	return p.due - elapsed, false
}

// newPacer returns the pacer for an open-loop load.
func newPacer(l load.Target, seed uint64) Pacer {
	if l.Distribution == load.Poisson {
		return NewPoissonPacer(l.Rate, seed)
	}
	return ConstantPacer{Rate: l.Rate}
}
