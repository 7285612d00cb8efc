// Package session runs one load run against a Triton server: it connects,
// starts the drivers and the collector, fans the collector's snapshots out
// to the run's sinks (run file, summary, dashboard or progress line, a
// stepped run's stepper), waits for the run to end, and finishes it: the
// summary, the plan, the verdict.
//
// A Session goes through its phases in order, one method each:
//
//	s, err := session.New(cfg, builder, stdout, stderr) // cfg.Validate
//	defer s.Close()      // releases the parts, whatever happened
//	err = s.Connect(ctx) // the parts, the run file, the sinks
//	err = s.Start(ctx)   // the first request
//	s.Wait(ctx)          // the end of the run
//	err = s.Finish(ctx)  // summary, plan, verdict
//
// Config holds the run's own settings as plain values; a Builder makes
// what the run measures (the server, its drivers and collector). With no
// Builder, the session dials Config.URL and drives Config.Model itself,
// which is all a program or a test needs for a plain run.
package session

import (
	"errors"
	"time"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/stats"
)

// Limits of a run's settings; a value past one is refused before anything
// runs.
const (
	MinTick     = 10 * time.Millisecond
	MaxTick     = time.Hour
	MaxWindow   = 24 * time.Hour
	MaxDuration = 30 * 24 * time.Hour
	MaxDrain    = time.Hour
	MaxTimeout  = time.Hour
)

// Config is one run's settings, as plain values: every flag of a load run
// of the command line has its field here (cmd/tritontop only parses them
// into one), and a program or a test fills one in directly, starting from
// Defaults. Names follow perf_analyzer's flags where it has one for the same
// thing; errors about a field name its flag, as a user of the command line
// reads them.
//
// New checks a Config once (check.go: the checks of one place) and fills in
// what follows from it: the servers from URLs, the models from ModelArgs or
// LoadFile, the parsed ranges, shapes, thresholds and SLOs. A field left at
// its zero value where zero is not allowed takes its default.
type Config struct {
	// What is measured.

	// Model is the model's name. ModelArgs are the command line's -m
	// values (NAME or NAME@LOAD; several make a run over several models,
	// and Model becomes their names, comma-separated); LoadFile is a YAML
	// or JSON file of the run's models, in place of ModelArgs.
	Model        string
	ModelVersion string
	ModelArgs    []string
	LoadFile     string
	// URL is the server (host:port); URLs are the command line's -u, one or
	// several replicas of the model (then URL is the first), Balance how
	// requests spread over them (least or rr). MetricsURLs are Triton's
	// metrics endpoints, one per server; none reads each server's host at
	// port 8002.
	URL         string
	URLs        []string
	Balance     string
	MetricsURLs []string
	// Protocol is grpc or http; Streaming sends over gRPC bidirectional
	// streams (Streams of them; 0: Connections); Endpoint chooses an HTTP
	// API for an LLM's text.
	Protocol  string
	Streaming bool
	Streams   int
	Endpoint  EndpointConfig
	// BatchSize is each request's batch; Shapes the shapes of variable
	// inputs (NAME:d1,d2); InputData random, zero or a perf_analyzer JSON
	// file.
	BatchSize int
	Shapes    []string
	InputData string

	// The load.

	// Concurrency keeps this many requests in flight (closed loop);
	// RequestRate sends this many a second (open loop, Distribution
	// constant or poisson, at most MaxInflight in flight; 0 no cap).
	// ConcurrencyRange and RequestRateRange (START[:END[:STEP]]) step
	// the load, each level measured until stable (or for StepDuration).
	Concurrency      int
	ConcurrencyRange string
	RequestRate      float64
	RequestRateRange string
	Distribution     string
	MaxInflight      int
	StepDuration     time.Duration
	// Shape shapes the load over time: stages, a trace, intervals.
	Shape ShapeConfig
	// Sequences are a stateful model's sequence settings.
	Sequences SequenceConfig
	// LLM and Mooncake are the request parameters, prompt lengths and
	// trace blocks of LLMs.
	LLM      LLMConfig
	Mooncake MooncakeConfig
	// SLO are the objectives (--slo): a plan's levels must meet them, and
	// a decoupled model's goodput counts the requests that met them all.
	SLO SLOConfig

	// Measuring.

	// Tick is how often statistics are taken and shown; Window the span of
	// the sliding "last N s" statistics.
	Tick   time.Duration
	Window time.Duration
	// MeasurementIntervalMS is a range's measurement window in ms;
	// StabilityPercent, MaxTrials, Percentile, LatencyThreshold (ms) and
	// BinarySearch are perf_analyzer's stability and SLO-search settings.
	MeasurementIntervalMS int
	StabilityPercent      float64
	MaxTrials             int
	Percentile            float64
	LatencyThreshold      float64
	BinarySearch          bool
	// CollectMetrics is accepted for perf_analyzer's command lines:
	// Triton's metrics are always read.
	CollectMetrics bool
	// BLSComposingModels are the models a BLS model calls, in
	// perf_analyzer's --bls-composing-models syntax (NAME or NAME:VERSION,
	// comma separated; each entry may hold several): their statistics are
	// read with the model's, as an ensemble's steps are (found from its
	// config), and its time is decomposed over them. Only with one model.
	BLSComposingModels []string
	// PerfAnalyzer holds perf_analyzer's flags that have no other field:
	// --sync, count windows, shared memory, the profile export.
	PerfAnalyzer PerfAnalyzerConfig

	// The connection.

	// Connections are gRPC connections used round robin (with HTTP the
	// most connections; 0: one per request in flight). Timeout bounds each
	// try of a request, Retries retries a failed one (Retry: backoff and
	// codes), ConnectTimeout waits for the server.
	Connections    int
	Timeout        time.Duration
	Retries        int
	Retry          RetryConfig
	ConnectTimeout time.Duration
	// Headers are KEY:VALUE headers (gRPC metadata or HTTP); Secrets says
	// which of them a run file may record.
	Headers []string
	Secrets SecretsConfig
	// SSL turns on TLS; SSLCA, SSLCert and SSLKey are its PEM files (any of
	// them turns it on).
	SSL     bool
	SSLCA   string
	SSLCert string
	SSLKey  string

	// The run.

	// Duration ends the run after it (0: until stopped, a range or a
	// schedule ends it); Drain is how long requests in flight may finish
	// at the end.
	Duration time.Duration
	Drain    time.Duration
	// Record is the run file ("-": standard output); CSV perf_analyzer's
	// CSV file (VerboseCSV adds tritontop's columns); JSON or Markdown
	// formats the summary; Force replaces existing output files;
	// CPUProfile writes a Go CPU profile of the run.
	Record     string
	CSV        string
	VerboseCSV bool
	JSON       bool
	Markdown   bool
	Force      bool
	CPUProfile string
	// Headless shows a progress line on standard error instead of the
	// dashboard (which runs only on a terminal); FPS and Mouse are the
	// dashboard's.
	Headless bool
	FPS      int
	Mouse    bool
	// Gates make the run a CI gate: thresholds, JUnit, repeats.
	Gates GatesConfig
	// Workers make the run one worker of a load shared by processes, and
	// serve its statistics for Prometheus.
	Workers WorkersConfig
	// Plan makes the run a capacity plan (tritontop plan); nil otherwise.
	Plan *PlanConfig
	// Demo starts the simulator in this process with its demo models and
	// runs against it (tritontop demo, plan --demo) unless URLs name a
	// server; nil otherwise.
	Demo *DemoConfig
	// SharedProcess says the server shares this process (the demo does),
	// so the process's CPU is not the client's alone; DemoGPU says how the
	// demo sized its simulated GPU.
	SharedProcess bool
	DemoGPU       string
	// Args are the command line, kept (redacted) in the run file's header.
	Args []string

	// Given names the command line's flags that were given, for the
	// settings whose meaning depends on it (a flag given as 0 is refused
	// rather than taken as its default). A program may leave it nil: a
	// non-zero value then counts as given.
	Given map[string]bool

	// What check derived.
	models     []modelSpec
	metricsURL string
	bls        []stats.Composing
	prepared   bool
}

// defaultMaxInflight caps open-loop requests in flight unless told
// otherwise: a stalled server at a high rate would otherwise pile up a
// goroutine and a call per scheduled request. Sends the cap holds back are
// counted late, so the dashboard shows it.
const defaultMaxInflight = 4096

// UsageError is a run refused for its settings or its files (a run file
// that cannot be written): the command line's exit code 2.
type UsageError = usage.Error

// ErrNotStarted is a run that ended before its load started (during a wait
// for its start): it kept no run file.
var ErrNotStarted = errors.New("the load never started, so no run file was kept")

// Version is tritontop's version, written into run files.
const Version = "0.1.0"
