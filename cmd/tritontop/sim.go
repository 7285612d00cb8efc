package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/sim"
)

// simOptions are the flags of `tritontop sim`, named after tritonserver's
// where it has one.
type simOptions struct {
	host                                  string
	grpcAddress, httpAddress, metricsAddr string
	grpcPort, httpPort, metricsPort       int
	repository                            string
	modelControlMode                      string
	loadModels                            []string
	gpus                                  int
	errorRate, spikeRate                  float64
	spikeDelay, stallAfter, stallFor      time.Duration
	slowStart                             time.Duration
	metricsIntervalMS                     int
	seed                                  int64
	cpuProfile                            string
	force                                 bool
	httpMaxInputSize                      int64
	grpcMaxInputSize                      int64
	memoryBudget                          sim.MemoryBudgetFlag
	allowClientShm                        bool

	grpcUseSSL, grpcUseSSLMutual             bool
	grpcServerCert, grpcServerKey, grpcRoots string

	slowdown float64
}

const simUsage = `Usage: tritontop sim [flags]

Runs a simulated Triton Inference Server: Triton's gRPC, HTTP/REST and
metrics endpoints in front of simulated models, a dynamic batcher and
simulated GPUs. Stops on Ctrl-C (SIGINT) or SIGTERM.

Models whose instances are on the same simulated GPU share it: n executions
running at once each take 1 + (n-1)*(1-overlap) times as long as alone
(overlap 0.2 unless a GPU of the repository file sets "overlap", 0..1), so
one model's load raises another's compute and queue times and the GPU's
utilization. KIND_CPU instances share nothing.

Flags:
`

func newSimFlags(o *simOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("tritontop sim", flag.ContinueOnError)
	fs.StringVar(&o.host, "host", "127.0.0.1", "address all three servers bind to unless overridden")
	fs.StringVar(&o.grpcAddress, "grpc-address", "", "address the gRPC server binds to (default: --host)")
	fs.StringVar(&o.httpAddress, "http-address", "", "address the HTTP server binds to (default: --host)")
	fs.StringVar(&o.metricsAddr, "metrics-address", "", "address the metrics server binds to (default: --http-address)")
	fs.IntVar(&o.grpcPort, "grpc-port", 8001, "gRPC port (0 picks a free port)")
	fs.IntVar(&o.httpPort, "http-port", 8000, "HTTP port (0 picks a free port)")
	fs.IntVar(&o.metricsPort, "metrics-port", 8002, "metrics port (0 picks a free port)")
	fs.StringVar(&o.repository, "model-repository", "", `model repository: a Triton model repository (a directory of config.pbtxt models), a description (JSON file), or a built-in set: "demo" (the default) or "examples" (Triton's example model repository); write ./NAME for a file named like a built-in set`)
	fs.StringVar(&o.modelControlMode, "model-control-mode", "none", `none or poll: every model loads at start and load/unload requests are refused; explicit: only the --load-model models load at start, and clients load and unload models`)
	fs.Func("load-model", `model to load at start with --model-control-mode=explicit (repeatable; "*" loads all)`, func(v string) error {
		if v == "" {
			return errors.New("empty model name")
		}
		o.loadModels = append(o.loadModels, v)
		return nil
	})
	fs.BoolVar(&o.allowClientShm, "allow-client-shm", false, "allow clients to register and unregister shared-memory regions, as tritonserver's --allow-client-shm=true; off, they get UNIMPLEMENTED (HTTP 501) with Triton's message")
	fs.IntVar(&o.gpus, "gpus", 0, "number of simulated GPUs (default: the repository's, or 2)")
	fs.Float64Var(&o.errorRate, "error-rate", 0, "fraction of requests that fail with INTERNAL (0..1)")
	fs.Float64Var(&o.spikeRate, "spike-rate", 0, "fraction of executions slowed by --spike-delay (0..1)")
	fs.DurationVar(&o.spikeDelay, "spike-delay", 50*time.Millisecond, "extra latency of a spiked execution")
	fs.DurationVar(&o.stallAfter, "stall-after", 0, "stall the server this long after start (needs --stall-for)")
	fs.DurationVar(&o.stallFor, "stall-for", 0, "how long a stall holds all executions")
	fs.DurationVar(&o.slowStart, "slow-start", 0, "stay not-ready (models LOADING) this long after start")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the simulator to FILE")
	fs.BoolVar(&o.force, "force", false, "overwrite an existing --cpuprofile file")
	fs.Float64Var(&o.slowdown, "slowdown", 1, "multiply every model's compute times by this factor (1.3: 30% slower), to try a gate against a regression")
	fs.IntVar(&o.metricsIntervalMS, "metrics-interval-ms", 2000, "GPU and CPU metrics refresh interval in milliseconds")
	fs.Int64Var(&o.seed, "seed", 1, "random seed for latency jitter and faults")
	fs.Int64Var(&o.httpMaxInputSize, "http-max-input-size", sim.DefaultHTTPMaxInputSize, "largest HTTP request body in bytes, after decompression (Triton's flag and default); a larger one gets 400")
	fs.Var(o.memoryBudget.Name("memory-budget"), "memory-budget", "the most `BYTES` held for requests at once, gRPC and HTTP together (messages and bodies, decoded tensors, outputs being built): a number, or with KiB, MiB, GiB or TiB; a request past it gets RESOURCE_EXHAUSTED over gRPC, 503 over HTTP; printed at start (simulator only; 0, the default: "+sim.MemoryBudgetDefaultRule+")")
	fs.Var(o.memoryBudget.Name("http-max-buffered-bytes"), "http-max-buffered-bytes", "old name of --memory-budget: the same budget, in `BYTES`")
	fs.Var(o.memoryBudget.Name("grpc-budget"), "grpc-budget", "old name of --memory-budget: the same budget, in `BYTES`")
	fs.Int64Var(&o.grpcMaxInputSize, "grpc-max-input-size", sim.DefaultGRPCMaxInputSize, "largest gRPC message in bytes; a larger one gets RESOURCE_EXHAUSTED (simulator only: Triton's limit is fixed at this default, INT32_MAX)")
	fs.BoolVar(&o.grpcUseSSL, "grpc-use-ssl", false, "serve gRPC over TLS (needs --grpc-server-cert and --grpc-server-key); HTTP and metrics stay plaintext, as in Triton")
	fs.BoolVar(&o.grpcUseSSLMutual, "grpc-use-ssl-mutual", false, "serve gRPC over mutual TLS: clients must present a certificate signed by --grpc-root-cert (implies --grpc-use-ssl)")
	fs.StringVar(&o.grpcServerCert, "grpc-server-cert", "", "PEM file of the gRPC server's certificate (chain)")
	fs.StringVar(&o.grpcServerKey, "grpc-server-key", "", "PEM file of the gRPC server certificate's private key")
	fs.StringVar(&o.grpcRoots, "grpc-root-cert", "", "PEM file of the CA certificates that sign client certificates (--grpc-use-ssl-mutual)")
	return fs
}

// check rejects values no server could use, with the flag to fix.
func (o *simOptions) check() error {
	for _, p := range []struct {
		name string
		v    int
	}{{"--grpc-port", o.grpcPort}, {"--http-port", o.httpPort}, {"--metrics-port", o.metricsPort}} {
		if p.v < 0 || p.v > 65535 {
			return fmt.Errorf("%s %d: a port is 0..65535", p.name, p.v)
		}
	}
	switch {
	case o.gpus < 0 || o.gpus > sim.MaxGPUs:
		return fmt.Errorf("--gpus %d: must be 0..%d", o.gpus, sim.MaxGPUs)
	case o.errorRate < 0 || o.errorRate > 1:
		return fmt.Errorf("--error-rate %g: must be between 0 and 1", o.errorRate)
	case math.IsNaN(o.errorRate):
		return errors.New("--error-rate NaN is not a number: give a fraction between 0 and 1")
	case !(o.spikeRate >= 0 && o.spikeRate <= 1):
		return fmt.Errorf("--spike-rate %g: must be between 0 and 1", o.spikeRate)
	case o.spikeDelay < 0 || o.stallAfter < 0 || o.stallFor < 0 || o.slowStart < 0:
		return errors.New("durations (--spike-delay, --stall-after, --stall-for, --slow-start) must not be negative")
	case o.stallFor > 0 && o.stallAfter == 0:
		return fmt.Errorf("--stall-for %s needs --stall-after: say when the stall starts", o.stallFor)
	case o.stallAfter > 0 && o.stallFor == 0:
		return errors.New("--stall-after needs --stall-for (how long the stall lasts)")
	case o.cpuProfile != "" && outfile.CheckNew("--cpuprofile", o.cpuProfile, o.force) != nil:
		return outfile.CheckNew("--cpuprofile", o.cpuProfile, o.force)
	case o.metricsIntervalMS <= 0:
		return fmt.Errorf("--metrics-interval-ms %d: must be positive", o.metricsIntervalMS)
	case o.httpMaxInputSize < 1 || o.httpMaxInputSize > sim.MaxHTTPMaxInputSize:
		return fmt.Errorf("--http-max-input-size %d: must be 1..%d bytes", o.httpMaxInputSize, sim.MaxHTTPMaxInputSize)
	case o.grpcMaxInputSize < 1 || o.grpcMaxInputSize > sim.DefaultGRPCMaxInputSize:
		return fmt.Errorf("--grpc-max-input-size %d: must be 1..%d bytes", o.grpcMaxInputSize, sim.DefaultGRPCMaxInputSize)
	case o.memoryBudget.Check() != nil:
		return o.memoryBudget.Check()
	}
	mode, err := sim.ParseModelControlMode(o.modelControlMode)
	if err != nil {
		return fmt.Errorf("--model-control-mode: %v", err)
	}
	if len(o.loadModels) > 0 && mode != sim.ModelControlExplicit {
		return errors.New("--load-model needs --model-control-mode=explicit (in the other modes every model loads at start)")
	}
	return o.checkTLS()
}

// loadRepository reads --model-repository: a built-in set by name, a
// Triton model repository directory, or a description file.
func (o *simOptions) loadRepository() (sim.Repository, error) {
	return sim.OpenRepository(o.repository)
}

// checkLoadModels rejects --load-model names the repository does not have.
func (o *simOptions) checkLoadModels(repo sim.Repository) error {
	var names []string
	for _, m := range repo.Models {
		names = append(names, m.Name)
	}
	for _, want := range o.loadModels {
		if want != "*" && !slices.Contains(names, want) {
			return fmt.Errorf("--load-model %s: no such model in the repository (it has %s)", textsafe.Quote(want), strings.Join(names, ", "))
		}
	}
	return nil
}

// checkTLS rejects TLS flags that cannot work together. Like Triton,
// --grpc-use-ssl-mutual turns TLS on by itself.
func (o *simOptions) checkTLS() error {
	if o.grpcUseSSLMutual {
		o.grpcUseSSL = true
	}
	switch {
	case !o.grpcUseSSL && (o.grpcServerCert != "" || o.grpcServerKey != "" || o.grpcRoots != ""):
		return errors.New("--grpc-server-cert, --grpc-server-key and --grpc-root-cert need --grpc-use-ssl (or --grpc-use-ssl-mutual)")
	case o.grpcUseSSL && (o.grpcServerCert == "" || o.grpcServerKey == ""):
		return errors.New("--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key (PEM files)")
	case o.grpcUseSSLMutual && o.grpcRoots == "":
		return errors.New("--grpc-use-ssl-mutual needs --grpc-root-cert (the CA certificates that sign client certificates)")
	}
	return nil
}

// grpcTLS loads the TLS flags' files into the gRPC server's configuration;
// nil without --grpc-use-ssl. As in Triton, --grpc-root-cert matters only
// with --grpc-use-ssl-mutual.
func (o *simOptions) grpcTLS() (*tls.Config, error) {
	if !o.grpcUseSSL {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.grpcServerCert, o.grpcServerKey)
	if err != nil {
		return nil, fmt.Errorf("cannot load --grpc-server-cert/--grpc-server-key: %w", err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.grpcUseSSLMutual {
		pem, err := os.ReadFile(o.grpcRoots)
		if err != nil {
			return nil, fmt.Errorf("cannot read --grpc-root-cert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--grpc-root-cert %s holds no PEM certificate", o.grpcRoots)
		}
		conf.ClientAuth = tls.RequireAndVerifyClientCert
		conf.ClientCAs = pool
	}
	return conf, nil
}

// runSim is `tritontop sim`: it serves a simulated Triton until SIGINT or
// SIGTERM and returns the exit code (0 ok, 1 failure, 2 usage error).
func runSim(args []string, stdout, stderr io.Writer) int {
	var o simOptions
	if code, done := parseSimFlags(&o, args, stdout, stderr); done {
		return code
	}
	cfg, code := o.simConfig(stderr)
	if cfg == nil {
		return code
	}
	if o.cpuProfile != "" {
		stopProfile, err := outfile.StartCPUProfile(o.cpuProfile, o.force)
		if err != nil {
			fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
			return 2
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveSim(ctx, &o, *cfg, stdout, stderr)
}

// parseSimFlags parses the simulator's command line into o; done says the
// command is over (help, or a bad flag), with its exit code.
func parseSimFlags(o *simOptions, args []string, stdout, stderr io.Writer) (code int, done bool) {
	fs := newSimFlags(o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, simUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0, true
		}
		fmt.Fprintf(stderr, "tritontop sim: %v (see tritontop sim -h)\n", err)
		return 2, true
	}
	if fs.NArg() > 0 {
		if _, err := strconv.ParseBool(fs.Arg(0)); err == nil {
			// Triton's boolean flags take a value ("--grpc-use-ssl true");
			// here the value must be attached.
			fmt.Fprintf(stderr, "tritontop sim: unexpected argument %s: give a boolean flag's value with = (--grpc-use-ssl=%s)\n", textsafe.Quote(fs.Arg(0)), fs.Arg(0))
			return 2, true
		}
		fmt.Fprintf(stderr, "tritontop sim: unexpected argument %s (see tritontop sim -h)\n", textsafe.Quote(fs.Arg(0)))
		return 2, true
	}
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
		return 2, true
	}
	return 0, false
}

// simConfig is the simulator's configuration from its flags and model
// repository; nil with the exit code when they are refused.
func (o *simOptions) simConfig(stderr io.Writer) (*sim.Config, int) {
	repo, err := o.loadRepository()
	if err != nil {
		// A repository that cannot be read is bad input, like a bad flag.
		fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
		return nil, exitUsage
	}
	if o.slowdown != 1 {
		if repo, err = repo.Slowed(o.slowdown); err != nil {
			fmt.Fprintf(stderr, "tritontop sim: --%v\n", err)
			return nil, exitUsage
		}
	}
	if err := o.checkLoadModels(repo); err != nil {
		fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
		return nil, 2
	}
	if o.gpus > 0 {
		repo.GPUs = make([]sim.GPUSpec, o.gpus)
	}
	grpcTLS, err := o.grpcTLS()
	if err != nil {
		fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
		return nil, exitFail
	}

	or := func(s, def string) string {
		if s != "" {
			return s
		}
		return def
	}
	grpcHost, httpHost := or(o.grpcAddress, o.host), or(o.httpAddress, o.host)
	cfg := sim.Config{
		GRPCAddr:    net.JoinHostPort(grpcHost, strconv.Itoa(o.grpcPort)),
		HTTPAddr:    net.JoinHostPort(httpHost, strconv.Itoa(o.httpPort)),
		MetricsAddr: net.JoinHostPort(or(o.metricsAddr, httpHost), strconv.Itoa(o.metricsPort)),
		Repository:  repo,
		GRPCTLS:     grpcTLS,
		HTTP: sim.HTTPLimits{
			MaxInputSize: o.httpMaxInputSize,
		},
		GRPCMaxInputSize: int(o.grpcMaxInputSize),
		MemoryBudget:     o.memoryBudget.Bytes,
		SetGoMemoryLimit: true,
		Engine:           o.engineOptions(),
	}
	return &cfg, 0
}

// engineOptions are the simulated server's switches.
func (o *simOptions) engineOptions() sim.EngineOptions {
	return sim.EngineOptions{
		MetricsInterval: time.Duration(o.metricsIntervalMS) * time.Millisecond,
		Seed:            o.seed,
		ModelControl:    sim.ModelControlMode(strings.ToLower(o.modelControlMode)),
		StartupModels:   o.loadModels,
		AllowClientShm:  o.allowClientShm,
		Faults: sim.Faults{
			ErrorRate:  o.errorRate,
			SpikeRate:  o.spikeRate,
			SpikeDelay: o.spikeDelay,
			SlowStart:  o.slowStart,
		},
	}
}

// serveSim runs the simulator until ctx ends, printing its addresses.
func serveSim(ctx context.Context, o *simOptions, cfg sim.Config, stdout, stderr io.Writer) int {
	srv, err := sim.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "gRPC     %s\n", srv.GRPCAddr())
	switch {
	case o.grpcUseSSLMutual:
		fmt.Fprintln(stdout, "gRPC uses mutual TLS: clients need a certificate signed by --grpc-root-cert")
	case o.grpcUseSSL:
		fmt.Fprintln(stdout, "gRPC uses TLS")
	}
	fmt.Fprintf(stdout, "HTTP     %s\n", srv.HTTPAddr())
	fmt.Fprintf(stdout, "metrics  %s\n", srv.MetricsAddr())
	fmt.Fprintf(stdout, "budget   %s\n", srv.MemoryBudgetLine())
	fmt.Fprintln(stdout, "simulated Triton (tritontop simulator) ready")

	if o.stallAfter > 0 {
		faults := cfg.Engine.Faults
		timer := time.AfterFunc(o.stallAfter, func() {
			faults.StallUntil = time.Now().Add(o.stallFor)
			srv.Engine().SetFaults(faults)
		})
		defer timer.Stop()
	}

	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "tritontop sim: %v\n", err)
		return 1
	}
	return 0
}
