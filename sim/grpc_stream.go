package sim

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/tritontop/tritontop/triton/pb"
)

// streamAnswers holds a stream's requests in flight and the answers ready
// to send, in the order they became ready.
type streamAnswers struct {
	mu       sync.Mutex
	inflight map[*request]struct{}
	ready    []answer
	signal   chan struct{}
}

// answer is a request's completion (resp and err nil: its resp or err),
// or one of a decoupled model's responses before the final one (resp, or
// the error it carries).
type answer struct {
	r    *request
	resp *pb.ModelInferResponse
	err  error
}

// completed is each request's onDone: it queues the answer for the
// stream's sender.
func (a *streamAnswers) completed(r *request) {
	a.mu.Lock()
	delete(a.inflight, r)
	a.ready = append(a.ready, answer{r: r})
	a.mu.Unlock()
	a.wake()
}

// responded is each request's onResponse: it queues a decoupled model's
// response that is not the final one.
func (a *streamAnswers) responded(r *request, resp *pb.ModelInferResponse, err error) {
	a.mu.Lock()
	a.ready = append(a.ready, answer{r: r, resp: resp, err: err})
	a.mu.Unlock()
	a.wake()
}

func (a *streamAnswers) wake() {
	select {
	case a.signal <- struct{}{}:
	default:
	}
}

// track remembers a submitted request until it completes, so that the
// stream can cancel it if it ends first. A request that has completed
// already is not tracked: its state is final before its onDone runs.
func (a *streamAnswers) track(r *request) {
	a.mu.Lock()
	if s := r.state.Load(); s == stateQueued || s == stateExecuting || s == stateResponding {
		a.inflight[r] = struct{}{}
	}
	a.mu.Unlock()
}

// take returns the answers not yet sent.
func (a *streamAnswers) take() []answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.ready
	a.ready = nil
	return out
}

// cancelAll cancels what is still in flight when the stream goes away.
func (a *streamAnswers) cancelAll() {
	a.mu.Lock()
	rest := make([]*request, 0, len(a.inflight))
	for r := range a.inflight {
		rest = append(rest, r)
	}
	a.mu.Unlock()
	for _, r := range rest {
		r.version.sched.cancel(r)
	}
}

// ModelStreamInfer implements GRPCInferenceServiceServer. As in Triton,
// requests are validated and queued one after the other in the order they
// arrive, so that the requests of a sequence reach the sequence batcher in
// order, and each response is written when its request completes, so that
// responses may come back in another order than requests went out (the
// id matches them up) but those of one sequence come back in order.
func (g *grpcService) ModelStreamInfer(stream grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	closeOnError := false
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for _, v := range md.Get("triton_grpc_error") {
			if v == "true" {
				closeOnError = true
			}
		}
	}

	var (
		sendMu   sync.Mutex
		closed   bool // set when the handler returns; later sends are dropped
		inflight sync.WaitGroup
		fatal    = make(chan error, 1)
		answers  = &streamAnswers{inflight: map[*request]struct{}{}, signal: make(chan struct{}, 1)}
	)
	defer answers.cancelAll()
	defer func() {
		sendMu.Lock()
		closed = true
		sendMu.Unlock()
	}()
	fail := func(err error) {
		select {
		case fatal <- err:
		default:
		}
		cancel()
	}
	send := func(m *pb.ModelStreamInferResponse) {
		sendMu.Lock()
		var err error
		if !closed {
			err = stream.Send(m)
		}
		sendMu.Unlock()
		if err != nil {
			fail(err)
		}
	}
	// answerError answers a request that failed in execution; refused is
	// true for one refused before it was queued, which Triton answers with
	// an empty (cleared) response beside the error.
	answerError := func(req *pb.ModelInferRequest, err error, refused bool) {
		if ctx.Err() != nil {
			return // the stream is going away; nobody to tell
		}
		if closeOnError {
			fail(grpcError(err))
			return
		}
		if refused {
			send(streamRefused(err))
			return
		}
		send(streamError(req, err))
	}
	respond := func(r *request, resp *pb.ModelInferResponse, final *pb.InferParameter) {
		resp = withoutShmParams(resp)
		if resp.Id == "" {
			resp.Id = r.req.GetId()
		}
		if resp.Parameters == nil {
			resp.Parameters = make(map[string]*pb.InferParameter, 1)
		}
		resp.Parameters["triton_final_response"] = final
		send(&pb.ModelStreamInferResponse{InferResponse: resp})
	}
	complete := func(r *request) {
		defer inflight.Done()
		defer r.budget.giveBack()
		if r.state.Load() == stateCancelled {
			return // given up by the stream as it ended
		}
		if r.err != nil {
			answerError(r.req, r.err, false)
			return
		}
		if r.resp == nil {
			// A decoupled model's final flag without a response, for a
			// request that did not ask for the empty final response:
			// Triton sends nothing.
			return
		}
		respond(r, r.resp, finalResponse)
	}

	// The sender writes answers in the order they became ready.
	go func() {
		for {
			select {
			case <-answers.signal:
			case <-ctx.Done():
				return
			}
			for _, a := range answers.take() {
				switch {
				case a.r.state.Load() == stateCancelled && (a.resp != nil || a.err != nil):
				case a.err != nil && ctx.Err() != nil:
				case a.err != nil && closeOnError:
					fail(grpcError(a.err))
				case a.err != nil:
					send(streamErrorResponse(a.r.req, a.err, notFinalResponse))
				case a.resp != nil:
					respond(a.r, a.resp, notFinalResponse)
				default:
					complete(a.r)
				}
			}
		}
	}()

	hold := holdFrom(ctx)
	defer hold.close()
	received := make(chan error, 1)
	go func() {
		for {
			// A message the budget refused is never read: the stream
			// ends with the refusal.
			if err := hold.awaitMessage(ctx); err != nil {
				received <- grpcError(err)
				return
			}
			in := newInferIn(hold)
			if err := stream.RecvMsg(&in.msg); err != nil {
				received <- err
				return
			}
			req := &in.req
			n, err := hold.popMessage()
			if err != nil {
				received <- grpcError(err)
				return
			}
			inflight.Add(1)
			// The message's reservation, given back once it is answered.
			share := budgetShare{hold: hold, n: n}
			onDone := answers.completed
			if usesShm(req) {
				resolved, outs, err := g.engine.resolveShm(req, &share)
				if err != nil {
					inflight.Done()
					share.giveBack()
					answerError(req, err, true)
					continue
				}
				req = resolved
				onDone = g.engine.shmCompleted(outs, answers.completed)
			}
			r, err := g.engine.submit(req, true, onDone, answers.responded, share)
			if err != nil {
				inflight.Done()
				share.giveBack()
				answerError(req, err, true)
				continue
			}
			answers.track(r)
		}
	}()

	select {
	case err := <-fatal:
		return err
	case err := <-received:
		if !errors.Is(err, io.EOF) {
			return err
		}
	}
	// The client closed its side (the receiver has stopped adding work):
	// answer what is still in flight, then end the stream.
	done := make(chan struct{})
	go func() { inflight.Wait(); close(done) }()
	select {
	case <-done:
		select {
		case err := <-fatal:
			return err
		default:
			return nil
		}
	case err := <-fatal:
		return err
	}
}
