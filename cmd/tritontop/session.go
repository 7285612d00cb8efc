package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/pb"
	"github.com/tritontop/tritontop/tui"
)

// usageError is a bad command line or bad input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// runLoad is `tritontop [flags]`: a live or headless load run.
func runLoad(args []string, stdout, stderr io.Writer) int {
	f, err := parseLoadFlags("tritontop", args, stderr, true)
	if err != nil {
		return flagExit("tritontop", err, stderr)
	}
	ctx, stop := stopContext(stderr)
	defer stop()
	if f.gate.repeat > 1 {
		return exitFor(runRepeats(ctx, f, args, stdout, stderr), stderr)
	}
	return exitFor(runSession(ctx, f, args, stdout, stderr), stderr)
}

// flagExit reports a bad command line of the command name in one line and
// a hint, never the whole usage; -h, which printed the usage already, is
// not an error.
func flagExit(name string, err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "tritontop: %s\n%s -h for help\n", oneLine(err.Error()), name)
	return exitUsage
}

// quietFlags makes fs print nothing when a flag is bad (flagExit prints one
// line instead), and its usage to help on -h.
func quietFlags(fs *flag.FlagSet, help io.Writer) {
	usage := fs.Usage
	failed := &errorSeen{}
	fs.SetOutput(failed)
	fs.Usage = func() {
		// The flag package prints a bad flag's error, then the usage; -h
		// comes with no error first.
		if failed.seen {
			failed.seen = false
			return
		}
		fs.SetOutput(help)
		defer fs.SetOutput(failed)
		if usage != nil {
			usage()
			return
		}
		fmt.Fprintf(help, "Usage of %s:\n", fs.Name())
		fs.PrintDefaults()
	}
}

// errorSeen notes that the flag package printed an error.
type errorSeen struct{ seen bool }

func (e *errorSeen) Write(p []byte) (int, error) { e.seen = true; return len(p), nil }

// exitFor prints err as one line and picks the exit code.
func exitFor(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var se sloError
	if errors.As(err, new(sloMissed)) || errors.As(err, &se) {
		return exitSLO
	}
	return exitFail
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// protocolName is how the header names the transport.
func protocolName(f *loadFlags) string {
	switch {
	case f.endpoint.text():
		return f.endpoint.protocolName()
	case f.streaming:
		return "gRPC stream"
	case f.protocol == "http":
		return "HTTP"
	}
	return "gRPC"
}

// runSession runs one load run: connect, drive, measure, and show or record.
// It is wiring: the driver feeds the collector, whose snapshots fan out to
// the run's sinks (summary, run file, dashboard or progress line).
func runSession(ctx context.Context, f *loadFlags, args []string, stdout, stderr io.Writer) error {
	// -f's file was made before the run to check it; a run that wrote
	// nothing leaves no empty file.
	if err := checkGateFlags(f); err != nil {
		return usageError{err}
	}
	gates := newRunGates(f)
	sched, err := loadFromFlags(f)
	if err != nil {
		return err
	}
	prom, err := f.dist.servePrometheus(ctx, f.modelNames(), stderr)
	if err != nil {
		return err
	}
	defer prom.close()
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile, f.out.force)
		if err != nil {
			return usageError{err}
		}
		defer stopProfile()
	}
	t, err := connect(ctx, f)
	if err != nil {
		return err
	}
	defer t.close()
	if err := checkSLOsForModel(f, t); err != nil {
		return usageError{err}
	}
	planProbe(&sched, t.config)

	client, streams, bal, err := driverClient(f, t)
	if err != nil {
		return err
	}
	if bal != nil {
		defer bal.Close()
	}
	drivers, err := newDrivers(f, t, sched, client, streams)
	if err != nil {
		return err
	}
	drv := drivers[0]
	if err := f.pa.openProfileExport(drv); err != nil {
		return err
	}
	var started time.Time // when the drivers started
	defer func() { f.pa.closeExport(stderr, !started.IsZero()) }()
	col, closeCol, restartCPU := newCollector(ctx, f, t, drivers, bal, stderr)
	defer closeCol()
	// Every change of load, by key or by step, of any model, starts a new
	// tick.
	if f.several() {
		for i, d := range drivers {
			d.OnLoadChange(col.ModelLoadChanged(i))
		}
	} else {
		drv.OnLoadChange(f.pa.onLoadChange(col.LoadChanged))
	}

	header := runHeader(f, args, t, drivers)
	f.dist.stamp(&header)
	if err := replaceRunFile(f.record, f.out.force); err != nil {
		return usageError{err}
	}
	rec, err := openRecord(f.record, header, stdout)
	if err != nil {
		return err
	}
	useTUI := !f.headless && f.record != "-" && isTerminal(stdout)
	var frames chan stats.Snapshot
	var view report.Sink
	switch {
	case useTUI:
		frames = make(chan stats.Snapshot, 64)
		view = report.SinkFunc(func(s stats.Snapshot) {
			select {
			case frames <- s:
			default: // the dashboard is behind: it shows the next one
			}
		})
	case f.record != "-":
		view = report.NewProgress(stderr, f.tick/2, stats.DiagnoseOptions{SharedProcess: f.inProcessServer})
	}
	var recSink report.Sink
	if rec != nil {
		recSink = rec
	}
	var (
		outputs  *report.Outputs
		stepper  *plan.Stepper
		stepSink report.Sink
	)
	// started (above) is also a sweep's time left.
	if sched.search != nil {
		// Each measured step goes to the run file and the summary, and
		// gets a line when there is no dashboard.
		lines := &stepLines{search: sched.search}
		onStep := func(st record.Step) {
			if rec != nil {
				rec.WriteStep(st)
			}
			outputs.Summarizer().AddStep(st)
			if !useTUI {
				lines.write(stderr, stepper, time.Since(started), st)
			}
		}
		onDone := func(r record.Search) { outputs.Summarizer().SetSearch(&r) }
		if stepper, err = newStepper(f, sched, drv, col, onStep, onDone); err != nil {
			return err
		}
		stepSink = stepper
	}
	// The view before the stepper: a step's line follows its last tick's.
	outputs = report.NewOutputs(header, recSink, view, stepSink, prom.sink(), f.pa.exportSink(), gates.sink())
	if gates != nil {
		outputs.OnSummary(gates.finish)
	}
	if !f.dist.waitForStart(ctx, stderr) {
		outputs.Close()
		dropUnstartedRunFile(f.record)
		return errNotStarted
	}
	// The server's statistics count from before the first request.
	col.Prime(ctx)
	restartCPU()
	started = time.Now()

	// The run ends on a signal, --duration, the end of a schedule, or q.
	runCtx, endRun := context.WithCancel(ctx)
	defer endRun()
	if gates != nil {
		gates.end = endRun
	}
	if f.duration > 0 {
		time.AfterFunc(f.duration, endRun)
	}
	go func() {
		<-runCtx.Done()
		for _, d := range drivers {
			d.Stop(f.drain)
		}
	}()

	// The models' drivers run together: an error in one ends the run for
	// all; so does a driver that stopped without ending by itself (a stop
	// reaches them all anyway). Drivers that end by themselves (a load
	// plan, a trace's schedule: in a trace over several models, each
	// model's) end the run when the last of them has sent its last request
	// and drained, so that no model's trace is cut by another's end.
	var (
		driveErr  error
		driveOnce sync.Once
		driveWG   sync.WaitGroup
		selfEnded atomic.Int32
	)
	for _, d := range drivers {
		if d.EndsByItself() {
			selfEnded.Add(1)
		}
	}
	for _, d := range drivers {
		driveWG.Go(func() {
			err := d.Run(hurryContext(ctx))
			if err != nil {
				driveOnce.Do(func() { driveErr = err })
			}
			if err != nil || !d.EndsByItself() || selfEnded.Add(-1) == 0 {
				endRun()
			}
		})
	}
	colDone := make(chan error, 1)
	go func() {
		colDone <- col.Run(context.Background(), outputs.Add)
		if frames != nil {
			close(frames)
		}
	}()

	var tuiErr error
	if useTUI {
		tuiErr = runDashboard(ctx, runCtx, f, t, drivers, col, stepper, frames, stdout)
		endRun()
	}
	driveWG.Wait()
	if err := <-colDone; err != nil && tuiErr == nil {
		tuiErr = err
	}
	var planErr error
	if stepper != nil {
		// A level cut short by the end of the run is kept, marked.
		stepper.Interrupt()
		if !stepper.Progress().Done {
			res := stepper.Result()
			outputs.Summarizer().SetSearch(&res)
		}
		if f.plan != nil {
			var p *record.Plan
			if p, planErr = makePlan(f, header.Server, sched.search, stepper, outputs.Summary().Steps); p != nil {
				outputs.Summarizer().SetPlan(p)
			}
		}
	}
	sum, recErr := outputs.Close()
	printSummary(f, sum, stdout, stderr)
	if f.csv != "" {
		if err := writeCSVFile(f.csv, sum, report.CSVOptions{Verbose: f.verboseCSV}, f.out.force); err != nil && recErr == nil {
			recErr = err
		}
	}
	prom.finish(ctx, stderr)
	switch {
	case driveErr != nil:
		return driveErr
	case planErr != nil:
		return fmt.Errorf("no plan: %w", planErr)
	case recErr != nil:
		return fmt.Errorf("writing the run: %w", recErr)
	case tuiErr != nil && (errors.Is(tuiErr, tea.ErrProgramPanic) ||
		!errors.Is(tuiErr, tea.ErrProgramKilled) && !errors.Is(tuiErr, context.Canceled)):
		return fmt.Errorf("dashboard: %w", tuiErr)
	}
	return errors.Join(sloVerdict(f, sum), gates.verdict(sum, "tritontop "+f.model))
}

// newDrivers makes the run's drivers: one, or one per model of a run over
// several, sharing the client (and its balancer) and an epoch, so that one
// collector counts their results in the same ticks.
func newDrivers(f *loadFlags, t *target, sched schedule, client driver.Client, streams int) ([]*driver.Driver, error) {
	epoch := time.Now()
	var out []*driver.Driver
	for _, mt := range t.each() {
		mf := mt.flags
		seqs, err := sequenceOptions(mf, mt.config)
		if err != nil {
			return nil, usageError{err}
		}
		initial := sched.initial
		if f.several() {
			sc, err := loadFromFlags(mf)
			if err != nil {
				return nil, err
			}
			initial = sc.initial
		}
		schedule, requests, err := scheduleFor(mf, mt, len(out) == 0)
		if err != nil {
			return nil, err
		}
		if mf.loadShape.trace != nil {
			seqs = nil // a trace's requests carry their own sequence ids
		}
		opts := driver.Options{
			Client: client, Requests: requests, BatchSize: mf.batch, Schedule: schedule,
			Load:      initial,
			Streaming: mf.streaming, Streams: streams, Decoupled: mt.decoupled(),
			Timeout: f.timeout, Retries: f.retries, Sequences: seqs, Epoch: epoch,
			Plan: mf.loadShape.plan, PlanDrain: f.drain,
			LockThreads: f.pa.sync,
			// Results reach the collector within the tick they finished in.
			ResultMaxAge: driver.ResultMaxAgeFor(f.tick),
		}
		f.retry.options(&opts)
		drv, err := driver.New(opts)
		if err != nil {
			if f.several() {
				return nil, usageError{fmt.Errorf("model %s: %w", mf.model, err)}
			}
			return nil, usageError{err}
		}
		out = append(out, drv)
	}
	return out, nil
}

// newStepper builds the stepped run's stepper: it measures each level,
// hands each measured step to onStep and what the run found to onDone, and
// stops the run after the last level.
func newStepper(f *loadFlags, sched schedule, drv *driver.Driver, col *stats.Collector,
	onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error) {
	opts := plan.Options{
		Search: sched.search, Tick: f.tick, Window: time.Duration(f.intervalMS) * time.Millisecond,
		StabilityPercent: f.stabilityPercent, MaxTrials: f.maxTrials, SLO: sched.slo, SLOs: sched.slos, Drain: f.drain,
		OnStep: onStep, OnDone: onDone, Lockstep: f.dist.distributed(), CountWindow: f.pa.countWindow(),
	}
	if f.set["step-duration"] {
		opts.StepDuration = f.stepDuration
	}
	stepper, err := plan.NewStepper(opts, drv, col)
	if err != nil {
		return nil, usageError{err}
	}
	return stepper, nil
}

// newCollector builds the run's measuring side: the server's statistics and
// metrics, and the client's CPU. The returned funcs release the sampler and
// restart its count of the client's CPU (after a wait for --start-at).
func newCollector(ctx context.Context, f *loadFlags, t *target, drivers []*driver.Driver, bal *driver.Balancer,
	stderr io.Writer) (*stats.Collector, func(), func()) {
	interval := f.tick
	poller, metrics, replicas, perModel := serverSources(ctx, f, t, bal, stderr)
	closeSampler, restart := func() {}, func() {}
	sampler, err := stats.NewSystemSampler(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tritontop: warning: client CPU unavailable: %s\n", oneLine(err.Error()))
		sampler = nil
	} else {
		closeSampler = func() { sampler.Close() }
		restart = func() { sampler.Sample(ctx, 0) }
	}
	opts := stats.CollectorOptions{
		Interval: interval, Window: f.window, Epoch: drivers[0].Epoch(),
		Server:  poller,
		Metrics: metrics,
		System:  sampler, Replicas: replicas,
		Goodput: f.slos.goodput,
	}
	if f.several() {
		for i, mt := range t.models {
			opts.Models = append(opts.Models, stats.ModelSource{Name: mt.flags.model, Version: mt.flags.modelVersion,
				Results: drivers[i].Results(), Control: drivers[i], Servers: perModel[i], Decoupled: mt.decoupled()})
		}
	} else {
		opts.Results, opts.Control, opts.Decoupled = f.pa.tapResults(drivers[0].Results()), drivers[0], t.decoupled()
	}
	return stats.NewCollector(opts), closeSampler, restart
}

// runHeader is the run file's first line: what is measured and how; a run
// over several models lists each model with its initial load.
func runHeader(f *loadFlags, args []string, t *target, drivers []*driver.Driver) record.Header {
	initial := stats.LoadOf(drivers[0].State())
	var models []record.ModelInfo
	if f.several() {
		loads := make([]stats.Load, len(drivers))
		for i, mt := range t.models {
			loads[i] = stats.LoadOf(drivers[i].State())
			mi := record.ModelInfo{Name: mt.flags.model, Version: mt.flags.modelVersion, Load: &loads[i],
				Plan: tracePlan(&mt.flags.loadShape)}
			mi.Metadata, _ = record.ProtoJSON(mt.metadata)
			mi.Config, _ = record.ProtoJSON(mt.config)
			models = append(models, mi)
		}
		initial = stats.AggregateLoad(loads)
	}
	h := record.Header{
		TritontopVersion: version,
		Args:             args,
		StartTime:        time.Now(),
		Server:           record.ServerInfo{URL: strings.Join(f.servers(), ","), Protocol: protocolName(f), Simulated: t.simulated, InProcess: f.inProcessServer, DemoGPU: f.demoGPU},
		Model:            record.ModelInfo{Name: f.model, Version: f.modelVersion},
		Load:             initial,
		Interval:         f.tick,
		Window:           f.window,
		Models:           models,
		Plan:             tracePlan(&f.loadShape),
	}
	if len(f.urls) > 1 {
		h.Server.Replicas, h.Server.Balance = f.urls, f.balance
	}
	h.Server.Metadata, _ = record.ProtoJSON(t.server)
	h.Model.Metadata, _ = record.ProtoJSON(t.metadata)
	h.Model.Config, _ = record.ProtoJSON(t.config)
	return h
}

// openRecord opens --record's run file ("-" for standard output), nil
// without one.
func openRecord(path string, h record.Header, stdout io.Writer) (*record.Writer, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		w, err := record.NewWriter(stdout, h)
		if err != nil {
			return nil, fmt.Errorf("writing the run to standard output: %w", err)
		}
		return w, nil
	}
	w, err := record.Create(path, h)
	if err != nil {
		return nil, usageError{fmt.Errorf("cannot write --record %s: %w", path, err)}
	}
	return w, nil
}

// runDashboard runs the dashboard until q, a signal, or the end of the run
// (runCtx), feeding it frames.
func runDashboard(ctx, runCtx context.Context, f *loadFlags, t *target, drivers []*driver.Driver, col *stats.Collector,
	stepper *plan.Stepper, frames <-chan stats.Snapshot, stdout io.Writer) error {
	o := tui.Options{
		Snapshots: frames, Control: drivers[0], Windows: col, FPS: f.fps, Mouse: f.mouse,
		Header: tui.HeaderInfo{
			Server: serverLabel(f.servers(), f.balance), Protocol: protocolName(f), Model: f.model, Version: f.modelVersion,
			MaxBatch: int(t.config.GetMaxBatchSize()), DynamicBatching: t.config.GetDynamicBatching() != nil,
			Simulated: t.simulated, SharedProcess: f.inProcessServer, Recording: f.record, Decoupled: t.decoupled(),
		},
	}
	if stepper != nil { // a nil *plan.Stepper in the interface would not be nil
		o.Sweep = stepper
	}
	if f.several() {
		o.Control = nil
		for i, mt := range t.models {
			mc := modelControl(mt.flags.model, mt.flags.modelVersion, mt.config)
			mc.Control = drivers[i]
			o.Models = append(o.Models, mc)
		}
	}
	p := tea.NewProgram(tui.New(o), tea.WithContext(ctx), tea.WithOutput(stdout))
	// --duration, the end of a schedule or a signal also close the dashboard.
	go func() { <-runCtx.Done(); p.Quit() }()
	_, err := p.Run()
	return err
}

// modelControl is what the dashboard says about one model of a run over
// several when it is shown, from its config.
func modelControl(name, version string, cfg *pb.ModelConfig) tui.ModelControl {
	return tui.ModelControl{Name: name, Version: version, MaxBatch: int(cfg.GetMaxBatchSize()),
		DynamicBatching: cfg.GetDynamicBatching() != nil, Decoupled: cfg.GetModelTransactionPolicy().GetDecoupled()}
}

// printSummary prints the end-of-run summary, to stderr when stdout carries
// the run file.
func printSummary(f *loadFlags, sum record.Summary, stdout, stderr io.Writer) {
	out := stdout
	if f.record == "-" {
		out = stderr
	}
	writeSummary(out, sum, f.jsonSummary, f.mdSummary)
	if sum.Plan != nil && !f.jsonSummary && !f.mdSummary {
		report.WritePlan(out, sum.Plan)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
