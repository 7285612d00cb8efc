// Package sim is a Triton-compatible inference server simulator. The Engine
// holds simulated models, each with a request queue, a dynamic batcher and
// instances that execute batches in real time on simulated GPUs, and keeps
// Triton's statistics and metrics. The frontends (gRPC, HTTP, metrics) in
// this package translate the wire to Engine calls; tritontop's demo and
// tests run it in-process, `tritontop sim` as a server.
package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// Defaults of EngineOptions.
const (
	// DefaultVersion is the Triton version the simulator reports.
	DefaultVersion = "2.71.0"
	// DefaultMetricsInterval is Triton's --metrics-interval-ms default.
	DefaultMetricsInterval = 2 * time.Second
)

// SimulatorExtension is the last ServerMetadata extension of the simulator,
// so that a client can tell it from a real Triton.
const SimulatorExtension = "tritontop_simulator"

// tritonExtensions are the extensions Triton always reports, in order, then
// those of a standard build ("statistics", "trace", "logging"), whose
// endpoints the simulator serves.
var tritonExtensions = []string{
	"classification", "sequence", "model_repository",
	"model_repository(unload_dependents)", "schedule_policy",
	"model_configuration", "system_shared_memory", "cuda_shared_memory",
	"binary_tensor_data", "parameters", "statistics", "trace", "logging",
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	// Version is the Triton version reported; DefaultVersion if empty.
	Version string
	// MetricsInterval is how often GPU gauges are refreshed; utilization is
	// the busy fraction over the last interval. DefaultMetricsInterval if 0.
	MetricsInterval time.Duration
	// Faults are the faults injected from the start.
	Faults Faults
	// Seed makes latency jitter and injected faults reproducible.
	Seed int64
	// ModelControl is Triton's --model-control-mode; empty means
	// ModelControlNone, Triton's default, where LoadModel and UnloadModel
	// are refused.
	ModelControl ModelControlMode
	// StartupModels are the models loaded at start in explicit mode
	// (Triton's --load-model); "*" loads them all, none loads none. Other
	// modes load every model.
	StartupModels []string
	// AllowClientShm is Triton's --allow-client-shm: whether clients may
	// register and unregister shared-memory regions. Off, as in Triton,
	// both are refused with UNIMPLEMENTED (HTTP 501) and Triton's message;
	// the status of regions still answers.
	AllowClientShm bool
}

// Engine is the simulated server: models, schedulers, statistics and GPUs.
// All methods are safe for concurrent use.
type Engine struct {
	opts   EngineOptions
	start  time.Time
	gpus   []*gpu
	faults atomic.Pointer[Faults]
	seq    atomic.Uint64 // seeds per-instance random sources

	mu     sync.RWMutex
	models map[string]*model
	// explicit names the models loaded by name (at start or by a load
	// request) rather than as an ensemble's composing model: Triton's
	// unload_dependents leaves them loaded.
	explicit map[string]bool
	names    []string // sorted
	closed   bool
	scheds   map[*scheduler]struct{} // running, including draining ones

	stop     chan struct{}
	samplerW sync.WaitGroup

	shm shmRegistry // system shared-memory regions (shm.go)
}

// NewEngine checks the repository, fills in defaults, loads every model and
// starts its scheduler.
func NewEngine(repo Repository, opts EngineOptions) (*Engine, error) {
	if err := repo.check(); err != nil {
		return nil, fmt.Errorf("model repository: %w", err)
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.MetricsInterval <= 0 {
		opts.MetricsInterval = DefaultMetricsInterval
	}
	mode, err := ParseModelControlMode(string(opts.ModelControl))
	if err != nil {
		return nil, err
	}
	opts.ModelControl = mode
	e := &Engine{
		opts:   opts,
		start:  time.Now(),
		models: map[string]*model{},
		scheds: map[*scheduler]struct{}{},
		stop:   make(chan struct{}),
	}
	f := opts.Faults
	e.faults.Store(&f)
	if !repo.CPUOnly || len(repo.GPUs) > 0 {
		e.gpus = newGPUs(repo.GPUs, e.start)
	}
	for _, spec := range repo.Models {
		m, err := newModel(spec, e.gpus)
		if err != nil {
			if spec.Source != "" {
				return nil, fmt.Errorf("model repository: model %s (%s): %w", textsafe.Quote(spec.Name), textsafe.Excerpt(spec.Source, 4096), err)
			}
			return nil, fmt.Errorf("model repository: model %s: %w", textsafe.Quote(spec.Name), err)
		}
		e.models[m.name] = m
		e.names = append(e.names, m.name)
	}
	slices.Sort(e.names)
	e.linkEnsembles()
	startup, err := e.startupModels()
	if err != nil {
		return nil, fmt.Errorf("model control: %w", err)
	}
	var bad []*ensembleLoadError
	for _, name := range startup {
		if le := e.ensembleError(e.models[name]); le != nil {
			bad = append(bad, le)
		}
	}
	if len(bad) > 0 {
		return nil, startError(bad)
	}
	seen := map[*model]bool{}
	e.explicit = make(map[string]bool, len(startup))
	for _, name := range startup {
		e.explicit[name] = true
		// Each has passed its checks: nothing to drain.
		_, _ = e.loadTree(e.models[name], seen)
	}
	e.samplerW.Add(1)
	go e.sampleGPUs()
	return e, nil
}

// Close stops every scheduler. Requests still queued or executing fail with
// UNAVAILABLE "Server is stopping". Close waits for the schedulers to stop.
func (e *Engine) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	_ = e.UnregisterSystemSharedMemory("")
	var scheds []*scheduler
	for s := range e.scheds {
		scheds = append(scheds, s)
	}
	e.mu.Unlock()
	close(e.stop)
	for _, s := range scheds {
		s.close()
	}
	e.samplerW.Wait()
}

// SetFaults replaces the injected faults; it takes effect for executions
// that start afterwards.
func (e *Engine) SetFaults(f Faults) {
	e.faults.Store(&f)
}

// currentFaults returns the faults in force.
func (e *Engine) currentFaults() *Faults {
	return e.faults.Load()
}

// Live reports whether the server is live: until Close.
func (e *Engine) Live() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return !e.closed
}

// Ready reports whether the server is ready: live and past any slow start.
func (e *Engine) Ready() bool {
	return e.Live() && !e.starting()
}

// starting reports whether the simulated slow start is still running.
func (e *Engine) starting() bool {
	return time.Since(e.start) < e.currentFaults().SlowStart
}

// ServerMetadata returns Triton's server metadata: name "triton", the
// configured version, Triton's extensions and SimulatorExtension last.
func (e *Engine) ServerMetadata() *pb.ServerMetadataResponse {
	ext := append(slices.Clone(tritonExtensions), SimulatorExtension)
	return &pb.ServerMetadataResponse{Name: "triton", Version: e.opts.Version, Extensions: ext}
}

// Infer validates req with Triton's rules and messages, queues it, waits for
// the batch that holds it to execute, and returns the response with
// raw_output_contents for every returned output. streaming tells whether
// the request came on ModelStreamInfer, which decoupled models require.
// Cancelling ctx fails the request with CANCELLED (a failure with reason
// CANCELED in the statistics).
func (e *Engine) Infer(ctx context.Context, req *pb.ModelInferRequest, streaming bool) (*pb.ModelInferResponse, error) {
	return e.infer(ctx, req, streaming, nil)
}

// infer is Infer with the request's outputs reserved in hold (nil: none).
func (e *Engine) infer(ctx context.Context, req *pb.ModelInferRequest, streaming bool, hold *budgetHold) (*pb.ModelInferResponse, error) {
	if usesShm(req) {
		return e.inferShm(ctx, req, streaming, hold)
	}
	r, err := e.submit(req, streaming, nil, nil, budgetShare{hold: hold})
	if err != nil {
		return nil, err
	}
	return e.wait(ctx, r)
}

// inferStaged is infer (not streaming) telling when an error was found:
// late is true for an error of the request's execution (or of writing its
// outputs), false for one found before it was queued.
func (e *Engine) inferStaged(ctx context.Context, req *pb.ModelInferRequest, hold *budgetHold) (resp *pb.ModelInferResponse, late bool, err error) {
	share := budgetShare{hold: hold}
	var outs []shmOutput
	if usesShm(req) {
		if req, outs, err = e.resolveShm(req, &share); err != nil {
			return nil, false, err
		}
	}
	r, err := e.submit(req, false, nil, nil, share)
	if err != nil {
		return nil, false, err
	}
	if resp, err = e.wait(ctx, r); err != nil {
		return nil, true, err
	}
	resp, err = e.writeShmOutputs(resp, outs)
	return resp, err != nil, err
}

// submit validates a request and queues it; wait then waits for its
// response, or onDone (if not nil) is called when it completes, and
// onResponse (if not nil) with each response of a decoupled model before
// its final one (or the error such a response carries). A stream submits
// its requests one after the other, in the order they arrive, as Triton's
// stream handler does: the requests of a sequence must reach the sequence
// batcher in order. The request's outputs
// are reserved in share's hold, and share carries what the caller gives
// back when the request is answered; on an error nothing more is held.
func (e *Engine) submit(req *pb.ModelInferRequest, streaming bool, onDone func(*request),
	onResponse func(*request, *pb.ModelInferResponse, error), share budgetShare) (*request, error) {
	r, err := e.submitOnce(req, streaming, onDone, onResponse, share)
	if errors.Is(err, errStopping) && e.Live() {
		// The version it found was replaced by a load meanwhile: the
		// new one takes it, as Triton's serving version does.
		r, err = e.submitOnce(req, streaming, onDone, onResponse, share)
	}
	return r, err
}

// submitOnce is submit on the version ready now.
func (e *Engine) submitOnce(req *pb.ModelInferRequest, streaming bool, onDone func(*request),
	onResponse func(*request, *pb.ModelInferResponse, error), share budgetShare) (*request, error) {
	mv, err := e.readyVersion(req.GetModelName(), req.GetModelVersion())
	if err != nil {
		return nil, err
	}
	m := mv.model
	if m.spec.Decoupled && !streaming {
		return nil, &kserve.Error{Code: codes.Unimplemented, Message: "ModelInfer RPC doesn't support models with decoupled transaction policy"}
	}
	r, err := m.prepare(req, share)
	if err != nil {
		return nil, err
	}
	r.version = mv
	r.onDone = onDone
	r.onResponse = onResponse
	r.start = e.now()
	if m.spec.LLM != nil {
		// Counted here, on the caller's goroutine, as part of the
		// server's time (a real LLM's preprocessing tokenizes too):
		// tokenizing a long prompt in the instance's loop would delay
		// every running request's next token.
		r.promptTokens = mv.sched.llm.promptTokens(m, r)
	}
	// Held from before it is queued, so that its completion never comes
	// first.
	r.heldAtArrival = mv.held.Add(1)
	if err := mv.sched.enqueue(r); err != nil {
		mv.held.Add(-1)
		share.hold.give(r.budget.n - share.n)
		return nil, err
	}
	return r, nil
}

// wait returns a submitted request's response. Cancelling ctx fails the
// request with CANCELLED unless it has completed.
func (e *Engine) wait(ctx context.Context, r *request) (*pb.ModelInferResponse, error) {
	select {
	case <-r.done:
		return r.resp, r.err
	case <-ctx.Done():
		if r.version.sched.cancel(r) {
			return nil, &kserve.Error{Code: codes.Canceled, Message: "Request was cancelled"}
		}
		<-r.done
		return r.resp, r.err
	}
}

// errStopping is returned for requests cut short by Close or an unload.
var errStopping = &kserve.Error{Code: codes.Unavailable, Message: "Server is stopping"}
