package driver

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// nopClient answers every Send at once without any I/O: it isolates the
// driver's own cost per request in benchmarks.
type nopClient struct {
	sends atomic.Int64
	delay time.Duration
	// responses, when above 0, makes its streams answer each request with
	// that many responses, the last one final, as a decoupled model does.
	responses int
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

func (c *nopClient) OpenStream(ctx context.Context) (triton.Stream, error) {
	return &nopStream{ctx: ctx, ids: make(chan string, 1024), responses: c.responses}, nil
}

// nopStream answers every request at once, in order.
type nopStream struct {
	ctx       context.Context
	ids       chan string
	responses int
	cur       string // the request being answered, decoupled only
	left      int    // its responses still to come
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
	if s.left > 0 {
		s.left--
		return triton.StreamResponse{ID: s.cur, Size: 16, Final: s.left == 0}, nil
	}
	select {
	case id, ok := <-s.ids:
		if !ok {
			return triton.StreamResponse{}, io.EOF
		}
		if s.responses > 1 {
			s.cur, s.left = id, s.responses-1
			return triton.StreamResponse{ID: id, Size: 16}, nil
		}
		return triton.StreamResponse{ID: id, Size: 64, Final: true}, nil
	case <-s.ctx.Done():
		return triton.StreamResponse{}, s.ctx.Err()
	}
}

func (s *nopStream) CloseSend() error { return nil }

// nopSeqClient is nopClient for a stateful model: its sequences' requests
// are answered at once, like any other.
type nopSeqClient struct{ nopClient }

func (c *nopSeqClient) PrepareSequence(p triton.Prepared, id uint64) (triton.Sequence, error) {
	return nopSequence{}, nil
}

type nopSequence struct{}

func (nopSequence) Request(start, end bool) triton.Prepared { return nopPrepared{size: 140} }
