package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/session"
)

// repeated is a flag.Value collecting every occurrence of a flag.
type repeated struct{ list *[]string }

func (r repeated) String() string {
	if r.list == nil {
		return ""
	}
	return strings.Join(*r.list, ",")
}

func (r repeated) Set(v string) error { *r.list = append(*r.list, v); return nil }

// mouseUsage is --mouse's help, for the load commands and replay alike.
const mouseUsage = "dashboard: a click focuses a pane, the wheel scrolls the charts' history (off by default, so the terminal's text selection works)"

// newLoadFlagSet is a load command's flags, bound to f's fields: their
// defaults are f's values.
func newLoadFlagSet(name string, f *session.Config, stderr io.Writer, refusal *error) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	registerServerFlags(fs, f)
	registerEndpointFlags(fs, &f.Endpoint)
	registerLoadFlags(fs, f)
	registerOutputFlags(fs, f)
	registerLLMFlags(fs, &f.LLM)
	registerMooncakeFlags(fs, &f.Mooncake)
	registerSLOFlags(fs, &f.SLO)
	registerWorkerFlags(fs, &f.Workers)
	registerSequenceFlags(fs, &f.Sequences)
	registerRetryFlags(fs, &f.Retry)
	registerSecretFlags(fs, &f.Secrets)
	registerPerfAnalyzerFlags(fs, f, stderr, refusal)
	registerGateFlags(fs, &f.Gates)
	registerShapeFlags(fs, &f.Shape)
	return fs
}

// registerServerFlags adds the flags of what is measured and how it is reached.
func registerServerFlags(fs *flag.FlagSet, f *session.Config) {
	fs.Var(repeated{&f.ModelArgs}, "m", "model name (required); repeat for several models, each NAME or NAME@concurrency=N or NAME@rate=R[,poisson]")
	fs.StringVar(&f.LoadFile, "load-file", f.LoadFile, "YAML or JSON file of the run's models, each with its load, batch, shapes and input data (instead of -m)")
	fs.StringVar(&f.ModelVersion, "x", f.ModelVersion, "model version (default: the server's choice)")
	fs.Var(repeated{&f.URLs}, "u", "server address (default localhost:8001 for gRPC, localhost:8000 for HTTP); repeat for replicas of the model")
	fs.StringVar(&f.Balance, "balance", f.Balance, "with several -u: least (the replica with the fewest requests in flight) or rr (round robin)")
	fs.StringVar(&f.Protocol, "i", f.Protocol, "protocol: grpc or http")
	fs.BoolVar(&f.Streaming, "streaming", f.Streaming, "use gRPC bidirectional streaming (ModelStreamInfer)")
	fs.IntVar(&f.Streams, "streams", f.Streams, "number of gRPC streams with --streaming (default: --connections)")
	fs.IntVar(&f.BatchSize, "b", f.BatchSize, "batch size of each request")
	fs.Var(repeated{&f.Shapes}, "shape", "shape of a variable-size input, NAME:d1,d2,... (repeatable)")
	fs.StringVar(&f.InputData, "input-data", f.InputData, "input data: random, zero, or a perf_analyzer JSON file")
	fs.IntVar(&f.Connections, "connections", f.Connections, "gRPC connections, used round-robin; with -i http, the most connections (default: one per request in flight)")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, "timeout of each try of a request: with --retries every retry gets its own, so a request may take (1 + retries) × this plus the backoffs (0: none)")
	fs.IntVar(&f.Retries, "retries", f.Retries, "retries of a failed request, with backoff (counted apart)")
	fs.Var(repeated{&f.Headers}, "H", "header (gRPC metadata or HTTP header) KEY:VALUE (repeatable)")
	fs.BoolVar(&f.SSL, "ssl", f.SSL, "use TLS")
	fs.StringVar(&f.SSLCA, "ssl-ca", f.SSLCA, "TLS: CA certificates file (implies --ssl)")
	fs.StringVar(&f.SSLCert, "ssl-cert", f.SSLCert, "TLS: client certificate file (implies --ssl)")
	fs.StringVar(&f.SSLKey, "ssl-key", f.SSLKey, "TLS: client private key file (implies --ssl)")
	fs.Var(repeated{&f.MetricsURLs}, "metrics-url", "Triton metrics endpoint (default: the server host, port 8002); with several -u, one per -u in the same order")
	fs.DurationVar(&f.ConnectTimeout, "connect-timeout", f.ConnectTimeout, "how long to wait for the server")
}

// registerLoadFlags adds the flags of the load and of its measurement.
func registerLoadFlags(fs *flag.FlagSet, f *session.Config) {
	fs.IntVar(&f.Concurrency, "concurrency", f.Concurrency, "closed loop: requests kept in flight (default 1 when no rate is given)")
	fs.StringVar(&f.ConcurrencyRange, "concurrency-range", f.ConcurrencyRange, "stepped closed loop, START[:END[:STEP]]: levels START, START+STEP, ... up to END (STEP 1 by default; 1:32:8 runs 1, 9, 17, 25, as perf_analyzer does), each measured until stable, or for --step-duration")
	fs.Float64Var(&f.RequestRate, "request-rate", f.RequestRate, "open loop: requests per second")
	fs.StringVar(&f.RequestRateRange, "request-rate-range", f.RequestRateRange, "stepped open loop, START[:END[:STEP]] requests per second")
	fs.StringVar(&f.Distribution, "request-distribution", f.Distribution, "open-loop inter-arrival times: constant or poisson")
	fs.IntVar(&f.MaxInflight, "max-inflight", f.MaxInflight, "open loop: cap on requests in flight, a safety net against a stalled server (0: no cap)")
	fs.DurationVar(&f.StepDuration, "step-duration", f.StepDuration, "give each step of a range this fixed length instead of measuring until stable")
	fs.DurationVar(&f.Tick, "tick", f.Tick, "how often statistics are taken and shown (at most the measurement interval)")
	fs.Float64Var(&f.StabilityPercent, "stability-percentage", f.StabilityPercent, "a step is stable when its last 3 windows differ by at most this % in throughput and latency")
	fs.Float64Var(&f.StabilityPercent, "s", f.StabilityPercent, "same as --stability-percentage")
	fs.IntVar(&f.MaxTrials, "max-trials", f.MaxTrials, "measurement windows a step may take to stabilize before it is reported unstable")
	fs.IntVar(&f.MaxTrials, "r", f.MaxTrials, "same as --max-trials")
	fs.Float64Var(&f.Percentile, "percentile", f.Percentile, "latency percentile that stability and --latency-threshold use (default: the average)")
	fs.Float64Var(&f.LatencyThreshold, "latency-threshold", f.LatencyThreshold, "SLO in ms: a range stops at the first level past it (0: none)")
	fs.Float64Var(&f.LatencyThreshold, "l", f.LatencyThreshold, "same as --latency-threshold")
	fs.BoolVar(&f.BinarySearch, "binary-search", f.BinarySearch, "with --latency-threshold: search the range for the highest level under it instead of scanning it")
	fs.BoolVar(&f.CollectMetrics, "collect-metrics", f.CollectMetrics, "accepted for perf_analyzer command lines: Triton's metrics are always read when the endpoint answers")
	fs.IntVar(&f.MeasurementIntervalMS, "measurement-interval", f.MeasurementIntervalMS, "measurement window of a range's steps in ms (ticks are --tick, or this if shorter)")
	fs.IntVar(&f.MeasurementIntervalMS, "p", f.MeasurementIntervalMS, "same as --measurement-interval")
	fs.DurationVar(&f.Window, "window", f.Window, "length of the \"last N s\" statistics window")
}

// registerOutputFlags adds the flags of the run's length, outputs and dashboard.
func registerOutputFlags(fs *flag.FlagSet, f *session.Config) {
	fs.BoolVar(&f.VerboseCSV, "verbose-csv", f.VerboseCSV, "with -f: add tritontop's columns after perf_analyzer's (a stateful model's sequence count, rate and latency); perf_analyzer's verbose columns are always written")
	fs.StringVar(&f.Record, "record", f.Record, "write the run to FILE (JSON lines; - for stdout)")
	fs.DurationVar(&f.Duration, "duration", f.Duration, "stop after this long (0: until q, SIGINT or the end of a range)")
	fs.StringVar(&f.CSV, "f", f.CSV, "write perf_analyzer-style CSV to FILE at the end")
	fs.BoolVar(&f.JSON, "json", f.JSON, "print the end-of-run summary as JSON")
	fs.BoolVar(&f.Markdown, "markdown", f.Markdown, "print the end-of-run summary as Markdown, for issues and wikis")
	fs.BoolVar(&f.Headless, "headless", f.Headless, "no dashboard even on a terminal")
	fs.DurationVar(&f.Drain, "drain", f.Drain, "on stop, wait this long for in-flight requests")
	fs.IntVar(&f.FPS, "fps", f.FPS, "dashboard frames per second")
	fs.BoolVar(&f.Mouse, "mouse", f.Mouse, mouseUsage)
	fs.StringVar(&f.CPUProfile, "cpuprofile", f.CPUProfile, "write a Go CPU profile of tritontop itself to FILE")
	fs.BoolVar(&f.Force, "force", f.Force, forceUsage)
}

// parseLoadFlags parses a load command's flags into a session.Config,
// from session's defaults; extra adds a command's own flags. What the
// settings mean, and whether they go together, session checks (New, Run).
func parseLoadFlags(name string, args []string, stderr io.Writer, extra ...func(*flag.FlagSet, *session.Config)) (*session.Config, error) {
	c := session.Defaults()
	c.Given = map[string]bool{}
	var refusal error
	fs := newLoadFlagSet(name, &c, stderr, &refusal)
	for _, add := range extra {
		add(fs, &c)
	}
	quietFlags(fs, stderr)
	if err := fs.Parse(args); err != nil {
		if refusal != nil {
			return nil, refusal // a refused perf_analyzer flag's own line
		}
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { c.Given[canonicalFlag(fl.Name)] = true })
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %s (flags go before it? see -h)", textsafe.Quote(fs.Arg(0)))
	}
	c.Args = args
	return &c, nil
}

// canonicalFlag is the long name of a flag given by a short alias, as
// session.Config.Given names it.
func canonicalFlag(name string) string {
	switch name {
	case "s":
		return "stability-percentage"
	case "r":
		return "max-trials"
	case "p":
		return "measurement-interval"
	case "l":
		return "latency-threshold"
	case "a":
		return "async"
	}
	return name
}

// forceUsage is --force's help, shared by the commands that write files.
const forceUsage = "overwrite output files that already exist (-f, --record, --cpuprofile, -o); without it an existing file is refused before the run"
