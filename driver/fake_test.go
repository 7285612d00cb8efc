package driver

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// nopClient answers every Send at once without any I/O: it isolates the
// driver's own cost per request in benchmarks.
type nopClient struct {
	sends atomic.Int64
	delay time.Duration
}

type nopPrepared struct{ size int }

func (p nopPrepared) Size() int { return p.size }

func (c *nopClient) Send(ctx context.Context, p triton.Prepared) (int, error) {
	c.sends.Add(1)
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return 64, nil
}

func (c *nopClient) Prepare(req *triton.InferRequest) (triton.Prepared, error) {
	return nopPrepared{size: 128}, nil
}

func (c *nopClient) ServerLive(context.Context) (bool, error)  { return true, nil }
func (c *nopClient) ServerReady(context.Context) (bool, error) { return true, nil }
func (c *nopClient) ServerMetadata(context.Context) (*pb.ServerMetadataResponse, error) {
	return nil, errors.New("not implemented")
}
func (c *nopClient) ModelReady(context.Context, string, string) (bool, error) { return true, nil }
func (c *nopClient) ModelMetadata(context.Context, string, string) (*pb.ModelMetadataResponse, error) {
	return nil, errors.New("not implemented")
}
func (c *nopClient) ModelConfig(context.Context, string, string) (*pb.ModelConfig, error) {
	return nil, errors.New("not implemented")
}
func (c *nopClient) ModelStatistics(context.Context, string, string) (*pb.ModelStatisticsResponse, error) {
	return nil, errors.New("not implemented")
}
func (c *nopClient) RepositoryIndex(context.Context, bool) ([]*pb.RepositoryIndexResponse_ModelIndex, error) {
	return nil, errors.New("not implemented")
}
func (c *nopClient) Infer(context.Context, *triton.InferRequest) (*triton.InferResponse, error) {
	return nil, errors.New("not implemented")
}
func (c *nopClient) OpenStream(ctx context.Context) (triton.Stream, error) {
	return &nopStream{ctx: ctx, ids: make(chan string, 1024)}, nil
}

// nopStream answers every request at once, in order.
type nopStream struct {
	ctx context.Context
	ids chan string
}

func (s *nopStream) Send(p triton.Prepared, id string) error {
	select {
	case s.ids <- id:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

func (s *nopStream) Recv() (triton.StreamResponse, error) {
	select {
	case id, ok := <-s.ids:
		if !ok {
			return triton.StreamResponse{}, io.EOF
		}
		return triton.StreamResponse{ID: id, Size: 64}, nil
	case <-s.ctx.Done():
		return triton.StreamResponse{}, s.ctx.Err()
	}
}

func (s *nopStream) CloseSend() error { return nil }
func (c *nopClient) Close() error     { return nil }
