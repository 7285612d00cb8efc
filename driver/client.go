package driver

import (
	"context"

	"github.com/tritontop/tritontop/triton"
)

// Client is what the driver needs of a Triton client: each request is
// prepared once, then sent unary or over ModelStreamInfer streams. A
// triton.Client satisfies it; declaring only these methods here keeps
// test clients, and any other transport, to what the driver really calls.
type Client interface {
	// Prepare encodes a request once for repeated sending.
	Prepare(req *triton.InferRequest) (triton.Prepared, error)
	// Send sends a prepared request and returns the response size in bytes.
	Send(ctx context.Context, p triton.Prepared) (int, error)
	// OpenStream opens a stream; it is called only when Options.Streaming
	// is set.
	OpenStream(ctx context.Context) (triton.Stream, error)
}

var _ Client = triton.Client(nil)
