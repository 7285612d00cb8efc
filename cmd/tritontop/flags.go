package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// defaultMaxInflight caps open-loop requests in flight unless told
// otherwise: a stalled server at a high rate would otherwise pile up a
// goroutine and a call per scheduled request. Sends the cap holds back are
// counted late, so the dashboard shows it.
const defaultMaxInflight = 4096

// loadFlags are the flags of a load run (live, headless or demo). Names
// follow perf_analyzer where it has a flag for the same thing.
type Config struct {
	// Model is the Model of a run of one Model, or every Model of a run
	// over several, comma-separated; models are the models as given (-m
	// or --load-file), several() when there is more than one.
	Model        string
	ModelVersion string
	ModelArgs    []string
	LoadFile     string
	models       []modelSpec
	URL          string
	Protocol     string
	Streaming    bool
	Streams      int
	Endpoint     EndpointConfig
	BatchSize    int
	Shapes       []string
	InputData    string

	Concurrency      int
	ConcurrencyRange string
	RequestRate      float64
	RequestRateRange string
	Distribution     string
	MaxInflight      int
	StepDuration     time.Duration
	Tick             time.Duration
	// perf_analyzer's measurement and search flags.
	StabilityPercent      float64
	MaxTrials             int
	Percentile            float64
	LatencyThreshold      float64 // ms
	BinarySearch          bool
	CollectMetrics        bool
	VerboseCSV            bool
	Connections           int
	Timeout               time.Duration
	Retries               int
	Headers               []string
	SSLCA                 string
	SSLCert               string
	SSLKey                string
	SSL                   bool
	MeasurementIntervalMS int
	Window                time.Duration
	metricsURL            string
	Record                string
	Duration              time.Duration
	CSV                   string
	JSON                  bool
	Markdown              bool
	Headless              bool
	Drain                 time.Duration
	ConnectTimeout        time.Duration
	FPS                   int
	Mouse                 bool
	CPUProfile            string
	LLM                   LLMConfig
	Mooncake              MooncakeConfig
	SLO                   SLOConfig
	Workers               WorkersConfig // --workers, --start-at, --prometheus-addr
	Sequences             SequenceConfig
	Retry                 RetryConfig
	Secrets               SecretsConfig
	Output                OutputConfig
	PerfAnalyzer          PerfAnalyzerConfig // perf_analyzer's flags (paflags.go)
	Gates                 GatesConfig
	Shape                 ShapeConfig

	// inProcessServer is set by demo: the simulator shares this process,
	// so the process's CPU is not the client's alone.
	SharedProcess bool
	// demoGPU says how the demo sized its simulated GPU; empty otherwise.
	DemoGPU string
	// plan is set by tritontop plan: the run is a capacity search.
	Plan *PlanConfig

	// urls are every -u of a run over several replicas of the model (url
	// is the first); nil with one server. balance spreads requests over
	// them, metricsURLs are their --metrics-url, in the same order.
	URLs        []string
	Balance     string
	MetricsURLs []string

	Given map[string]bool // flags given on the command line
}

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

func newLoadFlagSet(name string, f *Config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(repeated{&f.ModelArgs}, "m", "model name (required); repeat for several models, each NAME or NAME@concurrency=N or NAME@rate=R[,poisson]")
	fs.StringVar(&f.LoadFile, "load-file", "", "YAML or JSON file of the run's models, each with its load, batch, shapes and input data (instead of -m)")
	fs.StringVar(&f.ModelVersion, "x", "", "model version (default: the server's choice)")
	fs.Var(repeated{&f.URLs}, "u", "server address (default localhost:8001 for gRPC, localhost:8000 for HTTP); repeat for replicas of the model")
	fs.StringVar(&f.Balance, "balance", "least", "with several -u: least (the replica with the fewest requests in flight) or rr (round robin)")
	fs.StringVar(&f.Protocol, "i", "grpc", "protocol: grpc or http")
	fs.BoolVar(&f.Streaming, "streaming", false, "use gRPC bidirectional streaming (ModelStreamInfer)")
	fs.IntVar(&f.Streams, "streams", 0, "number of gRPC streams with --streaming (default: --connections)")
	registerEndpointFlags(fs, &f.Endpoint)
	fs.IntVar(&f.BatchSize, "b", 1, "batch size of each request")
	fs.Var(repeated{&f.Shapes}, "shape", "shape of a variable-size input, NAME:d1,d2,... (repeatable)")
	fs.StringVar(&f.InputData, "input-data", "random", "input data: random, zero, or a perf_analyzer JSON file")
	fs.IntVar(&f.Concurrency, "concurrency", 0, "closed loop: requests kept in flight (default 1 when no rate is given)")
	fs.StringVar(&f.ConcurrencyRange, "concurrency-range", "", "stepped closed loop, START[:END[:STEP]]: levels START, START+STEP, ... up to END (STEP 1 by default; 1:32:8 runs 1, 9, 17, 25, as perf_analyzer does), each measured until stable, or for --step-duration")
	fs.Float64Var(&f.RequestRate, "request-rate", 0, "open loop: requests per second")
	fs.StringVar(&f.RequestRateRange, "request-rate-range", "", "stepped open loop, START[:END[:STEP]] requests per second")
	fs.StringVar(&f.Distribution, "request-distribution", "constant", "open-loop inter-arrival times: constant or poisson")
	fs.IntVar(&f.MaxInflight, "max-inflight", defaultMaxInflight, "open loop: cap on requests in flight, a safety net against a stalled server (0: no cap)")
	fs.DurationVar(&f.StepDuration, "step-duration", 0, "give each step of a range this fixed length instead of measuring until stable")
	fs.DurationVar(&f.Tick, "tick", time.Second, "how often statistics are taken and shown (at most the measurement interval)")
	fs.Float64Var(&f.StabilityPercent, "stability-percentage", 10, "a step is stable when its last 3 windows differ by at most this % in throughput and latency")
	fs.Float64Var(&f.StabilityPercent, "s", 10, "same as --stability-percentage")
	fs.IntVar(&f.MaxTrials, "max-trials", 10, "measurement windows a step may take to stabilize before it is reported unstable")
	fs.IntVar(&f.MaxTrials, "r", 10, "same as --max-trials")
	fs.Float64Var(&f.Percentile, "percentile", 0, "latency percentile that stability and --latency-threshold use (default: the average)")
	fs.Float64Var(&f.LatencyThreshold, "latency-threshold", 0, "SLO in ms: a range stops at the first level past it (0: none)")
	fs.Float64Var(&f.LatencyThreshold, "l", 0, "same as --latency-threshold")
	fs.BoolVar(&f.BinarySearch, "binary-search", false, "with --latency-threshold: search the range for the highest level under it instead of scanning it")
	fs.BoolVar(&f.CollectMetrics, "collect-metrics", false, "accepted for perf_analyzer command lines: Triton's metrics are always read when the endpoint answers")
	fs.BoolVar(&f.VerboseCSV, "verbose-csv", false, "with -f: add tritontop's columns after perf_analyzer's (a stateful model's sequence count, rate and latency); perf_analyzer's verbose columns are always written")
	fs.IntVar(&f.Connections, "connections", 1, "gRPC connections, used round-robin; with -i http, the most connections (default: one per request in flight)")
	fs.DurationVar(&f.Timeout, "timeout", 0, "timeout of each try of a request: with --retries every retry gets its own, so a request may take (1 + retries) × this plus the backoffs (0: none)")
	fs.IntVar(&f.Retries, "retries", 0, "retries of a failed request, with backoff (counted apart)")
	fs.Var(repeated{&f.Headers}, "H", "header (gRPC metadata or HTTP header) KEY:VALUE (repeatable)")
	fs.BoolVar(&f.SSL, "ssl", false, "use TLS")
	fs.StringVar(&f.SSLCA, "ssl-ca", "", "TLS: CA certificates file (implies --ssl)")
	fs.StringVar(&f.SSLCert, "ssl-cert", "", "TLS: client certificate file (implies --ssl)")
	fs.StringVar(&f.SSLKey, "ssl-key", "", "TLS: client private key file (implies --ssl)")
	fs.IntVar(&f.MeasurementIntervalMS, "measurement-interval", 5000, "measurement window of a range's steps in ms (ticks are --tick, or this if shorter)")
	fs.IntVar(&f.MeasurementIntervalMS, "p", 5000, "same as --measurement-interval")
	fs.DurationVar(&f.Window, "window", 10*time.Second, "length of the \"last N s\" statistics window")
	fs.Var(repeated{&f.MetricsURLs}, "metrics-url", "Triton metrics endpoint (default: the server host, port 8002); with several -u, one per -u in the same order")
	fs.StringVar(&f.Record, "record", "", "write the run to FILE (JSON lines; - for stdout)")
	fs.DurationVar(&f.Duration, "duration", 0, "stop after this long (0: until q, SIGINT or the end of a range)")
	fs.StringVar(&f.CSV, "f", "", "write perf_analyzer-style CSV to FILE at the end")
	fs.BoolVar(&f.JSON, "json", false, "print the end-of-run summary as JSON")
	fs.BoolVar(&f.Markdown, "markdown", false, "print the end-of-run summary as Markdown, for issues and wikis")
	fs.BoolVar(&f.Headless, "headless", false, "no dashboard even on a terminal")
	fs.DurationVar(&f.Drain, "drain", 5*time.Second, "on stop, wait this long for in-flight requests")
	fs.DurationVar(&f.ConnectTimeout, "connect-timeout", 5*time.Second, "how long to wait for the server")
	fs.IntVar(&f.FPS, "fps", 10, "dashboard frames per second")
	fs.BoolVar(&f.Mouse, "mouse", false, mouseUsage)
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a Go CPU profile of tritontop itself to FILE")
	registerLLMFlags(fs, &f.LLM)
	registerMooncakeFlags(fs, &f.Mooncake)
	registerSLOFlags(fs, &f.SLO)
	registerWorkerFlags(fs, &f.Workers)
	registerSequenceFlags(fs, &f.Sequences)
	registerRetryFlags(fs, &f.Retry)
	registerSecretFlags(fs, &f.Secrets)
	registerOutputFlags(fs, &f.Output)
	registerPerfAnalyzerFlags(fs, f, stderr)
	registerGateFlags(fs, &f.Gates)
	registerShapeFlags(fs, &f.Shape)
	return fs
}

// parseLoadFlags parses and validates a load run's flags. Every error is one
// line that says what to do.
func parseLoadFlags(name string, args []string, stderr io.Writer, needModel bool, extra ...func(*flag.FlagSet)) (*Config, error) {
	f := &Config{Given: map[string]bool{}}
	fs := newLoadFlagSet(name, f, stderr)
	for _, add := range extra {
		add(fs)
	}
	quietFlags(fs, stderr)
	if err := fs.Parse(args); err != nil {
		return nil, f.PerfAnalyzer.parseError(err)
	}
	fs.Visit(func(fl *flag.Flag) { f.Given[fl.Name] = true })
	if err := checkSecrets(f); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags go before it? see -h)", fs.Arg(0))
	}
	if err := checkShapeFlags(f); err != nil {
		return nil, err
	}
	if err := takeModels(f); err != nil {
		return nil, err
	}
	if needModel && f.Model == "" {
		return nil, errors.New("no model given: use -m MODEL (or `tritontop demo` to try the simulator)")
	}
	switch f.Protocol {
	case "grpc", "http":
	default:
		return nil, fmt.Errorf("unknown protocol %q for -i: use grpc or http", f.Protocol)
	}
	if err := f.Endpoint.check(f); err != nil {
		return nil, err
	}
	if f.Streaming && f.Protocol != "grpc" && !f.Endpoint.text() {
		return nil, errors.New("--streaming needs gRPC: drop -i http (or stream an LLM's text with --endpoint generate_stream, chat or completions)")
	}
	if err := takeServers(f); err != nil {
		return nil, err
	}
	switch f.Distribution {
	case "constant", "poisson":
	default:
		return nil, fmt.Errorf("unknown --request-distribution %q: use constant or poisson", f.Distribution)
	}
	if err := checkNumbers(f); err != nil {
		return nil, err
	}
	if err := f.PerfAnalyzer.check(f); err != nil {
		return nil, err
	}
	// A tick never spans two measurement windows.
	f.Tick = min(f.Tick, time.Duration(f.MeasurementIntervalMS)*time.Millisecond)
	if err := checkCombinations(f); err != nil {
		return nil, err
	}
	if err := checkAddresses(f); err != nil {
		return nil, err
	}
	if err := checkRanges(f); err != nil {
		return nil, err
	}
	if err := checkTLSFlags(f); err != nil {
		return nil, err
	}
	if err := checkOutputs(f); err != nil {
		return nil, err
	}
	return f, nil
}

// checkTLSFlags turns TLS on when a TLS file is given, and checks the
// files: a certificate with its key, each readable.
func checkTLSFlags(f *Config) error {
	if f.SSLCA != "" || f.SSLCert != "" || f.SSLKey != "" {
		f.SSL = true
	}
	if (f.SSLCert == "") != (f.SSLKey == "") {
		return errors.New("--ssl-cert and --ssl-key go together: give both or neither")
	}
	for _, tf := range []struct{ flag, path string }{{"--ssl-ca", f.SSLCA}, {"--ssl-cert", f.SSLCert}, {"--ssl-key", f.SSLKey}} {
		if tf.path == "" {
			continue
		}
		if _, err := os.Stat(tf.path); err != nil {
			return fmt.Errorf("cannot read %s %s: %v", tf.flag, tf.path, errors.Unwrap(err))
		}
	}
	return nil
}

// parseRange reads perf_analyzer's START[:END[:STEP]].
func parseRange(flagName, s string) (start, end, step float64, err error) {
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, 0, 0, fmt.Errorf("bad %s %q: use START[:END[:STEP]]", flagName, s)
	}
	vals := []float64{0, 0, 1}
	for i, p := range parts {
		v, perr := strconv.ParseFloat(p, 64)
		if perr != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, 0, 0, fmt.Errorf("bad %s %q: %q is not a positive number", flagName, s, p)
		}
		vals[i] = v
	}
	start, end, step = vals[0], vals[1], vals[2]
	if len(parts) == 1 {
		end = start
	}
	if end < start {
		return 0, 0, 0, fmt.Errorf("bad %s %q: END is below START", flagName, s)
	}
	if (end-start)/step > 1000 {
		return 0, 0, 0, fmt.Errorf("bad %s %q: more than 1000 steps", flagName, s)
	}
	return start, end, step, nil
}

// headerMap turns -H KEY:VALUE flags into a map.
func headerMap(hs []string) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		k, v, _ := strings.Cut(h, ":")
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m
}

// outputFlags hold --force.
type OutputConfig struct {
	Force bool
}

// forceUsage is --force's help, shared by the commands that write files.
const forceUsage = "overwrite output files that already exist (-f, --record, --cpuprofile, -o); without it an existing file is refused before the run"

// registerOutputFlags adds --force to fs.
func registerOutputFlags(fs *flag.FlagSet, f *OutputConfig) {
	fs.BoolVar(&f.Force, "force", false, forceUsage)
}
