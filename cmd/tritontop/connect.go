package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/shirou/gopsutil/v4/mem"

	"github.com/tritontop/tritontop/sim"
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
}

// connect dials the server, reads the model's metadata and config, and
// builds the requests. Errors name what was wrong and what to do.
func connect(ctx context.Context, f *loadFlags) (*target, error) {
	conns := f.connections
	if f.protocol == "http" && !f.set["connections"] {
		// HTTP/1.1 carries one request at a time per connection: a cap
		// of one would serialize every request in flight.
		conns = 0
	}
	opts := triton.Options{
		Protocol:       f.protocol,
		Connections:    conns,
		Headers:        headerMap(f.headers),
		ConnectTimeout: f.connectTimeout,
	}
	if f.ssl {
		opts.TLS = &triton.TLSOptions{CAFile: f.sslCA, CertFile: f.sslCert, KeyFile: f.sslKey}
	}
	client, err := triton.Dial(ctx, f.url, opts)
	if err != nil {
		return nil, err
	}
	t := &target{client: client}
	fail := func(err error) (*target, error) { t.close(); return nil, err }
	if t.server, err = client.ServerMetadata(ctx); err != nil {
		return fail(fmt.Errorf("server metadata from %s: %w", f.url, err))
	}
	t.simulated = slices.Contains(t.server.GetExtensions(), sim.SimulatorExtension)
	if t.metadata, err = client.ModelMetadata(ctx, f.model, f.modelVersion); err != nil {
		code := triton.ErrorCode(err)
		if f.modelVersion != "" && (code == codes.NotFound || code == codes.Unavailable || code == codes.InvalidArgument) {
			if versions, ok := modelVersions(ctx, client, f.model); ok {
				return fail(usageError{fmt.Errorf("model %q has no ready version %q: it has %s (use -x VERSION, or leave -x out for the server's choice)",
					f.model, f.modelVersion, orNone(versions))})
			}
		}
		if code == codes.NotFound {
			return fail(usageError{unknownModel(ctx, client, f.model, err)})
		}
		return fail(fmt.Errorf("metadata of model %q: %w", f.model, err))
	}
	if t.config, err = client.ModelConfig(ctx, f.model, f.modelVersion); err != nil {
		return fail(fmt.Errorf("config of model %q: %w", f.model, err))
	}
	if t.config.GetModelTransactionPolicy().GetDecoupled() && !f.streaming {
		return fail(usageError{fmt.Errorf("model %q is decoupled: Triton serves it over streaming only; add --streaming", f.model)})
	}
	shapes, err := triton.ParseShapes(f.shapes)
	if err != nil {
		return fail(usageError{err})
	}
	if err := connectReplicas(ctx, f, t, opts); err != nil {
		return fail(err)
	}
	// Each replica's client encodes the requests for itself.
	limit := requestBytesLimit() / int64(len(f.servers()))
	inputs := triton.InputOptions{Data: f.inputData, Shapes: shapes, BatchSize: f.batch, MaxBytes: limit}
	if err := f.llm.apply(&inputs, t.metadata, f.streaming); err != nil {
		return fail(usageError{err})
	}
	t.requests, err = triton.BuildRequests(t.metadata, t.config, inputs)
	if err != nil {
		return fail(usageError{err})
	}
	for _, r := range t.requests {
		r.Version = f.modelVersion
	}
	return t, nil
}

// unknownModel lists the server's models for a NOT_FOUND answer.
func unknownModel(ctx context.Context, c triton.Client, model string, cause error) error {
	idx, err := c.RepositoryIndex(ctx, false)
	if err != nil || len(idx) == 0 {
		return fmt.Errorf("unknown model %q (%v)", model, cause)
	}
	var names []string
	for _, m := range idx {
		if !slices.Contains(names, m.GetName()) {
			names = append(names, m.GetName())
		}
	}
	slices.Sort(names)
	return fmt.Errorf("unknown model %q: the server has %s (use -m NAME)", model, strings.Join(names, ", "))
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
