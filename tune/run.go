package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
)

// Run tunes the model o.Session names: it reads the model's
// configuration, measures it (the baseline), then searches the grid for
// the configuration that does best under the objective and the SLOs,
// loading each through the repository API's configuration override and
// measuring it as a stepped run's level (stable windows, plan.Stepper);
// with a target rate it then plans replicas at the best configuration
// (tritontop plan's capacity search). The original configuration is
// loaded back at the end, on a context of its own, whatever ended the
// run. The best configuration is written to o.Output as a config.pbtxt,
// and the trials, the frontier and the best to the run file's summary.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	if err := o.check(); err != nil {
		return err
	}
	c := &o.Session
	model, err := modelName(c)
	if err != nil {
		return err
	}
	client, err := dial(ctx, c)
	if err != nil {
		return err
	}
	defer client.Close()
	srv := &server{client: client, model: model, version: c.ModelVersion}
	if err := srv.readOriginal(ctx); err != nil {
		return err
	}
	if err := srv.probe(ctx); err != nil {
		return err
	}
	r, err := newRun(ctx, &o, srv, stderr)
	if err == nil {
		err = r.session(ctx, stdout, stderr)
	}
	if r == nil {
		return err
	}
	r.restore(ctx, stderr) // when the session ended before its own
	if err == nil && r.restoreErr != nil {
		err = fmt.Errorf("the original configuration of %s is not back: %w", model, r.restoreErr)
	}
	return err
}

// run is one tune run: the search as a stepped run's levels, and what
// puts the original configuration back.
type run struct {
	o     *Options
	srv   *server
	steps *steps
	tui   bool
	sim   bool // the server is tritontop's simulator

	restoreOnce sync.Once
	restoreErr  error
}

// newRun sets up the search: the grid for this model, the baseline, the
// first trial (the session's first load), the plan after it.
func newRun(ctx context.Context, o *Options, srv *server, stderr io.Writer) (r *run, err error) {
	sp := o.space
	base := PointOf(srv.original).normal()
	if base.MaxBatch == 0 {
		// A model that does not batch keeps max_batch_size 0: only its
		// instances are searched.
		sp.MaxBatch, sp.Delays, sp.Preferred = []int{0}, []int{0}, []Preferred{PreferMax}
		fmt.Fprintf(stderr, "tritontop: %s does not batch (max_batch_size 0): tune searches its instance count and load\n", srv.model)
	}
	sp.Delays = keepDelays(sp.Delays, o.slos[0].Threshold, stderr)
	x, err := NewSearch(SearchOptions{Objective: o.obj, Space: sp, Baseline: base, Threshold: o.slos[0].Threshold,
		MinThroughput: o.MinThroughput, MaxTrials: o.MaxTrials, MaxTime: o.MaxTime, Now: o.Now, Exhaustive: o.Search == "grid"})
	if err != nil {
		return nil, err
	}
	o.space = sp
	r = &run{o: o, srv: srv}
	r.steps = &steps{x: x, obj: o.obj, floor: o.MinThroughput, load: srv.load, ctx: ctx, applied: base, from: -1,
		gpu: o.Plan.GPUUtilizationTarget}
	if o.Plan.TargetRate > 0 {
		c := &o.Session
		r.steps.capacity = &plan.Capacity{Base: load.Target{Mode: load.Rate, Distribution: load.Distribution(c.Distribution), MaxInFlight: c.MaxInflight},
			Window: time.Duration(c.MeasurementIntervalMS) * time.Millisecond, Repeat: o.Plan.Budget.Repeat}
	}
	first, err := r.firstTrial(ctx, stderr)
	if err != nil {
		return r, err // what it loaded goes back
	}
	o.Session.Concurrency = first.Concurrency
	if o.Session.Given != nil {
		o.Session.Given["concurrency"] = true
	}
	return r, nil
}

// firstTrial is the search's first trial, its configuration loaded
// before the session starts (the stepper prepares the levels after the
// first): the baseline needs none; a grid's first point does. A
// configuration that does not load is its trial's result, and the next
// trial is tried.
func (r *run) firstTrial(ctx context.Context, stderr io.Writer) (Trial, error) {
	s := r.steps
	for {
		t, ok := s.x.Next()
		if !ok {
			return Trial{}, errors.New("tune: no configuration of the grid loads")
		}
		if t.Point.normal() == s.applied.normal() {
			return t, nil
		}
		s.loaded = true
		if err := r.srv.load(ctx, t.Point); err != nil {
			if ctx.Err() != nil {
				return Trial{}, err
			}
			s.x.Record(Measure{}, err)
			fmt.Fprintf(stderr, "%s  concurrency %d  not loaded: %s\n", t.Point, t.Concurrency, textsafe.Line(err.Error()))
			continue
		}
		s.applied = t.Point
		return t, nil
	}
}

// keepDelays leaves out queue delays of half the SLO's threshold or more:
// a batch that waits that long leaves the request too little of it.
func keepDelays(ds []int, threshold time.Duration, stderr io.Writer) []int {
	var out []int
	for _, d := range ds {
		if time.Duration(d)*time.Microsecond*2 < threshold || d == 0 {
			out = append(out, d)
		}
	}
	if len(out) < len(ds) {
		fmt.Fprintf(stderr, "tritontop: queue delays of half the SLO's %v or more left out of the grid\n", threshold)
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out
}

// session runs the search as one session: a stepped run whose levels are
// the trials. The original configuration goes back once the load has
// stopped, before the summary is written.
func (r *run) session(ctx context.Context, stdout, stderr io.Writer) error {
	s, err := session.New(r.o.Session, session.BuilderFunc(r.build), stdout, stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Connect(ctx); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	s.Wait(ctx)
	r.steps.x.Stop(StopInterrupted)
	r.restore(ctx, stderr)
	return s.Finish(ctx)
}

// restore loads the original configuration back if a trial changed it,
// once, and says so.
func (r *run) restore(ctx context.Context, stderr io.Writer) {
	r.restoreOnce.Do(func() {
		r.steps.mu.Lock()
		loaded := r.steps.loaded
		r.steps.mu.Unlock()
		if !loaded {
			return
		}
		if r.restoreErr = r.srv.restore(ctx); r.restoreErr != nil {
			kept := r.o.Output + ".original"
			where := "its config.pbtxt is in " + kept
			if err := outfile.Write("-o", kept, true, func(w io.Writer) error {
				_, err := io.WriteString(w, PBTxt(r.srv.original, "the original configuration of "+r.srv.model+", as the server served it before tritontop tune"))
				return err
			}); err != nil {
				where = "it could not be written either: " + err.Error()
			}
			fmt.Fprintf(stderr, "tritontop: the original configuration of %s could not be loaded back: %s; load it yourself (%s), or restart the server\n",
				r.srv.model, textsafe.Line(r.restoreErr.Error()), textsafe.Line(where))
			return
		}
		fmt.Fprintf(stderr, "tritontop: %s's original configuration is loaded back\n", r.srv.model)
	})
}

// build is the session's parts with the search: its stepper prepares each
// trial's configuration, its summary carries the tune's record, its report
// the tune's and the config.pbtxt.
func (r *run) build(ctx context.Context, cfg session.Config, stdout, stderr io.Writer) (*session.Parts, error) {
	p, err := session.Build(ctx, cfg, stdout, stderr)
	if err != nil {
		return nil, err
	}
	r.sim = p.Header.Server.Simulated
	r.tui = !cfg.Headless && cfg.Record != "-" && p.Dashboard != nil && p.Terminal != nil && p.Terminal()
	if !r.tui {
		r.steps.onLoadError = func(t Trial, err error) {
			fmt.Fprintf(stderr, "%s  concurrency %d  not loaded: %s\n", t.Point, t.Concurrency, textsafe.Line(err.Error()))
		}
	}
	p.Search = r.steps
	p.Stepper = func(onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error) {
		return r.stepper(cfg, p, onStep, onDone)
	}
	if r.o.Plan.TargetRate > 0 {
		p.Plan = r.plan
	}
	p.OnSummary = append(p.OnSummary, r.summary)
	next := p.Report
	p.Report = func(ctx context.Context, sum record.Summary) error {
		err := next(ctx, sum)
		if werr := r.report(sum, stdout); werr != nil && err == nil {
			err = werr
		}
		return err
	}
	return p, nil
}

// stepper is the run's plan.Stepper: the session's measurement settings,
// the SLOs, and the steps as its search and preparer.
func (r *run) stepper(cfg session.Config, p *session.Parts, onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error) {
	slo := r.o.slos[0]
	n := 0
	o := plan.Options{
		Search: r.steps, Prepare: r.steps, Tick: cfg.Tick, Window: time.Duration(cfg.MeasurementIntervalMS) * time.Millisecond,
		StabilityPercent: cfg.StabilityPercent, MaxTrials: cfg.MaxTrials, SLO: &slo, SLOs: r.o.slos[1:], Drain: cfg.Drain,
		OnStep: func(st record.Step) {
			st.TuneConfig = r.steps.stepConfig(n)
			n++
			onStep(st)
		},
		OnDone: onDone,
	}
	if cfg.Given["step-duration"] {
		o.StepDuration = cfg.StepDuration
	}
	st, err := plan.NewStepper(o, p.Drivers[0], p.Collector)
	if err != nil {
		return nil, err
	}
	r.steps.stepper = st
	return st, nil
}
