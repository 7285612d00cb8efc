package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"
	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
	"github.com/tritontop/tritontop/tui"
)

// simulatorExtension is the ServerMetadata extension by which tritontop's
// simulator says it is one; the client only uses it to label the numbers.
const simulatorExtension = "tritontop_simulator"

// usageError is a bad command line or bad input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// runLoad is `tritontop [flags]`: a live or headless load run.
func runLoad(args []string, stdout, stderr io.Writer) int {
	f, err := parseLoadFlags("tritontop", args, stderr, true)
	if err != nil {
		return flagExit(err, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return exitFor(runSession(ctx, f, args, stdout, stderr), stderr)
}

// flagExit reports a flag parsing error: -h is not an error.
func flagExit(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "tritontop: %v\n", err)
	return exitUsage
}

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
	return exitFail
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// target is what a run measures: the server, the model, and requests for it.
type target struct {
	client    triton.Client
	server    *pb.ServerMetadataResponse
	metadata  *pb.ModelMetadataResponse
	config    *pb.ModelConfig
	requests  []*triton.InferRequest
	simulated bool
}

// connect dials the server, reads the model's metadata and config, and
// builds the requests. Errors name what was wrong and what to do.
func connect(ctx context.Context, f *loadFlags) (*target, error) {
	conns := f.connections
	if f.protocol == "http" && !f.set["connections"] {
		// HTTP/1.1 carries one request at a time per connection: a cap
		// of one would serialize every request in flight.
		conns = 0
	}
	opts := triton.Options{
		Protocol:       f.protocol,
		Connections:    conns,
		Headers:        headerMap(f.headers),
		ConnectTimeout: f.connectTimeout,
	}
	if f.ssl {
		opts.TLS = &triton.TLSOptions{CAFile: f.sslCA, CertFile: f.sslCert, KeyFile: f.sslKey}
	}
	client, err := triton.Dial(ctx, f.url, opts)
	if err != nil {
		return nil, err
	}
	t := &target{client: client}
	fail := func(err error) (*target, error) { client.Close(); return nil, err }
	if t.server, err = client.ServerMetadata(ctx); err != nil {
		return fail(fmt.Errorf("server metadata from %s: %w", f.url, err))
	}
	t.simulated = slices.Contains(t.server.GetExtensions(), simulatorExtension)
	if t.metadata, err = client.ModelMetadata(ctx, f.model, f.modelVersion); err != nil {
		if triton.ErrorCode(err) == codes.NotFound {
			return fail(usageError{unknownModel(ctx, client, f.model, err)})
		}
		return fail(fmt.Errorf("metadata of model %q: %w", f.model, err))
	}
	if t.config, err = client.ModelConfig(ctx, f.model, f.modelVersion); err != nil {
		return fail(fmt.Errorf("config of model %q: %w", f.model, err))
	}
	if t.config.GetModelTransactionPolicy().GetDecoupled() && !f.streaming {
		return fail(usageError{fmt.Errorf("model %q is decoupled: Triton serves it over streaming only; add --streaming", f.model)})
	}
	shapes, err := triton.ParseShapes(f.shapes)
	if err != nil {
		return fail(usageError{err})
	}
	t.requests, err = triton.BuildRequests(t.metadata, t.config, triton.InputOptions{
		Data: f.inputData, Shapes: shapes, BatchSize: f.batch,
	})
	if err != nil {
		return fail(usageError{err})
	}
	for _, r := range t.requests {
		r.Version = f.modelVersion
	}
	return t, nil
}

// unknownModel lists the server's models for a NOT_FOUND answer.
func unknownModel(ctx context.Context, c triton.Client, model string, cause error) error {
	idx, err := c.RepositoryIndex(ctx, false)
	if err != nil || len(idx) == 0 {
		return fmt.Errorf("unknown model %q (%v)", model, cause)
	}
	var names []string
	for _, m := range idx {
		if !slices.Contains(names, m.GetName()) {
			names = append(names, m.GetName())
		}
	}
	slices.Sort(names)
	return fmt.Errorf("unknown model %q: the server has %s (use -m NAME)", model, strings.Join(names, ", "))
}

// loadOf turns the flags into the driver's initial load and schedule.
func loadOf(f *loadFlags) (driver.Load, []driver.Step, error) {
	dist := driver.Constant
	if f.distribution == "poisson" {
		dist = driver.Poisson
	}
	switch {
	case f.concRange != "":
		start, end, step, err := parseRange("--concurrency-range", f.concRange)
		if err != nil {
			return driver.Load{}, nil, usageError{err}
		}
		var steps []driver.Step
		for c := start; c <= end; c += step {
			steps = append(steps, driver.Step{Load: driver.Load{Mode: driver.Concurrency, Concurrency: int(c)}, Duration: f.stepDuration})
		}
		return steps[0].Load, steps, nil
	case f.rateRange != "":
		start, end, step, err := parseRange("--request-rate-range", f.rateRange)
		if err != nil {
			return driver.Load{}, nil, usageError{err}
		}
		var steps []driver.Step
		for r := start; r <= end+1e-9; r += step {
			steps = append(steps, driver.Step{Load: driver.Load{Mode: driver.RequestRate, Rate: r, Distribution: dist, MaxInFlight: f.maxInflight}, Duration: f.stepDuration})
		}
		return steps[0].Load, steps, nil
	case f.rate > 0:
		return driver.Load{Mode: driver.RequestRate, Rate: f.rate, Distribution: dist, MaxInFlight: f.maxInflight}, nil, nil
	}
	c := f.concurrency
	if c == 0 {
		c = 1
	}
	return driver.Load{Mode: driver.Concurrency, Concurrency: c}, nil, nil
}

// protocolName is how the header names the transport.
func protocolName(f *loadFlags) string {
	switch {
	case f.streaming:
		return "gRPC stream"
	case f.protocol == "http":
		return "HTTP"
	}
	return "gRPC"
}

// runSession runs one load run: connect, drive, measure, and show or record.
func runSession(ctx context.Context, f *loadFlags, args []string, stdout, stderr io.Writer) error {
	load, schedule, err := loadOf(f)
	if err != nil {
		return err
	}
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return usageError{err}
		}
		defer stopProfile()
	}
	t, err := connect(ctx, f)
	if err != nil {
		return err
	}
	defer t.client.Close()

	drv, err := driver.New(driver.Options{
		Client: t.client, Requests: t.requests, BatchSize: f.batch,
		Load: load, Schedule: schedule,
		Streaming: f.streaming, Streams: f.streams,
		Timeout: f.timeout, Retries: f.retries, Drain: f.drain,
	})
	if err != nil {
		return usageError{err}
	}

	interval := time.Duration(f.intervalMS) * time.Millisecond
	poller := stats.NewServerPoller(t.client, f.model, f.modelVersion)
	primeCtx, cancelPrime := context.WithTimeout(ctx, f.connectTimeout)
	err = poller.Prime(primeCtx)
	cancelPrime()
	if err != nil {
		fmt.Fprintf(stderr, "tritontop: warning: server statistics unavailable: %s\n", oneLine(err.Error()))
	}
	metricsURL := f.metricsURL
	if metricsURL == "" {
		metricsURL = triton.MetricsURL(f.url)
	}
	sampler, err := stats.NewSystemSampler(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tritontop: warning: client CPU unavailable: %s\n", oneLine(err.Error()))
		sampler = nil
	} else {
		defer sampler.Close()
	}
	col := stats.NewCollector(stats.CollectorOptions{
		Interval: interval, Window: f.window,
		Results: drv.Results(), Control: drv, Epoch: drv.Epoch(),
		Server:  poller,
		Metrics: stats.NewMetricsScraper(metricsURL, &http.Client{Timeout: 2 * interval}, f.model, f.modelVersion),
		System:  sampler,
	})

	header := record.Header{
		TritontopVersion: version,
		Args:             args,
		StartTime:        time.Now(),
		Server:           record.ServerInfo{URL: f.url, Protocol: protocolName(f), Simulated: t.simulated, InProcess: f.inProcessServer},
		Model:            record.ModelInfo{Name: f.model, Version: f.modelVersion},
		Load:             stats.Load{Mode: load.Mode.String(), Concurrency: load.Concurrency, Rate: load.Rate, Distribution: load.Distribution.String()},
		Interval:         interval,
		Window:           f.window,
	}
	header.Server.Metadata, _ = record.ProtoJSON(t.server)
	header.Model.Metadata, _ = record.ProtoJSON(t.metadata)
	header.Model.Config, _ = record.ProtoJSON(t.config)

	var rec *record.Writer
	switch f.record {
	case "":
	case "-":
		if rec, err = record.NewWriter(stdout, header); err != nil {
			return fmt.Errorf("writing the run to standard output: %w", err)
		}
	default:
		if rec, err = record.Create(f.record, header); err != nil {
			return usageError{fmt.Errorf("cannot write --record %s: %w", f.record, err)}
		}
	}
	summarizer := record.NewSummarizer(header)
	useTUI := !f.headless && f.record != "-" && isTerminal(stdout)

	// The run ends on a signal, --duration, the end of a schedule, or q.
	runCtx, endRun := context.WithCancel(ctx)
	defer endRun()
	if f.duration > 0 {
		time.AfterFunc(f.duration, endRun)
	}
	go func() { <-runCtx.Done(); drv.Stop(f.drain) }()

	var (
		driveErr error
		driveWG  sync.WaitGroup
	)
	driveWG.Add(1)
	go func() {
		defer driveWG.Done()
		driveErr = drv.Run(context.Background())
		endRun()
	}()

	frames := make(chan stats.Snapshot, 64)
	var recErr error
	emit := func(s stats.Snapshot) {
		summarizer.Add(s)
		if rec != nil && recErr == nil {
			recErr = rec.WriteSnapshot(s)
		}
		if useTUI {
			select {
			case frames <- s:
			default: // the dashboard is behind: it shows the next one
			}
		} else if f.record != "-" && s.Interval >= interval/2 {
			// The last tick of a run is often a sliver; its rates are
			// noise on a progress line (the summary has the whole run).
			progressLine(stderr, s)
		}
	}
	colDone := make(chan error, 1)
	go func() { colDone <- col.Run(context.Background(), emit); close(frames) }()

	var tuiErr error
	if useTUI {
		p := tea.NewProgram(tui.New(tui.Options{
			Snapshots: frames, Control: drv, Windows: col, FPS: f.fps,
			Header: tui.HeaderInfo{
				Server: f.url, Protocol: protocolName(f), Model: f.model, Version: f.modelVersion,
				MaxBatch: int(t.config.GetMaxBatchSize()), DynamicBatching: t.config.GetDynamicBatching() != nil,
				Simulated: t.simulated, SharedProcess: f.inProcessServer, Recording: f.record,
			},
		}), tea.WithContext(ctx), tea.WithOutput(stdout))
		// --duration, the end of a schedule or a signal also close the dashboard.
		go func() { <-runCtx.Done(); p.Quit() }()
		_, tuiErr = p.Run()
		endRun()
	}
	driveWG.Wait()
	if err := <-colDone; err != nil && tuiErr == nil {
		tuiErr = err
	}

	sum := summarizer.Summary()
	if rec != nil {
		if err := rec.Close(sum); err != nil && recErr == nil {
			recErr = err
		}
	}
	out := stdout
	if f.record == "-" {
		out = stderr
	}
	if f.jsonSummary {
		record.WriteJSON(out, sum)
	} else {
		record.WriteText(out, sum)
	}
	if f.csv != "" {
		if err := writeCSVFile(f.csv, sum); err != nil && recErr == nil {
			recErr = err
		}
	}
	switch {
	case driveErr != nil:
		return driveErr
	case recErr != nil:
		return fmt.Errorf("writing the run: %w", recErr)
	case tuiErr != nil && (errors.Is(tuiErr, tea.ErrProgramPanic) ||
		!errors.Is(tuiErr, tea.ErrProgramKilled) && !errors.Is(tuiErr, context.Canceled)):
		return fmt.Errorf("dashboard: %w", tuiErr)
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine is the headless mode's one line per tick.
func progressLine(w io.Writer, s stats.Snapshot) {
	lat := s.Tick.Latency
	if s.Tick.Scheduled != nil {
		lat = *s.Tick.Scheduled
	}
	line := fmt.Sprintf("%7.1fs  %s  %9.1f infer/s  p50 %s  p99 %s  errors %d",
		s.Elapsed.Seconds(), loadLabel(s.Load), s.Tick.InferPerS, ms(lat.P50), ms(lat.P99), s.Tick.Errors)
	if s.Server.Available {
		line += fmt.Sprintf("  queue %s  compute %s  batch %.1f", ms(s.Server.Queue), ms(s.Server.Compute()), s.Server.AvgBatch)
	}
	for _, g := range s.Metrics.GPUs {
		if g.HasUtilization {
			line += fmt.Sprintf("  gpu %.0f%%", 100*g.Utilization)
		}
	}
	fmt.Fprintln(w, line)
}

func loadLabel(l stats.Load) string {
	if l.Mode == "rate" {
		return fmt.Sprintf("rate %-7g", l.Rate)
	}
	return fmt.Sprintf("concurrency %-4d", l.Concurrency)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// startCPUProfile profiles tritontop's own CPU until the returned func runs:
// the way to see what the client spends its time on.
func startCPUProfile(path string) (func(), error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write --cpuprofile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}
