package session

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
)

// Dial is the session's own Builder: it dials Config.URL, reads
// Config.Model's metadata and config, and drives it closed loop at
// Config.Concurrency with random inputs of Config.BatchSize, measured
// with the server's statistics, the client's CPU, and the server's metrics
// when MetricsURL is set.
type Dial struct {
	// MetricsURL is the server's Prometheus metrics endpoint; empty reads
	// none.
	MetricsURL string
	// Shapes gives the shapes of inputs with variable dims, without the
	// batch dimension (perf_analyzer's --shape; see triton.ParseShapes).
	Shapes map[string][]int64
}

// Build connects and builds the run's parts.
func (d Dial) Build(ctx context.Context, cfg Config, stderr io.Writer) (*Parts, error) {
	client, err := triton.Dial(ctx, cfg.URL, triton.Options{Protocol: cfg.Protocol, ConnectTimeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	p, err := d.build(ctx, cfg, client)
	if err != nil {
		client.Close()
		return nil, err
	}
	return p, nil
}

// build builds the parts on client, which the parts' Release closes.
func (d Dial) build(ctx context.Context, cfg Config, client triton.Client) (*Parts, error) {
	srv, err := client.ServerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("server metadata from %s: %w", cfg.URL, err)
	}
	md, err := client.ModelMetadata(ctx, cfg.Model, cfg.ModelVersion)
	if err != nil {
		return nil, fmt.Errorf("metadata of model %q: %w", cfg.Model, err)
	}
	mc, err := client.ModelConfig(ctx, cfg.Model, cfg.ModelVersion)
	if err != nil {
		return nil, fmt.Errorf("config of model %q: %w", cfg.Model, err)
	}
	textsafe.Sanitize(srv)
	textsafe.Sanitize(md)
	textsafe.Sanitize(mc)
	batch := max(cfg.BatchSize, 1)
	reqs, err := triton.BuildRequests(md, mc, triton.InputOptions{Data: "random", BatchSize: batch, Shapes: d.Shapes})
	if err != nil {
		return nil, UsageError{err}
	}
	for _, r := range reqs {
		r.Version = cfg.ModelVersion
	}
	drv, err := driver.New(driver.Options{
		Client: client, Requests: reqs, BatchSize: batch,
		Load:    load.Target{Mode: load.Concurrency, Concurrency: max(cfg.Concurrency, 1)},
		Timeout: cfg.Timeout, PlanDrain: cfg.Drain,
		ResultMaxAge: driver.ResultMaxAgeFor(cfg.Tick),
	})
	if err != nil {
		return nil, UsageError{err}
	}
	opts := stats.CollectorOptions{
		Interval: cfg.Tick, Window: cmp(cfg.Window, cfg.Tick), Epoch: drv.Epoch(),
		Server:  stats.NewServerPoller(client, cfg.Model, cfg.ModelVersion),
		Results: drv.Results(), Control: drv,
	}
	if d.MetricsURL != "" {
		opts.Metrics = stats.NewMetricsScraper(d.MetricsURL, &http.Client{Timeout: 2 * cfg.Tick}, cfg.Model, cfg.ModelVersion)
	}
	// The client's CPU, when the host tells it, counted from the start.
	release, onStart := func() { client.Close() }, func() {}
	if sys, err := stats.NewSystemSampler(ctx); err == nil {
		opts.System = sys
		release = func() { sys.Close(); client.Close() }
		onStart = func() { sys.Sample(ctx, 0) }
	}
	h := record.Header{
		StartTime: time.Now(),
		Server: record.ServerInfo{URL: cfg.URL, Protocol: protocolName(cfg.Protocol),
			Simulated: slices.Contains(srv.GetExtensions(), sim.SimulatorExtension), InProcess: cfg.SharedProcess},
		Model:    record.ModelInfo{Name: cfg.Model, Version: cfg.ModelVersion},
		Load:     stats.LoadOf(drv.State()),
		Interval: cfg.Tick, Window: opts.Window,
	}
	h.Server.Metadata, _ = record.ProtoJSON(srv)
	h.Model.Metadata, _ = record.ProtoJSON(md)
	h.Model.Config, _ = record.ProtoJSON(mc)
	col := stats.NewCollector(opts)
	// Every change of load (a step, the start of the drain) starts a new
	// tick.
	drv.OnLoadChange(col.LoadChanged)
	return &Parts{
		Drivers: []*driver.Driver{drv}, Collector: col, Header: h,
		OnStart: onStart, Release: func(bool) { release() },
	}, nil
}

// cmp is d, or or when d is zero.
func cmp(d, or time.Duration) time.Duration {
	if d == 0 {
		return or
	}
	return d
}

// protocolName is how the run file names the transport.
func protocolName(p string) string {
	if strings.EqualFold(p, "http") {
		return "HTTP"
	}
	return "gRPC"
}
