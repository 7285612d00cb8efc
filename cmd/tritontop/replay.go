package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os/signal"

	tea "charm.land/bubbletea/v2"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/tui"
)

// runReplay is `tritontop replay FILE`: the dashboard fed from a run file.
// Without a terminal, or with -f, --json or --markdown, it writes the run's
// CSV and summary instead, so any record gives them later.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tritontop replay", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: tritontop replay FILE [--speed X] [--mouse] [-f out.csv [--verbose-csv]] [--json | --markdown]\n\n"+
			"Replays a run file in the dashboard; flags may come before or after FILE.\n"+
			"Without a terminal, or with -f, --json or --markdown, it prints the run's summary instead.\n\n")
		fs.PrintDefaults()
	}
	speed := fs.Float64("speed", 1, "playback speed (2 = twice as fast, 0 = as fast as possible)")
	fps := fs.Int("fps", 10, "dashboard frames per second")
	mouse := fs.Bool("mouse", false, mouseUsage)
	csvPath := fs.String("f", "", "write the run's perf_analyzer-style CSV to FILE (- for standard output, instead of the summary)")
	verboseCSV := fs.Bool("verbose-csv", false, "with -f: add tritontop's columns after perf_analyzer's (a stateful model's sequence count, rate and latency)")
	jsonOut := fs.Bool("json", false, "print the summary as JSON instead of the dashboard")
	markdown := fs.Bool("markdown", false, "print the summary as Markdown instead of the dashboard")
	force := fs.Bool("force", false, forceUsage)
	quietFlags(fs, stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit("tritontop replay", err, stderr)
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "tritontop: replay needs one run file: tritontop replay FILE")
		return exitUsage
	}
	if !(*speed >= 0) || math.IsInf(*speed, 1) {
		fmt.Fprintf(stderr, "tritontop: --speed %g: give 0 (as fast as possible) or a positive finite speed\n", *speed)
		return exitUsage
	}
	if *csvPath != "" {
		if err := outfile.CheckNew("-f", *csvPath, *force); err != nil {
			fmt.Fprintf(stderr, "tritontop: %v\n", err)
			return exitUsage
		}
	}
	if *jsonOut && *markdown {
		fmt.Fprintln(stderr, "tritontop: choose --json or --markdown, not both")
		return exitUsage
	}
	file := files[0]
	run, err := record.ReadAll(file)
	if err != nil {
		fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	if run.Truncated {
		fmt.Fprintln(stderr, "tritontop: warning: the run file's last line was incomplete (the run was killed); replaying the complete ticks")
	}
	if len(run.Snapshots) == 0 {
		fmt.Fprintf(stderr, "tritontop: %s has no ticks to replay\n", file)
		return exitFail
	}
	sum := report.SummarizeRun(run)
	if *csvPath != "" || *jsonOut || *markdown || !isTerminal(stdout) {
		return exitFor(exportRun(sum, *csvPath, report.CSVOptions{Verbose: *verboseCSV}, *jsonOut, *markdown, *force, stdout), stderr)
	}

	return replayDashboard(run, file, *speed, *fps, *mouse, stdout, stderr)
}

// replayDashboard replays run in the dashboard at speed until q or a
// signal.
func replayDashboard(run *record.Run, file string, speed float64, fps int, mouse bool, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	rp := record.NewReplay(run.Snapshots, speed)
	rp.HoldAtEnd(true)
	frames := make(chan stats.Snapshot, 64)
	go func() {
		rp.Run(ctx, func(s stats.Snapshot) {
			select {
			case frames <- s:
			case <-ctx.Done():
			}
		})
	}()
	info, models := replayHeader(run, file)
	p := tea.NewProgram(tui.New(tui.Options{Snapshots: frames, Replay: rp, Header: info, FPS: fps, Models: models, Mouse: mouse}),
		tea.WithContext(ctx), tea.WithOutput(stdout))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "tritontop: dashboard: %s\n", oneLine(err.Error()))
		return exitFail
	}
	return exitOK
}

// replayHeader is what the replay's dashboard says of the run, from its
// header.
func replayHeader(run *record.Run, file string) (tui.HeaderInfo, []tui.ModelControl) {
	h := run.Header
	info := tui.HeaderInfo{
		Server: h.Server.URL, Protocol: h.Server.Protocol, Model: h.Model.Name, Version: h.Model.Version,
		Simulated: h.Server.Simulated, SharedProcess: h.Server.InProcess, Recording: "replay of " + file,
	}
	if len(h.Server.Replicas) > 1 {
		info.Server = serverLabel(h.Server.Replicas, h.Server.Balance)
	}
	if cfg, err := kserve.ParseConfigJSON(h.Model.Config); err == nil {
		info.MaxBatch = int(cfg.GetMaxBatchSize())
		info.DynamicBatching = cfg.GetDynamicBatching() != nil
		info.Decoupled = cfg.GetModelTransactionPolicy().GetDecoupled()
	}
	var models []tui.ModelControl
	for _, m := range h.Models {
		cfg, _ := kserve.ParseConfigJSON(m.Config)
		models = append(models, modelControl(m.Name, m.Version, cfg))
	}
	return info, models
}

// exportRun writes a replayed run's CSV (-f, with the options o) and its
// summary; a CSV sent to standard output takes the summary's place.
func exportRun(sum record.Summary, csvPath string, o report.CSVOptions, jsonOut, markdown, force bool, stdout io.Writer) error {
	switch csvPath {
	case "":
	case "-":
		if n := len(sum.Models); n > 0 {
			return usageError{fmt.Errorf("-f - writes one CSV, and this run has %d models: give -f FILE.csv (FILE.MODEL.csv for each)", n)}
		}
		return report.WriteCSVSteps(stdout, sum.Steps, o)
	default:
		if err := writeCSVFile(csvPath, sum, o, force); err != nil {
			return usageError{err}
		}
	}
	return writeSummary(stdout, sum, jsonOut, markdown)
}
