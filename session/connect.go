package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/shirou/gopsutil/v4/mem"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// target is what a run measures: the server, the model, and requests for it.
type target struct {
	client triton.Client
	// replicas are every server's client, client the first's, in a run
	// over several replicas of the model; nil with one server.
	replicas  []triton.Client
	server    *pb.ServerMetadataResponse
	metadata  *pb.ModelMetadataResponse
	config    *pb.ModelConfig
	requests  []*triton.InferRequest
	simulated bool
	// models are the targets of a run over several models, one per model,
	// each on this target's servers and clients with the flags that
	// model sees (flags); nil with one model, whose metadata, config and
	// requests are this target's own.
	models []*target
	flags  *Config
	// shm holds the regions of --shared-memory system (shmflags.go).
	shm *triton.SharedMemorySet
	// composing are the model's composing models (an ensemble's steps,
	// --bls-composing-models), read with its statistics; nil for a model
	// that is no pipeline.
	composing []stats.Composing
}

// each is the target of each model of the run: its models, or itself.
func (t *target) each() []*target {
	if len(t.models) > 0 {
		return t.models
	}
	return []*target{t}
}

// connect dials the server, reads the model's metadata and config, and
// builds the requests; in a run over several models, each model's. Errors
// name what was wrong and what to do.
func connect(ctx context.Context, f *Config) (*target, error) {
	conns := f.Connections
	if f.Protocol == "http" && !f.Given["connections"] {
		// HTTP/1.1 carries one request at a time per connection: a cap
		// of one would serialize every request in flight.
		conns = 0
	}
	opts := triton.Options{
		Protocol:       f.Protocol,
		Connections:    conns,
		Headers:        headerMap(f.Headers),
		ConnectTimeout: f.ConnectTimeout,
	}
	f.Endpoint.options(&opts)
	if f.SSL {
		opts.TLS = &triton.TLSOptions{CAFile: f.SSLCA, CertFile: f.SSLCert, KeyFile: f.SSLKey}
	}
	client, err := triton.Dial(ctx, f.URL, opts)
	if err != nil {
		return nil, err
	}
	t := &target{client: client}
	fail := func(err error) (*target, error) { t.close(); return nil, err }
	if t.server, err = client.ServerMetadata(ctx); err != nil {
		return fail(fmt.Errorf("server metadata from %s: %w", f.URL, err))
	}
	textsafe.Sanitize(t.server) // the server's strings reach the terminal
	t.simulated = slices.Contains(t.server.GetExtensions(), sim.SimulatorExtension)
	if err := connectReplicas(ctx, f, opts, t); err != nil {
		return fail(err)
	}
	// Each replica's client encodes the requests for itself, each model's.
	limit := requestBytesLimit() / int64(len(f.servers())*max(len(f.models), 1))
	if !f.several() {
		t.flags = f
		if err := t.describeModel(ctx, f); err != nil {
			return fail(err)
		}
		if err := t.buildRequests(f, limit); err != nil {
			return fail(err)
		}
		if err := placeSharedMemory(ctx, f, t); err != nil {
			return fail(err)
		}
		return t, nil
	}
	if err := connectModels(ctx, f, t, limit); err != nil {
		return fail(err)
	}
	return t, nil
}

// describeModel reads the model's metadata and config from the first
// server and checks that every replica serves it alike.
func (t *target) describeModel(ctx context.Context, f *Config) error {
	client := t.client
	var err error
	if t.metadata, err = client.ModelMetadata(ctx, f.Model, f.ModelVersion); err != nil {
		code := triton.ErrorCode(err)
		if f.ModelVersion != "" && (code == codes.NotFound || code == codes.Unavailable || code == codes.InvalidArgument) {
			if versions, ok := modelVersions(ctx, client, f.Model); ok {
				return UsageError{Err: fmt.Errorf("model %s has no ready version %s: it has %s (use -x VERSION, or leave -x out for the server's choice)",
					textsafe.Quote(f.Model), textsafe.Quote(f.ModelVersion), orNone(versions))}
			}
		}
		if code == codes.NotFound {
			return UsageError{Err: unknownModel(ctx, client, f.Model, err)}
		}
		return fmt.Errorf("metadata of model %s: %w", textsafe.Quote(f.Model), err)
	}
	if t.config, err = client.ModelConfig(ctx, f.Model, f.ModelVersion); err != nil {
		return fmt.Errorf("config of model %s: %w", textsafe.Quote(f.Model), err)
	}
	textsafe.Sanitize(t.metadata)
	textsafe.Sanitize(t.config)
	if t.composing, err = stats.ComposingModels(ctx, client, t.config, f.bls); err != nil {
		err = fmt.Errorf("composing models of %s: %w", textsafe.Quote(f.Model), err)
		if c := triton.ErrorCode(err); len(f.bls) > 0 && (c == codes.NotFound || c == codes.InvalidArgument) {
			// A name of --bls-composing-models the server does not serve.
			return UsageError{Err: fmt.Errorf("%w (check --bls-composing-models)", err)}
		}
		return err
	}
	if t.config.GetModelTransactionPolicy().GetDecoupled() && !f.Streaming && !f.Endpoint.text() {
		how := "add --streaming"
		if f.LoadFile != "" {
			how = "add streaming: true to the model in --load-file, or --streaming"
		}
		return UsageError{Err: fmt.Errorf("model %s is decoupled: Triton serves it over streaming only; %s", textsafe.Quote(f.Model), how)}
	}
	return checkReplicasServe(ctx, f, t)
}

// buildRequests builds the model's requests, which may take limit bytes.
func (t *target) buildRequests(f *Config, limit int64) error {
	if traceHasInputs(f) {
		return nil // the trace's requests carry their own (scheduleFor)
	}
	shapes, err := triton.ParseShapes(f.Shapes)
	if err != nil {
		return UsageError{Err: err}
	}
	inputs := triton.InputOptions{Data: f.InputData, Shapes: shapes, BatchSize: f.BatchSize, MaxBytes: limit, StringLength: f.PerfAnalyzer.StringLength}
	if err := f.LLM.apply(&inputs, t.metadata, f.Streaming); err != nil {
		return UsageError{Err: err}
	}
	if err := f.Endpoint.applyTokens(&inputs, t.metadata, f.Given, f.several()); err != nil {
		return UsageError{Err: err}
	}
	t.requests, err = triton.BuildRequests(t.metadata, t.config, inputs)
	if err != nil {
		return UsageError{Err: err}
	}
	for _, r := range t.requests {
		r.Version = f.ModelVersion
	}
	return nil
}

// connectModels reads each model of a run over several and builds its
// requests. The run's --shape, sequence flags and --prompt-tokens apply to
// the models they fit (a shape to the models with that input, the sequence
// flags to stateful models, the prompt to LLMs); one that fits none is
// refused, as it would be in a run of one model.
func connectModels(ctx context.Context, f *Config, t *target, limit int64) error {
	runShapes, err := triton.ParseShapes(f.Shapes)
	if err != nil {
		return UsageError{Err: err}
	}
	usedShapes := map[string]bool{}
	stateful, llm := false, false
	for _, spec := range f.models {
		mf := f.forModel(spec)
		mt := &target{client: t.client, replicas: t.replicas, server: t.server, simulated: t.simulated, flags: mf}
		t.models = append(t.models, mt)
		if err := mt.describeModel(ctx, mf); err != nil {
			return err
		}
		if len(spec.shapes) == 0 {
			// The run's shapes of this model's inputs (ParseShapes takes
			// the name before the last colon).
			mf.Shapes = nil
			for _, sh := range f.Shapes {
				name := sh[:strings.LastIndexByte(sh, ':')]
				if slices.ContainsFunc(mt.metadata.GetInputs(), func(in *pb.ModelMetadataResponse_TensorMetadata) bool { return in.GetName() == name }) {
					mf.Shapes = append(mf.Shapes, sh)
					usedShapes[name] = true
				}
			}
		}
		if mt.config.GetSequenceBatching() == nil {
			for _, name := range sequenceFlagNames {
				delete(mf.Given, name)
			}
		} else {
			stateful = true
		}
		if hasTextInput(mt.metadata) {
			llm = true
		} else {
			mf.LLM.PromptTokens = 0
		}
		if err := mt.buildRequests(mf, limit); err != nil {
			return err
		}
	}
	for name := range runShapes {
		if !usedShapes[name] {
			return UsageError{Err: fmt.Errorf("--shape names input '%s', which none of the models (%s) has", textsafe.Bound(name), textsafe.Excerpt(f.Model, maxQuoted))}
		}
	}
	for _, name := range sequenceFlagNames {
		if f.Given[name] && !stateful {
			return UsageError{Err: fmt.Errorf("--%s is for stateful models, and none of the models (%s) has sequence batching in its config: drop it", name, textsafe.Excerpt(f.Model, maxQuoted))}
		}
	}
	if f.LLM.PromptTokens > 0 && !llm {
		return UsageError{Err: fmt.Errorf("--prompt-tokens fills an LLM's BYTES input %q, which none of the models (%s) has", triton.LLMTextInput, textsafe.Excerpt(f.Model, maxQuoted))}
	}
	return nil
}

// unknownModel says why the server answered NOT_FOUND: a model its
// repository has but not loaded (unloaded, or not loaded yet in explicit
// model control) gets its state and the server's words; any other name,
// the models the server has.
func unknownModel(ctx context.Context, c triton.Client, model string, cause error) error {
	idx, err := c.RepositoryIndex(ctx, false)
	if err != nil || len(idx) == 0 {
		return fmt.Errorf("unknown model %s (%v)", textsafe.Quote(model), cause)
	}
	var names []string
	for _, m := range idx {
		if m.GetName() == model {
			state := cmp.Or(m.GetState(), "not loaded")
			if r := m.GetReason(); r != "" {
				state += ": " + r
			}
			return fmt.Errorf("model %s is in the server's repository but not loaded (%s; %v): load it (explicit model control: POST v2/repository/models/%s/load) or give a loaded model",
				textsafe.Quote(model), state, cause, textsafe.Bound(model))
		}
		if !slices.Contains(names, m.GetName()) {
			names = append(names, m.GetName())
		}
	}
	slices.Sort(names)
	return fmt.Errorf("unknown model %s: the server has %s (use -m NAME)", textsafe.Quote(model), strings.Join(names, ", "))
}

// modelVersions lists the ready versions the repository index has for a
// model; ok is false when the model is not in the index at all.
func modelVersions(ctx context.Context, c triton.Client, model string) (versions []string, ok bool) {
	idx, err := c.RepositoryIndex(ctx, false)
	if err != nil {
		return nil, false
	}
	for _, m := range idx {
		if m.GetName() != model {
			continue
		}
		ok = true
		if v := m.GetVersion(); v != "" && (m.GetState() == "" || m.GetState() == "READY") && !slices.Contains(versions, v) {
			versions = append(versions, "version "+v)
		}
	}
	return versions, ok
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "no ready version"
	}
	return strings.Join(list, ", ")
}

// requestBytesLimit is the most bytes the requests built for a run may
// take in all: a quarter of the memory available, and never more than the
// 2 GiB a gRPC message (and Triton) takes.
func requestBytesLimit() int64 {
	const grpcMax = 1<<31 - 1
	limit := int64(grpcMax)
	if vm, err := mem.VirtualMemory(); err == nil && vm.Available > 0 {
		limit = min(limit, int64(vm.Available/4))
	}
	return limit
}
