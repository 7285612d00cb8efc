package sim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/tritontop/tritontop/triton/pb"
)

// Default listen addresses: Triton's ports on the loopback interface.
const (
	DefaultGRPCAddr    = "127.0.0.1:8001"
	DefaultHTTPAddr    = "127.0.0.1:8000"
	DefaultMetricsAddr = "127.0.0.1:8002"
)

// drainTimeout bounds how long Close waits for in-flight requests and open
// streams before cutting them off.
const drainTimeout = 3 * time.Second

// Config says where a simulated Triton listens and what it serves.
type Config struct {
	// GRPCAddr, HTTPAddr and MetricsAddr are host:port listen addresses;
	// empty means the Default* address, and port 0 picks a free port.
	GRPCAddr, HTTPAddr, MetricsAddr string
	// Repository holds the models and GPUs; one with no models means
	// DemoRepository's models.
	Repository Repository
	// Engine tunes the simulated server.
	Engine EngineOptions
	// GRPCTLS, when set, serves gRPC over TLS with this configuration
	// (ClientAuth set for mutual TLS). Like Triton, only the gRPC endpoint
	// speaks TLS: HTTP/REST and metrics stay plaintext.
	GRPCTLS *tls.Config
	// HTTP bounds what HTTP clients can make the simulator hold: body
	// size, read and idle timeouts. The metrics endpoint takes the same
	// timeouts.
	HTTP HTTPLimits
	// GRPCMaxInputSize is the largest gRPC message received, in bytes;
	// 0 means DefaultGRPCMaxInputSize (Triton's INT32_MAX).
	GRPCMaxInputSize int
	// MemoryBudget bounds the bytes the simulator holds for requests at
	// once, over gRPC and HTTP: messages and bodies as received, the
	// tensors decoded from them, the outputs being built and encoded. A
	// request that does not fit gets RESOURCE_EXHAUSTED over gRPC and 503
	// over HTTP. 0 means DefaultMemoryBudget; at least MinMemoryBudget.
	MemoryBudget int64
	// SetGoMemoryLimit sets the Go runtime's soft memory limit to
	// MemoryBudget plus MemoryBudgetOverhead while the server runs, unless
	// GOMEMLIMIT is set, so that the collector takes garbage back before
	// the process grows past them. It is for a process that is the
	// simulator (tritontop sim), not one that embeds it among other work.
	SetGoMemoryLimit bool
}

// Server is a running simulated Triton: an Engine behind Triton's gRPC,
// HTTP/REST and metrics endpoints.
type Server struct {
	engine  *Engine
	cpu     *cpuSampler
	grpc    *grpc.Server
	http    *http.Server
	metrics *http.Server

	grpcLn, httpLn, metricsLn net.Listener

	budget          *memBudget
	budgetRule      string // how the default budget was derived; "" when given
	restoreMemLimit func()

	stopCPU   context.CancelFunc
	stopAfter func() bool
	closeOnce sync.Once
	closeErr  error
	served    sync.WaitGroup
}

// Start creates the Engine and serves it on three listeners until Close is
// called or ctx is done. A port already in use fails with an error naming
// the address and the flag that changes it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	limits := cfg.HTTP.withDefaults()
	if err := limits.check(); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	grpcMax := cfg.GRPCMaxInputSize
	if grpcMax <= 0 {
		grpcMax = DefaultGRPCMaxInputSize
	}
	if err := CheckMemoryBudget(cfg.MemoryBudget); err != nil {
		return nil, fmt.Errorf("simulator: memory budget: %w", err)
	}
	budgetBytes, budgetRule := cfg.MemoryBudget, ""
	if budgetBytes == 0 {
		budgetBytes, budgetRule = DefaultMemoryBudget()
	}
	repo := cfg.Repository
	if len(repo.Models) == 0 {
		repo.Models = DemoRepository().Models
	}
	grpcLn, err := listen(cfg.GRPCAddr, DefaultGRPCAddr, "gRPC", "--grpc-port")
	if err != nil {
		return nil, err
	}
	httpLn, err := listen(cfg.HTTPAddr, DefaultHTTPAddr, "HTTP", "--http-port")
	if err != nil {
		grpcLn.Close()
		return nil, err
	}
	metricsLn, err := listen(cfg.MetricsAddr, DefaultMetricsAddr, "metrics", "--metrics-port")
	if err != nil {
		grpcLn.Close()
		httpLn.Close()
		return nil, err
	}
	engine, err := NewEngine(repo, cfg.Engine)
	if err != nil {
		grpcLn.Close()
		httpLn.Close()
		metricsLn.Close()
		return nil, fmt.Errorf("simulator: %w", err)
	}

	s := &Server{engine: engine, grpcLn: grpcLn, httpLn: httpLn, metricsLn: metricsLn, budget: newMemBudget(budgetBytes), budgetRule: budgetRule}
	s.restoreMemLimit = setGoMemoryLimit(cfg.SetGoMemoryLimit, budgetBytes+MemoryBudgetOverhead)
	s.cpu = newCPUSampler()
	cpuCtx, stopCPU := context.WithCancel(context.Background())
	s.stopCPU = stopCPU
	interval := cfg.Engine.MetricsInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	go s.cpu.run(cpuCtx, interval)

	// Triton raises both limits to INT32_MAX so that large tensors pass.
	grpcOpts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(grpcMax),
		grpc.MaxSendMsgSize(math.MaxInt32),
		grpc.ForceServerCodecV2(serverCodec{costs: &protoCosts{}}),
	}
	var creds credentials.TransportCredentials
	if cfg.GRPCTLS != nil {
		creds = credentials.NewTLS(cfg.GRPCTLS)
	}
	gb := &grpcBudget{b: s.budget, maxMsg: int64(grpcMax)}
	grpcOpts = append(grpcOpts, gb.serverOptions(creds)...)
	s.grpc = grpc.NewServer(grpcOpts...)
	settings := &settingsStore{}
	gb.serve(s.grpc, &pb.GRPCInferenceService_ServiceDesc, &grpcService{engine: engine, settings: settings})
	gb.serve(s.grpc, &grpc_health_v1.Health_ServiceDesc, &healthService{engine: engine})

	// ReadTimeout covers headers and body; net/http clears the deadline
	// once the body is read, so a long inference is not cut off by it.
	s.http = &http.Server{
		Handler:           newHTTPHandler(engine, settings, limits, s.budget),
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		ReadTimeout:       limits.ReadTimeout,
		IdleTimeout:       limits.IdleTimeout,
	}
	s.metrics = &http.Server{
		Handler:           &metricsHandler{engine: engine, cpu: s.cpu},
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		ReadTimeout:       limits.ReadTimeout,
		IdleTimeout:       limits.IdleTimeout,
	}

	s.served.Add(3)
	go func() { defer s.served.Done(); _ = s.grpc.Serve(grpcLn) }()
	go func() { defer s.served.Done(); _ = s.http.Serve(httpLn) }()
	go func() { defer s.served.Done(); _ = s.metrics.Serve(metricsLn) }()

	s.stopAfter = context.AfterFunc(ctx, func() { _ = s.Close() })
	return s, nil
}

// listen opens one TCP listener, turning "address already in use" into a
// one-line error that says which flag picks another port.
func listen(addr, def, what, flag string) (net.Listener, error) {
	if addr == "" {
		addr = def
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("cannot serve %s on %s: address already in use (choose another port with %s)", what, addr, flag)
		}
		return nil, fmt.Errorf("cannot serve %s on %s: %w", what, addr, err)
	}
	return ln, nil
}

// GRPCAddr returns the address the gRPC listener is bound to.
func (s *Server) GRPCAddr() string { return s.grpcLn.Addr().String() }

// HTTPAddr returns the address the HTTP/REST listener is bound to.
func (s *Server) HTTPAddr() string { return s.httpLn.Addr().String() }

// MetricsAddr returns the address the metrics listener is bound to.
func (s *Server) MetricsAddr() string { return s.metricsLn.Addr().String() }

// MemoryBudget is the bytes the server may hold for requests at once.
func (s *Server) MemoryBudget() int64 { return s.budget.limit }

// MemoryBudgetLine says the memory budget in one line, for the start-up
// output: its size, where it comes from (--memory-budget, or how the
// default was derived) and what a request past it gets.
func (s *Server) MemoryBudgetLine() string {
	b := s.budget.limit
	from := "(--memory-budget)"
	if s.budgetRule != "" {
		from = "(the default: " + s.budgetRule + "; --memory-budget sets it)"
	}
	return fmt.Sprintf("%s (%d bytes) for requests at once, gRPC and HTTP %s; past it gRPC answers RESOURCE_EXHAUSTED, HTTP 503",
		FormatBytes(b), b, from)
}

// MemoryHeld is the bytes the server holds for requests now.
func (s *Server) MemoryHeld() int64 { return s.budget.Held() }

// MemoryPeak returns the most bytes the server has held for requests at
// once, and how many reservations did not fit.
func (s *Server) MemoryPeak() (peak, refused int64) {
	return s.budget.peak.Load(), s.budget.refused.Load()
}

// Engine returns the simulated server behind the listeners, for fault
// injection and inspection.
func (s *Server) Engine() *Engine { return s.engine }

// Close stops accepting connections, lets in-flight requests finish for a
// few seconds, then stops the engine; requests still waiting after that get
// UNAVAILABLE. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.stopAfter != nil {
			s.stopAfter()
		}
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		defer cancel()

		grpcDone := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(grpcDone) }()
		var errs []error
		if err := s.http.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("stopping HTTP server: %w", err))
		}
		_ = s.metrics.Shutdown(ctx)
		select {
		case <-grpcDone:
		case <-ctx.Done():
		}
		// Whatever is still running (open streams, stalled requests) is
		// cut off: the engine answers UNAVAILABLE, then connections close.
		s.engine.Close()
		s.grpc.Stop()
		_ = s.http.Close()
		_ = s.metrics.Close()
		s.stopCPU()
		s.served.Wait()
		s.restoreMemLimit()
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
