package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/pb"
	"github.com/tritontop/tritontop/tui"
)

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// protocolName is how the header names the transport.
func protocolName(f *Config) string {
	switch {
	case f.Endpoint.text():
		return f.Endpoint.protocolName()
	case f.Streaming:
		return "gRPC stream"
	case f.Protocol == "http":
		return "HTTP"
	}
	return "gRPC"
}

// runSession runs one load run: connect, drive, measure, and show or
// record, through the session's phases.
func runSession(ctx context.Context, f *Config, stdout, stderr io.Writer) error {
	s, err := New(*f, nil, stdout, stderr)
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
	return s.Finish(ctx)
}

// Build is the session's own Builder (New uses it when given none): it
// connects to the server or servers cfg names (starting the demo's
// simulator first for cfg.Demo) and builds the run's parts: the drivers
// feed the collector, whose snapshots fan out to the run's sinks (summary,
// run file, dashboard or progress line, Prometheus, the profile export, the
// gates). A test or a program wraps it to add to the parts.
func Build(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*Parts, error) {
	if err := cfg.check(stderr); err != nil {
		return nil, err
	}
	b := &builder{f: &cfg, stdout: stdout}
	return b.build(ctx, stderr)
}

// builder builds one run's parts from its Config, which it owns.
type builder struct {
	f      *Config
	stdout io.Writer
}

// releases are what a run holds, freed last first.
type releases []func(started bool)

func (r *releases) add(f func(started bool)) { *r = append(*r, f) }

func (r releases) run(started bool) {
	for i := len(r) - 1; i >= 0; i-- {
		r[i](started)
	}
}

// Build connects and builds the run's parts; what it took is released
// when it fails.
func (b *builder) build(ctx context.Context, stderr io.Writer) (_ *Parts, err error) {
	f := b.f
	var rel releases
	defer func() {
		if err != nil {
			rel.run(false)
		}
	}()
	if f.Demo != nil {
		srv, err := startDemoSimulator(ctx, f, *f.Demo, stderr)
		if err != nil {
			return nil, err
		}
		rel.add(func(bool) { srv.Close() })
	}
	// -f's file was made before the run to check it; a run that wrote
	// nothing leaves no empty file.
	if err := checkGateFlags(f); err != nil {
		return nil, UsageError{Err: err}
	}
	gates := newRunGates(f)
	sched, err := loadFromFlags(f)
	if err != nil {
		return nil, err
	}
	prom, err := f.Workers.servePrometheus(ctx, f.modelNames(), stderr)
	if err != nil {
		return nil, err
	}
	rel.add(func(bool) { prom.close() })
	if f.CPUProfile != "" {
		stopProfile, err := outfile.StartCPUProfile(f.CPUProfile, f.Force)
		if err != nil {
			return nil, UsageError{Err: err}
		}
		rel.add(func(bool) { stopProfile() })
	}
	t, err := b.connect(ctx, &sched, &rel)
	if err != nil {
		return nil, err
	}
	drivers, col, restartCPU, err := b.measure(ctx, t, sched, &rel, stderr)
	if err != nil {
		return nil, err
	}
	header := runHeader(f, f.Args, t, drivers)
	f.Workers.stamp(&header)
	p := &Parts{
		Drivers: drivers, Collector: col, Header: header,
		Sinks:        []report.Sink{prom.sink(), f.PerfAnalyzer.exportSink(), gates.sink()},
		WaitForStart: func(ctx context.Context) bool { return f.Workers.waitForStart(ctx, stderr) },
		OnStart:      restartCPU,
		Hurry:        hurryContext(ctx),
		Dashboard: func(ctx, runCtx context.Context, stepper *plan.Stepper, frames <-chan stats.Snapshot) error {
			return runDashboard(ctx, runCtx, f, t, drivers, col, stepper, frames, b.stdout)
		},
		Terminal: func() bool { return isTerminal(b.stdout) },
		Report: func(ctx context.Context, sum record.Summary) error {
			return reportRun(ctx, f, prom, sum, b.stdout, stderr)
		},
		Verdict: func(sum record.Summary) error {
			return errors.Join(sloVerdict(f, sum), gates.verdict(sum, "tritontop "+f.Model))
		},
		Release: rel.run,
	}
	if gates != nil {
		p.OnSummary = append(p.OnSummary, gates.finish)
		p.OnEnd = func(end func()) { gates.end = end }
	}
	b.stepped(p, sched, header.Server)
	return p, nil
}

// connect dials the server(s) and reads the model(s), and checks the SLOs
// against the model.
func (b *builder) connect(ctx context.Context, sched *schedule, rel *releases) (*target, error) {
	t, err := connect(ctx, b.f)
	if err != nil {
		return nil, err
	}
	rel.add(func(bool) { t.close() })
	if err := checkSLOsForModel(b.f, t); err != nil {
		return nil, UsageError{Err: err}
	}
	planProbe(sched, t.config)
	return t, nil
}

// measure builds the drivers and the collector that counts their results,
// and returns what restarts the count of the client's CPU.
func (b *builder) measure(ctx context.Context, t *target, sched schedule, rel *releases, stderr io.Writer) (
	[]*driver.Driver, *stats.Collector, func(), error) {
	f := b.f
	client, streams, bal, err := driverClient(f, t)
	if err != nil {
		return nil, nil, nil, err
	}
	if bal != nil {
		rel.add(func(bool) { bal.Close() })
	}
	drivers, err := newDrivers(f, t, sched, client, streams)
	if err != nil {
		return nil, nil, nil, err
	}
	drv := drivers[0]
	if err := f.PerfAnalyzer.openProfileExport(drv); err != nil {
		return nil, nil, nil, err
	}
	rel.add(func(started bool) { f.PerfAnalyzer.closeExport(stderr, started) })
	col, closeCol, restartCPU := newCollector(ctx, f, t, drivers, bal, stderr)
	rel.add(func(bool) { closeCol() })
	// Every change of load, by key or by step, of any model, starts a new
	// tick.
	if f.several() {
		for i, d := range drivers {
			d.OnLoadChange(col.ModelLoadChanged(i))
		}
	} else {
		drv.OnLoadChange(f.PerfAnalyzer.onLoadChange(col.LoadChanged))
	}
	return drivers, col, restartCPU, nil
}

// stepped makes p a stepped run when the schedule searches (a range, a
// capacity plan), and a plan's run a plan.
func (b *builder) stepped(p *Parts, sched schedule, srv record.ServerInfo) {
	if sched.search == nil {
		return
	}
	f, drv, col := b.f, p.Drivers[0], p.Collector
	p.Search = sched.search
	p.Stepper = func(onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error) {
		return newStepper(f, sched, drv, col, onStep, onDone)
	}
	if f.Plan != nil {
		p.Plan = func(st *plan.Stepper, steps []record.Step) (*record.Plan, error) {
			return makePlan(f, srv, sched.search, st, steps)
		}
	}
}

// reportRun prints the run's summary, writes its CSV file and ends the
// Prometheus endpoint; the CSV file's error is the run's.
func reportRun(ctx context.Context, f *Config, prom *promEndpoint, sum record.Summary, stdout, stderr io.Writer) error {
	printSummary(f, sum, stdout, stderr)
	var err error
	if f.CSV != "" {
		err = writeCSVFile(f.CSV, sum, report.CSVOptions{Verbose: f.VerboseCSV}, f.Force)
	}
	prom.finish(ctx, stderr)
	return err
}

// newDrivers makes the run's drivers: one, or one per model of a run over
// several, sharing the client (and its balancer) and an epoch, so that one
// collector counts their results in the same ticks.
func newDrivers(f *Config, t *target, sched schedule, client driver.Client, streams int) ([]*driver.Driver, error) {
	epoch := time.Now()
	var out []*driver.Driver
	for _, mt := range t.each() {
		mf := mt.flags
		seqs, err := sequenceOptions(mf, mt.config)
		if err != nil {
			return nil, UsageError{Err: err}
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
		if mf.Shape.trace != nil {
			seqs = nil // a trace's requests carry their own sequence ids
		}
		if schedule != nil || mf.Shape.plan != nil {
			// The driver takes only the cap of Load: a trace's or a plan's
			// open loop keeps the one of any other.
			initial.MaxInFlight = mf.MaxInflight
		}
		opts := driver.Options{
			Client: client, Requests: requests, BatchSize: mf.BatchSize, Schedule: schedule,
			Load:      initial,
			Streaming: mf.Streaming, Streams: streams, Decoupled: mt.decoupled(),
			Timeout: f.Timeout, Retries: f.Retries, Sequences: seqs, Epoch: epoch,
			Plan: mf.Shape.plan, PlanDrain: f.Drain,
			LockThreads: f.PerfAnalyzer.Sync,
			// Results reach the collector within the tick they finished in.
			ResultMaxAge: driver.ResultMaxAgeFor(f.Tick),
		}
		f.Retry.options(&opts)
		drv, err := driver.New(opts)
		if err != nil {
			if f.several() {
				return nil, UsageError{Err: fmt.Errorf("model %s: %w", textsafe.Bound(mf.Model), err)}
			}
			return nil, UsageError{Err: err}
		}
		out = append(out, drv)
	}
	return out, nil
}

// newStepper builds the stepped run's stepper: it measures each level,
// hands each measured step to onStep and what the run found to onDone, and
// stops the run after the last level.
func newStepper(f *Config, sched schedule, drv *driver.Driver, col *stats.Collector,
	onStep func(record.Step), onDone func(record.Search)) (*plan.Stepper, error) {
	opts := plan.Options{
		Search: sched.search, Tick: f.Tick, Window: time.Duration(f.MeasurementIntervalMS) * time.Millisecond,
		StabilityPercent: f.StabilityPercent, MaxTrials: f.MaxTrials, SLO: sched.slo, SLOs: sched.slos, Drain: f.Drain,
		OnStep: onStep, OnDone: onDone, Lockstep: f.Workers.distributed(), CountWindow: f.PerfAnalyzer.countWindow(),
	}
	if f.Given["step-duration"] {
		opts.StepDuration = f.StepDuration
	}
	stepper, err := plan.NewStepper(opts, drv, col)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return stepper, nil
}

// newCollector builds the run's measuring side: the server's statistics and
// metrics, and the client's CPU. The returned funcs release the sampler and
// restart its count of the client's CPU (after a wait for --start-at).
func newCollector(ctx context.Context, f *Config, t *target, drivers []*driver.Driver, bal *driver.Balancer,
	stderr io.Writer) (*stats.Collector, func(), func()) {
	interval := f.Tick
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
		Interval: interval, Window: f.Window, Epoch: drivers[0].Epoch(),
		Server:  poller,
		Metrics: metrics,
		System:  sampler, Replicas: replicas,
		Goodput: f.SLO.goodput,
	}
	if f.several() {
		for i, mt := range t.models {
			opts.Models = append(opts.Models, stats.ModelSource{Name: mt.flags.Model, Version: mt.flags.ModelVersion,
				Results: drivers[i].Results(), Control: drivers[i], Servers: perModel[i], Decoupled: mt.decoupled()})
		}
	} else {
		opts.Results, opts.Control, opts.Decoupled = f.PerfAnalyzer.tapResults(drivers[0].Results()), drivers[0], t.decoupled()
	}
	return stats.NewCollector(opts), closeSampler, restart
}

// runHeader is the run file's first line: what is measured and how; a run
// over several models lists each model with its initial load.
func runHeader(f *Config, args []string, t *target, drivers []*driver.Driver) record.Header {
	initial := stats.LoadOf(drivers[0].State())
	var models []record.ModelInfo
	if f.several() {
		loads := make([]stats.Load, len(drivers))
		for i, mt := range t.models {
			loads[i] = stats.LoadOf(drivers[i].State())
			mi := record.ModelInfo{Name: mt.flags.Model, Version: mt.flags.ModelVersion, Load: &loads[i],
				Plan: tracePlan(&mt.flags.Shape)}
			mi.Metadata, _ = record.ProtoJSON(mt.metadata)
			mi.Config, _ = record.ProtoJSON(mt.config)
			models = append(models, mi)
		}
		initial = stats.AggregateLoad(loads)
	}
	h := record.Header{
		TritontopVersion: Version,
		Args:             args,
		StartTime:        time.Now(),
		Server:           record.ServerInfo{URL: strings.Join(f.servers(), ","), Protocol: protocolName(f), Simulated: t.simulated, InProcess: f.SharedProcess, DemoGPU: f.DemoGPU},
		Model:            record.ModelInfo{Name: f.Model, Version: f.ModelVersion},
		Load:             initial,
		Interval:         f.Tick,
		Window:           f.Window,
		Models:           models,
		Plan:             tracePlan(&f.Shape),
		Retry:            f.Retry.policy(f.Retries),
	}
	if len(f.URLs) > 1 {
		h.Server.Replicas, h.Server.Balance = f.URLs, f.Balance
	}
	h.Server.Metadata, _ = record.ProtoJSON(t.server)
	h.Model.Metadata, _ = record.ProtoJSON(t.metadata)
	h.Model.Config, _ = record.ProtoJSON(t.config)
	return h
}

// runDashboard runs the dashboard until q, a signal, or the end of the run
// (runCtx), feeding it frames.
func runDashboard(ctx, runCtx context.Context, f *Config, t *target, drivers []*driver.Driver, col *stats.Collector,
	stepper *plan.Stepper, frames <-chan stats.Snapshot, stdout io.Writer) error {
	o := tui.Options{
		Snapshots: frames, Control: drivers[0], Windows: col, FPS: f.FPS, Mouse: f.Mouse,
		Header: tui.HeaderInfo{
			Server: serverLabel(f.servers(), f.Balance), Protocol: protocolName(f), Model: f.Model, Version: f.ModelVersion,
			MaxBatch: int(t.config.GetMaxBatchSize()), DynamicBatching: t.config.GetDynamicBatching() != nil,
			Simulated: t.simulated, SharedProcess: f.SharedProcess, Recording: f.Record, Decoupled: t.decoupled(),
		},
	}
	if stepper != nil { // a nil *plan.Stepper in the interface would not be nil
		o.Sweep = stepper
	}
	if f.several() {
		o.Control = nil
		for i, mt := range t.models {
			mc := modelControl(mt.flags.Model, mt.flags.ModelVersion, mt.config)
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
func printSummary(f *Config, sum record.Summary, stdout, stderr io.Writer) {
	out := stdout
	if f.Record == "-" {
		out = stderr
	}
	report.WriteSummaryAs(out, sum, f.JSON, f.Markdown)
	if sum.Plan != nil && !f.JSON && !f.Markdown {
		report.WritePlan(out, sum.Plan)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
