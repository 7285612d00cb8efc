package driver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// stream is one of the run's ModelStreamInfer streams, shared by the
// workers assigned to it. Responses are matched to requests by id: the id
// "<worker>-<seq>" names the worker directly, so the receiver needs no map
// and no lock to find who waits for a response.
type stream struct {
	r  *run
	mu sync.Mutex // serializes Send (gRPC allows one sender) and reopening
	c  *conn
}

// conn is one opened stream; dead is closed when its receiver saw the
// stream fail, and err says why.
type conn struct {
	s    triton.Stream
	dead chan struct{}
	err  error
}

func (r *run) openStreams() error {
	r.streams = make([]*stream, r.d.opts.Streams)
	for i := range r.streams {
		s := &stream{r: r}
		s.mu.Lock()
		_, err := s.connLocked()
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("driver: streaming: %w", err)
		}
		r.streams[i] = s
	}
	return nil
}

// connLocked returns the live conn, opening a new one if the last failed.
func (s *stream) connLocked() (*conn, error) {
	if s.c != nil {
		select {
		case <-s.c.dead:
		default:
			return s.c, nil
		}
	}
	r := s.r
	if err := r.reqCtx.Err(); err != nil {
		return nil, err
	}
	st, err := r.d.opts.Client.OpenStream(r.reqCtx)
	if err != nil {
		return nil, fmt.Errorf("open stream: %w", err)
	}
	c := &conn{s: st, dead: make(chan struct{})}
	s.c = c
	r.streamWG.Add(1)
	go r.receive(c)
	return c, nil
}

func (s *stream) send(p triton.Prepared, id string) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.connLocked()
	if err != nil {
		return nil, err
	}
	if err := c.s.Send(p, id); err != nil {
		return nil, fmt.Errorf("stream send: %w", err)
	}
	return c, nil
}

func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		_ = s.c.s.CloseSend()
	}
}

// receive delivers a conn's responses to the workers that wait for them
// until the stream ends.
func (r *run) receive(c *conn) {
	defer r.streamWG.Done()
	for {
		resp, err := c.s.Recv()
		if err != nil {
			c.err = err
			close(c.dead)
			return
		}
		wid, seq, ok := parseID(resp.ID)
		if !ok {
			continue
		}
		// A response whose request already timed out finds pending
		// changed and is dropped.
		if w := r.workers.get(wid); w != nil && w.pending.CompareAndSwap(seq, 0) {
			w.reply <- streamReply{size: resp.Size, err: resp.Err}
		}
	}
}

// tryStream sends one request over the worker's stream and waits for its
// response, the per-request timeout, the stream's failure or cancellation.
func (w *worker) tryStream(p triton.Prepared) (int, error) {
	r := w.r
	w.seq++
	seq := w.seq
	w.idBuf = strconv.AppendUint(w.idBuf[:0], uint64(w.id), 10)
	w.idBuf = append(w.idBuf, '-')
	w.idBuf = strconv.AppendUint(w.idBuf, seq, 10)
	w.pending.Store(seq)
	c, err := w.stream.send(p, string(w.idBuf))
	if err != nil {
		w.pending.Store(0)
		return 0, err
	}
	var timeout <-chan time.Time
	if t := r.d.opts.Timeout; t > 0 {
		w.timer.Reset(t)
		timeout = w.timer.C
	}
	var fail error
	select {
	case rep := <-w.reply:
		w.timer.Stop()
		return rep.size, rep.err
	case <-timeout:
		fail = context.DeadlineExceeded
	case <-c.dead:
		fail = fmt.Errorf("stream: %w", c.err)
	case <-r.reqCtx.Done():
		fail = r.reqCtx.Err()
	}
	w.timer.Stop()
	if w.pending.CompareAndSwap(seq, 0) {
		return 0, fail
	}
	// The response won the race and is on its way.
	rep := <-w.reply
	return rep.size, rep.err
}

// parseID parses "<worker>-<seq>" without allocating.
func parseID(id string) (worker int, seq uint64, ok bool) {
	var n uint64
	i := 0
	for ; i < len(id) && id[i] != '-'; i++ {
		c := id[i]
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if i == 0 || i >= len(id)-1 {
		return 0, 0, false
	}
	for _, c := range []byte(id[i+1:]) {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		seq = seq*10 + uint64(c-'0')
	}
	return int(n), seq, seq != 0
}
