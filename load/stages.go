package load

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// MaxStages bounds the stages of one plan: a plan is written by hand.
const MaxStages = 1000

// Stage is one stage of a load plan: over Duration the level moves in a
// straight line from the previous stage's target (0 before the first) to
// this one's, as k6's stages do. A zero Duration jumps to the target.
type Stage struct {
	Duration time.Duration
	// Target is the level reached at the stage's end: requests per second
	// in a rate plan, requests in flight in a concurrency plan.
	Target float64
}

// Plan is a load plan: stages of one mode, run one after the other. Its
// level at any instant is known exactly, and so is the number of requests
// a rate plan has asked for by then (the integral of the rate), which is
// what the pacer schedules from: every gap between two requests follows
// the rate at that instant, not a step per tick.
type Plan struct {
	Mode   Mode
	Stages []Stage
	// starts[i] is when stage i begins; cum[i] the plan's integral of the
	// level up to then (requests, for a rate plan). Both have one entry
	// more than Stages: the plan's end.
	starts []time.Duration
	cum    []float64
}

// NewPlan checks stages and returns their plan.
func NewPlan(mode Mode, stages []Stage) (*Plan, error) {
	if mode != Rate && mode != Concurrency {
		return nil, fmt.Errorf("a plan's mode must be %s or %s, got %s", Rate, Concurrency, textsafe.Quote(string(mode)))
	}
	if len(stages) == 0 {
		return nil, errors.New("a plan needs at least one stage")
	}
	if len(stages) > MaxStages {
		return nil, fmt.Errorf("a plan has at most %d stages, got %d", MaxStages, len(stages))
	}
	p := &Plan{Mode: mode, Stages: append([]Stage(nil), stages...)}
	p.starts = make([]time.Duration, len(stages)+1)
	p.cum = make([]float64, len(stages)+1)
	prev := 0.0
	for i, s := range stages {
		switch {
		case s.Duration < 0:
			return nil, fmt.Errorf("stage %d: the duration must not be negative, got %v", i+1, s.Duration)
		case !(s.Target >= 0) || math.IsInf(s.Target, 0):
			return nil, fmt.Errorf("stage %d: the target must be a non-negative number, got %v", i+1, s.Target)
		case mode == Concurrency && s.Target != math.Trunc(s.Target):
			return nil, fmt.Errorf("stage %d: a concurrency is a whole number, got %v", i+1, s.Target)
		}
		p.starts[i+1] = p.starts[i] + s.Duration
		if p.starts[i+1] < p.starts[i] {
			return nil, errors.New("the plan is too long")
		}
		p.cum[i+1] = p.cum[i] + (prev+s.Target)/2*s.Duration.Seconds()
		prev = s.Target
	}
	if p.Duration() == 0 {
		return nil, errors.New("a plan must last: every stage has a zero duration")
	}
	return p, nil
}

// Start is when stage i begins, from the plan's start.
func (p *Plan) Start(i int) time.Duration { return p.starts[min(max(i, 0), len(p.Stages))] }

// End is when stage i ends, from the plan's start.
func (p *Plan) End(i int) time.Duration { return p.starts[min(max(i+1, 0), len(p.Stages))] }

// Ramps reports whether stage i's level moves (its target is not the level
// it starts at).
func (p *Plan) Ramps(i int) bool { return p.Stages[i].Target != p.from(i) }

// Duration is how long the plan lasts.
func (p *Plan) Duration() time.Duration { return p.starts[len(p.Stages)] }

// StageAt returns the index of the stage under way at t since the plan
// began: len(Stages) once it is over. A zero-length stage is never under
// way; the level jumps at its instant.
func (p *Plan) StageAt(t time.Duration) int {
	if t < 0 {
		return 0
	}
	// The first stage whose end is after t.
	return sort.Search(len(p.Stages), func(i int) bool { return p.starts[i+1] > t })
}

// from is the level stage i starts at.
func (p *Plan) from(i int) float64 {
	if i == 0 {
		return 0
	}
	return p.Stages[i-1].Target
}

// Level returns the plan's level at t since it began: 0 before and after.
func (p *Plan) Level(t time.Duration) float64 {
	i := p.StageAt(t)
	if t < 0 || i == len(p.Stages) {
		return 0
	}
	s := p.Stages[i]
	f := float64(t-p.starts[i]) / float64(s.Duration)
	return p.from(i) + (s.Target-p.from(i))*f
}

// Count returns the integral of the level from the plan's start to t: the
// requests a rate plan asks for by t, or the request-seconds of a
// concurrency plan. It is constant after the plan's end.
func (p *Plan) Count(t time.Duration) float64 {
	if t <= 0 {
		return 0
	}
	i := p.StageAt(t)
	if i == len(p.Stages) {
		return p.cum[i]
	}
	x := (t - p.starts[i]).Seconds()
	r0 := p.from(i)
	k := (p.Stages[i].Target - r0) / p.Stages[i].Duration.Seconds()
	return p.cum[i] + r0*x + k*x*x/2
}

// TimeOf returns when the count first reaches n (the inverse of Count), so
// request n (counting from 0) of a rate plan is due at TimeOf(n): request 0
// at once, and each gap after follows the rate at its instant. ok is false
// when the plan never reaches n.
func (p *Plan) TimeOf(n float64) (t time.Duration, ok bool) {
	if n <= 0 {
		return 0, true
	}
	last := len(p.Stages)
	if n > p.cum[last] {
		return 0, false
	}
	// The first stage whose end count reaches n.
	i := sort.Search(last, func(i int) bool { return p.cum[i+1] >= n })
	x := n - p.cum[i]
	r0 := p.from(i)
	d := p.Stages[i].Duration.Seconds()
	k := (p.Stages[i].Target - r0) / d
	// Solve r0·s + k·s²/2 = x for s in the stage; this form stays exact
	// when k is 0 or tiny.
	den := r0 + math.Sqrt(max(r0*r0+2*k*x, 0))
	s := 0.0
	if den > 0 {
		s = 2 * x / den
	}
	s = min(s, d)
	return p.starts[i] + time.Duration(s*float64(time.Second)), true
}

// Target is the load of stage i: its mode and target. After the last
// stage it is the last stage's.
func (p *Plan) Target(i int) Target {
	i = min(max(i, 0), len(p.Stages)-1)
	v := p.Stages[i].Target
	if p.Mode == Rate {
		return Target{Mode: Rate, Rate: v}
	}
	return Target{Mode: Concurrency, Concurrency: int(v)}
}

// String writes the plan in ParsePlan's syntax.
func (p *Plan) String() string {
	parts := make([]string, len(p.Stages))
	for i, s := range p.Stages {
		v := strconv.FormatFloat(s.Target, 'g', -1, 64)
		if p.Mode == Rate {
			parts[i] = s.Duration.String() + ":" + v + "/s"
		} else {
			parts[i] = s.Duration.String() + ":c=" + v
		}
	}
	return strings.Join(parts, ",")
}

// ParsePlan reads a plan written as comma-separated stages DURATION:TARGET,
// each target a rate (100/s) or a concurrency (c=8), all of one kind:
// "30s:100/s,2m:500/s,30s:0/s" ramps to 100/s in 30 s, on to 500/s over
// two minutes, and back to nothing in 30 s.
func ParsePlan(s string) (*Plan, error) {
	var (
		mode   Mode
		stages []Stage
	)
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		ds, ts, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("stage %d %s is not DURATION:TARGET (e.g. 30s:100/s or 30s:c=8)", i+1, textsafe.Quote(part))
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil {
			return nil, fmt.Errorf("stage %d %s: bad duration %s (e.g. 30s, 2m)", i+1, textsafe.Quote(part), textsafe.Quote(ds))
		}
		ts = strings.TrimSpace(ts)
		m := Rate
		switch {
		case strings.HasPrefix(ts, "c="):
			m, ts = Concurrency, ts[2:]
		case strings.HasSuffix(ts, "/s"):
			ts = strings.TrimSuffix(ts, "/s")
		default:
			return nil, fmt.Errorf("stage %d %s: the target is a rate N/s or a concurrency c=N", i+1, textsafe.Quote(part))
		}
		v, err := strconv.ParseFloat(ts, 64)
		if err != nil {
			return nil, fmt.Errorf("stage %d %s: bad number %s", i+1, textsafe.Quote(part), textsafe.Quote(ts))
		}
		if mode != "" && m != mode {
			return nil, fmt.Errorf("stage %d %s: a plan's stages are all rates or all concurrencies", i+1, textsafe.Quote(part))
		}
		mode = m
		stages = append(stages, Stage{Duration: d, Target: v})
	}
	p, err := NewPlan(mode, stages)
	if err != nil {
		return nil, err
	}
	return p, nil
}
