package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// Session is one load run, through its phases: New, Connect, Start, Wait,
// Finish, and Close at the end whatever happened.
type Session struct {
	cfg            Config
	builder        Builder
	stdout, stderr io.Writer

	parts   *Parts
	rec     *record.Writer
	outputs *report.Outputs
	stepper *plan.Stepper
	frames  chan stats.Snapshot // the dashboard's, nil without one
	useTUI  bool
	started time.Time // when the drivers started; zero before

	runCtx  context.Context
	endRun  context.CancelFunc
	driveWG sync.WaitGroup
	colDone chan error

	driveErr  error
	driveOnce sync.Once
	tuiErr    error
	closed    bool
}

// New checks cfg (its errors are UsageErrors: one line each) and makes a
// session of it; b builds its parts (nil: Build, the session's own). The
// run's summary goes to stdout, its warnings and progress line to stderr.
func New(cfg Config, b Builder, stdout, stderr io.Writer) (*Session, error) {
	if err := cfg.check(stderr); err != nil {
		return nil, err
	}
	if b == nil {
		b = BuilderFunc(Build)
	}
	return &Session{cfg: cfg, builder: b, stdout: stdout, stderr: stderr}, nil
}

// Started is when the load started; zero before Start.
func (s *Session) Started() time.Time { return s.started }

// Connect builds the run's parts (it connects to the server), opens the
// run file and wires the collector's snapshots to the sinks. Close must
// run after it, whether it failed or not.
func (s *Session) Connect(ctx context.Context) error {
	p, err := s.builder.Build(ctx, s.cfg, s.stdout, s.stderr)
	if err != nil {
		return err
	}
	s.parts = p
	if err := replaceRunFile(s.cfg.Record, s.cfg.Force); err != nil {
		return UsageError{Err: err}
	}
	if s.rec, err = openRecord(s.cfg.Record, p.Header, s.stdout); err != nil {
		return err
	}
	view := s.view()
	if err := s.newStepper(); err != nil {
		return err
	}
	var recSink, stepSink report.Sink
	if s.rec != nil {
		recSink = s.rec
	}
	if s.stepper != nil {
		stepSink = s.stepper
	}
	// The view before the stepper: a step's line follows its last tick's.
	sinks := append([]report.Sink{recSink, view, stepSink}, p.Sinks...)
	s.outputs = report.NewOutputs(p.Header, sinks...)
	for _, f := range p.OnSummary {
		s.outputs.OnSummary(f)
	}
	return nil
}

// view is what shows the run as it goes: the dashboard's frames, the
// progress line, or nothing when the run file goes to standard output.
func (s *Session) view() report.Sink {
	p := s.parts
	s.useTUI = !s.cfg.Headless && s.cfg.Record != "-" && p.Dashboard != nil && p.Terminal != nil && p.Terminal()
	switch {
	case s.useTUI:
		frames := make(chan stats.Snapshot, 64)
		s.frames = frames
		return report.SinkFunc(func(snap stats.Snapshot) {
			select {
			case frames <- snap:
			default: // the dashboard is behind: it shows the next one
			}
		})
	case s.cfg.Record != "-":
		pr := report.NewProgress(s.stderr, s.cfg.Tick/2, stats.DiagnoseOptions{SharedProcess: s.cfg.SharedProcess})
		pr.Retry = p.Header.Retry
		return pr
	}
	return nil
}

// newStepper builds a stepped run's stepper: each measured step goes to
// the run file and the summary, and gets a line when there is no
// dashboard.
func (s *Session) newStepper() error {
	p := s.parts
	if p.Search == nil || p.Stepper == nil {
		return nil
	}
	lines := &stepLines{search: p.Search}
	onStep := func(st record.Step) {
		if s.rec != nil {
			s.rec.WriteStep(st)
		}
		s.outputs.Summarizer().AddStep(st)
		if !s.useTUI {
			lines.write(s.stderr, s.stepper, time.Since(s.started), st)
		}
	}
	onDone := func(r record.Search) { s.outputs.Summarizer().SetSearch(&r) }
	var err error
	s.stepper, err = p.Stepper(onStep, onDone)
	return err
}

// Start waits for the run's start, then starts the load: the drivers, the
// collector, and the end of the run after Config.Duration. The run ends
// on ctx's end, the duration, the end of a schedule, an error of a driver,
// or q.
func (s *Session) Start(ctx context.Context) error {
	p := s.parts
	if p.WaitForStart != nil && !p.WaitForStart(ctx) {
		s.outputs.Close()
		dropUnstartedRunFile(s.cfg.Record)
		s.closed = true
		return ErrNotStarted
	}
	// The server's statistics count from before the first request.
	p.Collector.Prime(ctx)
	if p.OnStart != nil {
		p.OnStart()
	}
	s.started = time.Now()
	s.runCtx, s.endRun = context.WithCancel(ctx)
	if p.OnEnd != nil {
		p.OnEnd(s.endRun)
	}
	if s.cfg.Duration > 0 {
		time.AfterFunc(s.cfg.Duration, s.endRun)
	}
	go func() {
		<-s.runCtx.Done()
		for _, d := range p.Drivers {
			d.Stop(s.cfg.Drain)
		}
	}()
	s.startDrivers()
	s.colDone = make(chan error, 1)
	go func() {
		s.colDone <- p.Collector.Run(context.Background(), s.outputs.Add)
		if s.frames != nil {
			close(s.frames)
		}
	}()
	return nil
}

// startDrivers runs the models' drivers together: an error in one ends the
// run for all; so does a driver that stopped without ending by itself (a
// stop reaches them all anyway). Drivers that end by themselves (a load
// plan, a trace's schedule: in a trace over several models, each model's)
// end the run when the last of them has sent its last request and
// drained, so that no model's trace is cut by another's end.
func (s *Session) startDrivers() {
	hurry := s.parts.Hurry
	if hurry == nil {
		hurry = context.Background()
	}
	var selfEnded atomic.Int32
	for _, d := range s.parts.Drivers {
		if d.EndsByItself() {
			selfEnded.Add(1)
		}
	}
	for _, d := range s.parts.Drivers {
		s.driveWG.Go(func() {
			err := d.Run(hurry)
			if err != nil {
				s.driveOnce.Do(func() { s.driveErr = err })
			}
			if err != nil || !d.EndsByItself() || selfEnded.Add(-1) == 0 {
				s.endRun()
			}
		})
	}
}

// Wait shows the dashboard, if the run has one, and waits for the end of
// the run: every driver stopped and the collector's last snapshot.
func (s *Session) Wait(ctx context.Context) {
	if s.useTUI {
		s.tuiErr = s.parts.Dashboard(ctx, s.runCtx, s.stepper, s.frames)
		s.endRun()
	}
	s.driveWG.Wait()
	if err := <-s.colDone; err != nil && s.tuiErr == nil {
		s.tuiErr = err
	}
}

// Finish ends a waited run: a stepped run's last level and plan, the
// summary and run file closed, the report written, and the verdict. Its
// error is the run's: a driver's, the plan's, the run file's, the
// dashboard's, then the verdict's.
func (s *Session) Finish(ctx context.Context) error {
	p := s.parts
	var planErr error
	if s.stepper != nil {
		// A level cut short by the end of the run is kept, marked.
		s.stepper.Interrupt()
		if !s.stepper.Progress().Done {
			res := s.stepper.Result()
			s.outputs.Summarizer().SetSearch(&res)
		}
		if p.Plan != nil {
			var pl *record.Plan
			if pl, planErr = p.Plan(s.stepper, s.outputs.Summary().Steps); pl != nil {
				s.outputs.Summarizer().SetPlan(pl)
			}
		}
	}
	sum, recErr := s.outputs.Close()
	s.closed = true
	if err := s.report(ctx, sum); err != nil && recErr == nil {
		recErr = err
	}
	tuiErr := s.tuiErr
	switch {
	case s.driveErr != nil:
		return s.driveErr
	case planErr != nil:
		return fmt.Errorf("no plan: %w", planErr)
	case recErr != nil:
		return fmt.Errorf("writing the run: %w", recErr)
	case tuiErr != nil && (errors.Is(tuiErr, tea.ErrProgramPanic) ||
		!errors.Is(tuiErr, tea.ErrProgramKilled) && !errors.Is(tuiErr, context.Canceled)):
		return fmt.Errorf("dashboard: %w", tuiErr)
	}
	if p.Verdict != nil {
		return p.Verdict(sum)
	}
	return nil
}

// report writes the final summary by the parts' Report, or as text.
func (s *Session) report(ctx context.Context, sum record.Summary) error {
	if s.parts.Report != nil {
		return s.parts.Report(ctx, sum)
	}
	out := s.stdout
	if s.cfg.Record == "-" {
		out = s.stderr
	}
	report.WriteText(out, sum)
	return nil
}

// Close ends the run if it still runs and releases its parts. A run that
// Connect, Start or Finish did not complete is closed as it stands: its run
// file keeps what was written.
func (s *Session) Close() {
	if s.endRun != nil {
		s.endRun()
	}
	if s.outputs != nil && !s.closed {
		if s.runCtx != nil {
			s.driveWG.Wait()
			<-s.colDone
		}
		s.outputs.Close()
		s.closed = true
	}
	if s.parts != nil && s.parts.Release != nil {
		s.parts.Release(!s.started.IsZero())
	}
}
