package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/tui"
)

// runReplay is `tritontop replay FILE`: the dashboard fed from a run file.
// Without a terminal it prints the run's summary instead.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tritontop replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	speed := fs.Float64("speed", 1, "playback speed (2 = twice as fast, 0 = as fast as possible)")
	fps := fs.Int("fps", 10, "dashboard frames per second")
	jsonOut := fs.Bool("json", false, "without a terminal: print the summary as JSON")
	if err := fs.Parse(args); err != nil {
		return flagExit(err, stderr)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "tritontop: replay needs one run file: tritontop replay FILE")
		return exitUsage
	}
	if *speed < 0 {
		fmt.Fprintf(stderr, "tritontop: --speed %g cannot be negative\n", *speed)
		return exitUsage
	}
	run, err := record.ReadAll(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "tritontop: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	if run.Truncated {
		fmt.Fprintln(stderr, "tritontop: warning: the run file's last line was incomplete (the run was killed); replaying the complete ticks")
	}
	if len(run.Snapshots) == 0 {
		fmt.Fprintf(stderr, "tritontop: %s has no ticks to replay\n", fs.Arg(0))
		return exitFail
	}
	sum := report.Summarize(run.Header, run.Snapshots)
	if !isTerminal(stdout) {
		if *jsonOut {
			report.WriteJSON(stdout, sum)
		} else {
			report.WriteText(stdout, sum)
		}
		return exitOK
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rp := record.NewReplay(run.Snapshots, *speed)
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
	h := run.Header
	info := tui.HeaderInfo{
		Server: h.Server.URL, Protocol: h.Server.Protocol, Model: h.Model.Name, Version: h.Model.Version,
		Simulated: h.Server.Simulated, SharedProcess: h.Server.InProcess, Recording: "replay of " + fs.Arg(0),
	}
	if cfg, err := kserve.ParseConfigJSON(h.Model.Config); err == nil {
		info.MaxBatch = int(cfg.GetMaxBatchSize())
		info.DynamicBatching = cfg.GetDynamicBatching() != nil
	}
	p := tea.NewProgram(tui.New(tui.Options{Snapshots: frames, Replay: rp, Header: info, FPS: *fps}),
		tea.WithContext(ctx), tea.WithOutput(stdout))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "tritontop: dashboard: %s\n", oneLine(err.Error()))
		return exitFail
	}
	return exitOK
}
