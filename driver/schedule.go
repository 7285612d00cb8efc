package driver

import (
	"math"
	"time"

	"github.com/tritontop/tritontop/load"
)

// PlanPacer paces the hits of a rate plan (load.Plan) scaled by Scale from
// the plan time Since, when Acc hits' worth had been planned (scaled counts
// add up across overrides): hit n, counting from the plan's start, is due
// when the scaled count reaches n, so every gap follows the rate at its own
// instant, within a stage's ramp too. Pacing begins at plan time From with
// hit First. It is a pure function of its fields.
type PlanPacer struct {
	Plan  *load.Plan
	Scale float64
	Since time.Duration
	Acc   float64
	From  time.Duration
	First uint64
	base  float64 // Plan.Count(Since)
}

// NewPlanPacer returns the pacer of p scaled by scale since plan time
// since (when acc hits were planned), starting at plan time from with hit
// first.
func NewPlanPacer(p *load.Plan, scale float64, since time.Duration, acc float64, from time.Duration, first uint64) *PlanPacer {
	return &PlanPacer{Plan: p, Scale: scale, Since: since, Acc: acc, From: from, First: first, base: p.Count(since)}
}

// Pace implements Pacer: elapsed counts from From, hits from First.
func (p *PlanPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if !(p.Scale > 0) {
		return 0, true
	}
	n := float64(p.First + hits)
	at, ok := p.Plan.TimeOf(p.base + (n-p.Acc)/p.Scale)
	if !ok || at >= p.Plan.Duration() && n > 0 {
		return 0, true
	}
	return at - p.From - elapsed, false
}

// planState is where a driver's plan stands: its clock starts with Run, and
// an override (SetRate, SetConcurrency while it runs) scales the rest of
// it. It is part of runState, so it changes only under the driver's lock.
type planState struct {
	scale float64
	// since is the plan time from which scale holds, and acc the scaled
	// count up to it; prevSince, prevAcc and prevScale are the span
	// before, so that a tick cut at the override still reads its count.
	since, prevSince time.Duration
	acc, prevAcc     float64
	prevScale        float64
	concurrency      int // a concurrency plan's level now
	started          bool
	startAt          time.Duration // offset of the plan's start from the epoch
	stageTarget      load.Target   // the current stage's target, unscaled
	stage            int
}

// count is the scaled count of the plan at plan time t.
func (ps *planState) count(p *load.Plan, t time.Duration) float64 {
	if t < ps.since {
		return ps.prevAcc + ps.prevScale*(p.Count(t)-p.Count(ps.prevSince))
	}
	return ps.acc + ps.scale*(p.Count(t)-p.Count(ps.since))
}

// scaled is a stage's target times the plan's scale.
func scaled(t load.Target, scale float64) load.Target {
	if t.Mode == load.Rate {
		t.Rate *= scale
	} else {
		t.Concurrency = int(math.Round(float64(t.Concurrency) * scale))
	}
	return t
}

// Planned returns the integral of the plan's level (scaled by the
// overrides) from the plan's start to at, an offset from the epoch: the
// requests a rate plan asked for by then, or the request-seconds of a
// concurrency plan. The collector reads it at each tick's ends to record
// the tick's mean planned target. ok is false without a plan.
func (d *Driver) Planned(at time.Duration) (float64, bool) {
	p := d.opts.Plan
	ps := d.state.Load().plan
	if s := d.opts.Schedule; s != nil {
		if !ps.started {
			return 0, true
		}
		return float64(s.Count(at - ps.startAt)), true
	}
	if p == nil {
		return 0, false
	}
	if !ps.started {
		return 0, true
	}
	return ps.count(p, min(at-ps.startAt, p.Duration())), true
}

// overridePlan scales the rest of the plan so that the current stage's
// target becomes level: what ↑/↓ do to a run that follows a plan. A stage
// whose target is 0 cannot be scaled, and the override is then ignored.
func (d *Driver) overridePlan(level float64) {
	d.change(func(s *runState) {
		ps := &s.plan
		base := ps.stageTarget.Level()
		if !(base > 0) || s.draining {
			return
		}
		now := time.Since(d.epoch) - ps.startAt
		if !ps.started {
			now = 0
		}
		acc := ps.count(d.opts.Plan, now)
		ps.prevSince, ps.prevAcc, ps.prevScale = ps.since, ps.acc, ps.scale
		ps.since, ps.acc, ps.scale = now, acc, max(level, 0)/base
		s.load = scaled(ps.stageTarget, ps.scale)
		if s.load.Mode == load.Concurrency {
			ps.concurrency = int(math.Round(d.opts.Plan.Level(now) * ps.scale))
		}
	})
}

// followPlan brings the run state to the plan at now (an offset from the
// epoch): it starts the plan's clock on the first call, moves to the stage
// under way, sets a concurrency plan's level, and stops the run at the
// plan's end. It returns how long until the plan next needs a look (-1:
// never) and whether it changed the state.
func (r *run) followPlan(now time.Duration, st *runState) (wait time.Duration, changed bool) {
	d := r.d
	p := d.opts.Plan
	if !st.plan.started {
		d.change(func(s *runState) { s.plan.started, s.plan.startAt = true, now })
		return 0, true
	}
	if st.draining {
		return -1, false
	}
	t := now - st.plan.startAt
	i := p.StageAt(t)
	if i == len(p.Stages) {
		if p.Mode == load.Rate && !st.paused {
			// The pacer stops the run once the hits due before the end,
			// late ones too, are out.
			return -1, false
		}
		d.Stop(d.opts.PlanDrain)
		return -1, true
	}
	if i != st.plan.stage || st.step != i {
		d.change(func(s *runState) {
			s.plan.stage, s.step = i, i
			s.plan.stageTarget = p.Target(i)
			s.load = scaled(s.plan.stageTarget, s.plan.scale)
			s.load.MaxInFlight = d.opts.Load.MaxInFlight
		})
		return 0, true
	}
	stageEnd := p.End(i) - t
	if p.Mode != load.Concurrency {
		return stageEnd, false
	}
	c := int(math.Round(p.Level(t) * st.plan.scale))
	if c != st.plan.concurrency {
		d.change(func(s *runState) { s.plan.concurrency = c })
		return 0, true
	}
	// A ramp's next whole level: look again soon rather than solve for it.
	if !p.Ramps(i) {
		return stageEnd, false
	}
	return min(stageEnd, planConcurrencyPoll), false
}

// planPacerDone stops the run when a rate plan's pacer has no hit left and
// the plan is over; it reports whether it did.
func (r *run) planPacerDone(now time.Duration, st *runState) bool {
	p := r.d.opts.Plan
	switch {
	case r.d.opts.Schedule != nil:
		// Past its last request.
	case p == nil || now-st.plan.startAt < p.Duration():
		return false
	}
	r.d.Stop(r.d.opts.PlanDrain)
	return true
}

// EndsByItself reports whether the driver's run ends on its own, at the end
// of its load plan (Options.Plan) or after the last request of its schedule
// (Options.Schedule), rather than only when it is stopped.
func (d *Driver) EndsByItself() bool { return d.opts.Plan != nil || d.opts.Schedule != nil }

// planConcurrencyPoll is how often a concurrency ramp looks at its level:
// a worker more or less within a millisecond of its instant.
const planConcurrencyPoll = time.Millisecond

// concurrency is the closed loop's number of workers the state wants.
func (s *runState) concurrency(hasPlan bool) int {
	if hasPlan {
		return s.plan.concurrency
	}
	return s.load.Concurrency
}

// segmentPacer is the pacer of a new open-loop segment starting at now.
// Under a plan, the hits go on from the last one issued: those a stage's
// boundary or an override found overdue are sent, late, rather than lost;
// after a pause the plan moves on to now without catching up.
func (r *run) segmentPacer(now time.Duration, st *runState, prev *segment, paused bool) Pacer {
	p := r.d.opts.Plan
	if p == nil && r.d.opts.Schedule == nil {
		return newPacer(st.load, r.d.opts.Seed+st.gen)
	}
	if prev.pacer != nil {
		r.planHits += prev.hits
	}
	if s := r.d.opts.Schedule; s != nil {
		t := now - st.plan.startAt
		if paused {
			r.planHits = max(r.planHits, s.Count(t))
		}
		return SchedulePacer{Schedule: s, From: t, First: r.planHits}
	}
	ps := &st.plan
	t := now - ps.startAt
	if paused {
		r.planHits = max(r.planHits, uint64(math.Ceil(ps.count(p, t))))
	}
	return NewPlanPacer(p, ps.scale, ps.since, ps.acc, t, r.planHits)
}
