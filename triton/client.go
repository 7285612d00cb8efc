// Package triton is tritontop's side of the wire: a Client for Triton's KServe
// v2 API over gRPC or HTTP, helpers for model metadata and config, request
// encoding, and a parser for Triton's Prometheus /metrics text. Everything
// that talks to a server (the driver, the stats poller, the CLI) goes through
// this package; it knows nothing about load generation or rendering.
package triton

import (
	"context"
	"time"

	"github.com/tritontop/tritontop/triton/pb"
)

// Client is a connection to one Triton server. The gRPC and HTTP
// implementations return the same protobuf types, so callers never care which
// protocol is underneath. A Client is safe for concurrent use.
type Client interface {
	// ServerLive reports whether the server is live.
	ServerLive(ctx context.Context) (bool, error)
	// ServerReady reports whether the server is ready.
	ServerReady(ctx context.Context) (bool, error)
	// ServerMetadata returns the server's name, version and extensions.
	ServerMetadata(ctx context.Context) (*pb.ServerMetadataResponse, error)
	// ModelReady reports whether a model version is ready; an empty version
	// means the server's choice.
	ModelReady(ctx context.Context, model, version string) (bool, error)
	// ModelMetadata returns a model's inputs and outputs.
	ModelMetadata(ctx context.Context, model, version string) (*pb.ModelMetadataResponse, error)
	// ModelConfig returns a model's configuration.
	ModelConfig(ctx context.Context, model, version string) (*pb.ModelConfig, error)
	// ModelStatistics returns cumulative statistics; an empty model means all.
	ModelStatistics(ctx context.Context, model, version string) (*pb.ModelStatisticsResponse, error)
	// RepositoryIndex lists the models of the server's repositories.
	RepositoryIndex(ctx context.Context, readyOnly bool) ([]*pb.RepositoryIndexResponse_ModelIndex, error)
	// LoadModel loads (or reloads) a model through the repository API;
	// config, when not empty, is a configuration override: a ModelConfig
	// as JSON with Triton's field names, which replaces the model's
	// configuration until it is unloaded (Triton does not write it to the
	// repository). The server must be in explicit model control mode
	// (ErrNotExplicit otherwise).
	LoadModel(ctx context.Context, model, config string) error
	// UnloadModel unloads a model through the repository API.
	UnloadModel(ctx context.Context, model string) error
	// Infer sends one request and decodes the whole response.
	Infer(ctx context.Context, req *InferRequest) (*InferResponse, error)
	// Prepare encodes a request once so that it can be sent many times by
	// Send without encoding tensor data again.
	Prepare(req *InferRequest) (Prepared, error)
	// Send sends a prepared request and returns the size of the response
	// body in bytes without decoding the tensors. This is the driver's hot
	// path.
	Send(ctx context.Context, p Prepared) (int, error)
	// PrepareSequence makes a request prepared by this client into the
	// requests of one sequence of a stateful model, with correlation id
	// id (at least 1): the sequence parameters are encoded once, and the
	// tensors are neither encoded nor copied again.
	PrepareSequence(p Prepared, id uint64) (Sequence, error)
	// OpenStream opens a bidirectional ModelStreamInfer stream. Only the gRPC
	// client supports streaming; HTTP returns an error.
	OpenStream(ctx context.Context) (Stream, error)
	// Close releases the client's connections.
	Close() error
}

// Prepared is a request encoded once for repeated sending. Its contents are
// specific to the Client that made it.
type Prepared interface {
	// Size is the encoded request size in bytes.
	Size() int
}

// Stream is one ModelStreamInfer stream. Send and Recv may be called from
// two different goroutines (one each), as gRPC allows.
type Stream interface {
	// Send sends a prepared request with the given request id, which the
	// server echoes in the matching response.
	Send(p Prepared, id string) error
	// Recv waits for the next response. A request the server failed is a
	// response too, with its error in StreamResponse.Err, and the stream
	// goes on; the error Recv returns is the stream's own failure (io.EOF
	// when the server ended it), after which the stream is done.
	Recv() (StreamResponse, error)
	// CloseSend closes the sending side; Recv then drains the rest.
	CloseSend() error
}

// StreamResponse is one response received on a Stream. A request to a
// decoupled model gets any number of responses, the last one Final; a
// request to any other model gets exactly one, which is Final.
type StreamResponse struct {
	// ID is the id of the request this response answers.
	ID string
	// Size is the response's encoded size in bytes.
	Size int
	// Err is the request's failure, an *Error, when the server answered
	// with an error_message instead of a result; nil on success.
	Err error
	// Final is set on the request's last response: Triton's
	// triton_final_response parameter, or its absence (an older server),
	// which Triton's own clients also take as final.
	Final bool
	// Empty is set when the response carries no outputs. A Final, Empty
	// response without Err is a decoupled model's empty final response,
	// which only says that the request is complete.
	Empty bool
	// Tokens is the output token count a text endpoint's server reported
	// in this response (OpenAI's usage.completion_tokens); 0 when it
	// reported none.
	Tokens int
	// Arrived is when the response reached the client: its message read
	// off the stream, before it was decoded (gRPC), or its event read
	// (text endpoints), perf_analyzer's receive start. Zero when unknown.
	Arrived time.Time
	// Sent is, on a text endpoint's responses, when its request was
	// written (the HTTP transport's WroteRequest); zero where the
	// Stream's Send returning is that instant (gRPC).
	Sent time.Time
}

// InferRequest is one inference request, independent of protocol.
type InferRequest struct {
	Model   string
	Version string
	ID      string
	Inputs  []Tensor
	// Outputs names the outputs to return; empty means all of them.
	Outputs []string
	// Parameters are request-level parameters (string, int64, bool or
	// float64 values).
	Parameters map[string]any
	// JSON makes the HTTP client send tensor data as JSON instead of the
	// binary tensor data extension. The gRPC client ignores it.
	JSON bool
	// OutputSharedMemory places outputs named in Outputs in registered
	// shared-memory regions (see SharedMemoryRef): the server writes them
	// there instead of into the response.
	OutputSharedMemory map[string]SharedMemoryRef
}

// Tensor is a named tensor with its data in Triton's raw form: row-major,
// little-endian, BOOL one byte per element, BYTES elements each preceded by
// a 4-byte little-endian length.
type Tensor struct {
	Name     string
	Datatype string
	Shape    []int64
	Data     []byte
	// SharedMemory, when set, places an input in a registered region:
	// Data is not sent.
	SharedMemory *SharedMemoryRef
}

// InferResponse is a decoded inference response.
type InferResponse struct {
	Model      string
	Version    string
	ID         string
	Outputs    []Tensor
	Parameters map[string]any
}

// Output returns the output with the given name, or false.
func (r *InferResponse) Output(name string) (Tensor, bool) {
	for _, t := range r.Outputs {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}
