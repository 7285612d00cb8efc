package driver

import (
	"context"
	"fmt"
	"math"
	"slices"
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

	endpoint uint16 // the replica the stream is on
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
	c := &conn{s: st, endpoint: streamEndpoint(st), dead: make(chan struct{})}
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
	var t *timings
	if r.d.opts.Decoupled {
		t = &timings{r: r}
	}
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
		if t != nil {
			t.add(wid, seq, &resp)
			continue
		}
		// A response whose request already timed out finds pending
		// changed and is dropped.
		if w := r.workers.get(wid); w != nil && w.pending.CompareAndSwap(seq, 0) {
			w.reply <- streamReply{size: resp.Size, err: resp.Err, arrived: r.since(resp.Arrived), sent: r.since(resp.Sent)}
		}
	}
}

// timings follows the requests of a decoupled model on one conn until their
// final responses. It belongs to the conn's receiver, so it needs no lock;
// a worker has one request in flight, so one progress per worker will do.
type timings struct {
	r    *run
	prog []progress
}

// progress is one request's responses so far.
type progress struct {
	seq       uint64
	size      int
	err       error
	responses int32
	tokens    int32 // the server's count of output tokens, if it sent one
	first     time.Duration
	last      time.Duration
	gaps      []time.Duration // reused from request to request
	done      bool            // the final response came
}

// add counts a response of worker wid's request seq and, at its final
// response, hands the request's account to the worker.
func (t *timings) add(wid int, seq uint64, resp *triton.StreamResponse) {
	if wid >= len(t.prog) {
		t.prog = append(t.prog, make([]progress, wid+1-len(t.prog))...)
	}
	p := &t.prog[wid]
	switch {
	case seq < p.seq || seq == p.seq && p.done:
		// A request the worker gave up on (timeout) still answering, or
		// answering past its final response: nobody waits for it.
		return
	case seq > p.seq:
		*p = progress{seq: seq, gaps: p.gaps[:0]}
	}
	now := t.r.now()
	p.size += resp.Size
	if resp.Tokens > 0 {
		p.tokens = int32(min(resp.Tokens, math.MaxInt32))
	}
	switch {
	case resp.Err != nil:
		if p.err == nil {
			p.err = resp.Err
		}
	case !resp.Empty:
		if p.responses == 0 {
			p.first = now
		} else {
			p.gaps = append(p.gaps, now-p.last)
		}
		p.last = now
		p.responses++
	}
	if !resp.Final {
		return
	}
	rep := streamReply{size: p.size, err: p.err, done: now, responses: p.responses,
		arrived: t.r.since(resp.Arrived), sent: t.r.since(resp.Sent)}
	if p.responses > 0 && p.err == nil {
		tokens := p.tokens
		if tokens == 0 && t.r.d.textTokens {
			// An LLM's responses are its tokens.
			tokens = p.responses
		}
		rep.timing = &ResponseTiming{First: p.first, Gaps: slices.Clone(p.gaps), Tokens: tokens}
	}
	p.done = true
	if w := t.r.workers.get(wid); w != nil && w.pending.CompareAndSwap(seq, 0) {
		w.reply <- rep
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
	if r.d.opts.Decoupled {
		w.last = streamReply{}
	}
	w.sphases.start = r.now()
	c, err := w.stream.send(p, string(w.idBuf))
	if err != nil {
		w.pending.Store(0)
		return 0, err
	}
	w.sphases.sent, w.sphases.arrived = r.now(), 0
	w.endpoint = c.endpoint
	var timeout <-chan time.Time
	if t := r.d.opts.Timeout; t > 0 {
		w.timer.Reset(t)
		timeout = w.timer.C
	}
	var fail error
	select {
	case rep := <-w.reply:
		w.timer.Stop()
		w.sphases.reply(&rep)
		if rep.done > 0 {
			w.last = rep
		}
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
	w.sphases.reply(&rep)
	if rep.done > 0 {
		w.last = rep
	}
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
