package session

import (
	"context"
	"fmt"
	"io"
	"math"

	tea "charm.land/bubbletea/v2"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/tui"
)

// ReplayConfig is a replay's settings (tritontop replay).
type ReplayConfig struct {
	// File is the run file.
	File string
	// Speed is the playback speed (2: twice as fast; 0: as fast as
	// possible); FPS and Mouse are the dashboard's.
	Speed float64
	FPS   int
	Mouse bool
	// CSV writes the run's perf_analyzer CSV ("-": standard output, in
	// place of the summary), VerboseCSV with tritontop's columns; JSON or
	// Markdown formats the summary; Force replaces an existing CSV file.
	CSV        string
	VerboseCSV bool
	JSON       bool
	Markdown   bool
	Force      bool
}

// Replay plays a run file again in the dashboard, on a terminal, until q or
// ctx's end; without a terminal, or with CSV, JSON or Markdown, it writes
// the run's CSV and summary instead, so that any record gives them later.
func Replay(ctx context.Context, c ReplayConfig, stdout, stderr io.Writer) error {
	switch {
	case !(c.Speed >= 0) || math.IsInf(c.Speed, 1):
		return usage.Errorf("--speed %g: give 0 (as fast as possible) or a positive finite speed", c.Speed)
	case c.JSON && c.Markdown:
		return usage.Errorf("choose --json or --markdown, not both")
	case c.FPS < 0 || c.FPS > maxFPS:
		return usage.Errorf("--fps %d is out of range: use 1 to %d", c.FPS, maxFPS)
	}
	if c.CSV != "" {
		if err := outfile.CheckNew("-f", c.CSV, c.Force); err != nil {
			return UsageError{Err: err}
		}
	}
	run, err := record.ReadAll(c.File)
	if err != nil {
		return UsageError{Err: err}
	}
	if run.Truncated {
		fmt.Fprintln(stderr, "tritontop: warning: the run file's last line was incomplete (the run was killed); replaying the complete ticks")
	}
	if len(run.Snapshots) == 0 {
		return fmt.Errorf("%s has no ticks to replay", c.File)
	}
	sum := report.SummarizeRun(run)
	if c.CSV != "" || c.JSON || c.Markdown || !isTerminal(stdout) {
		return exportRun(sum, c.CSV, report.CSVOptions{Verbose: c.VerboseCSV}, c.JSON, c.Markdown, c.Force, stdout)
	}
	return replayDashboard(ctx, run, c, stdout)
}

// replayDashboard replays run in the dashboard until q or ctx's end.
func replayDashboard(ctx context.Context, run *record.Run, c ReplayConfig, stdout io.Writer) error {
	fps, speed, mouse, file := c.FPS, c.Speed, c.Mouse, c.File
	if fps == 0 {
		fps = Defaults().FPS
	}
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
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
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
			return usage.Error{Err: fmt.Errorf("-f - writes one CSV, and this run has %d models: give -f FILE.csv (FILE.MODEL.csv for each)", n)}
		}
		return report.WriteCSVSteps(stdout, sum.Steps, o)
	default:
		if err := writeCSVFile(csvPath, sum, o, force); err != nil {
			return usage.Error{Err: err}
		}
	}
	return report.WriteSummaryAs(stdout, sum, jsonOut, markdown)
}
