package sim

import (
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/tokenizer"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// llmSeq is one request running on an LLM instance.
type llmSeq struct {
	r   *request
	job llmJob
	rec LLMRequest
	// admitted is when the instance took it in; last when its last
	// response was handed over (the start of the next one's time).
	admitted, last int64
	generated      int
	text           []string      // the tokens, kept only when not streaming
	lastAt         time.Duration // when the last response was handed over, from arrival
}

// runLLM is the loop of one instance of an LLM model (LLMSpec): it admits
// queued requests up to its in-flight batch, runs one iteration (the
// admitted requests' prefill plus a decoding step for all), and hands every
// running request its next token, until the scheduler stops.
func (s *scheduler) runLLM(in *instance) {
	defer s.wg.Done()
	// The tokenizer that counts the prompts loads once per process; load
	// it before the first request waits for it.
	_, _ = tokenizer.Load()
	m := s.mv.model
	spec := m.spec.LLM
	maxSeqs := spec.MaxSequences
	if maxSeqs <= 0 {
		maxSeqs = DefaultLLMMaxSequences
	}
	var running []*llmSeq
	sl := newSleeper()
	for {
		if wait := s.e.stallLeft(); wait > 0 {
			if !sl.sleep(min(wait, 20*time.Millisecond), nil, s.stop) {
				in.failLLM(running)
				return
			}
			continue
		}
		admitted, draining := s.admitLLM(maxSeqs - len(running))
		running = in.dropCancelled(running)
		if len(running)+len(admitted) == 0 {
			if draining {
				return
			}
			select {
			case <-s.wake:
			case <-s.stop:
				return
			}
			continue
		}
		t0 := s.e.now()
		var prefill time.Duration
		for _, q := range admitted {
			q.job = m.llmJob(q.r, in.rng)
			q.admitted = t0
			q.last = t0
			q.rec.Queue = time.Duration(t0 - q.r.start)
			prefill += spec.prefill(q.job.prompt)
		}
		running = append(running, admitted...)
		iter := spec.jitter(spec.decode(len(running))+prefill, in.rng)
		f := s.e.currentFaults()
		if f.SpikeRate > 0 && f.SpikeDelay > 0 && in.rng.Float64() < f.SpikeRate {
			iter += f.SpikeDelay
		}
		t1, shared, ok := in.occupy(t0, iter)
		if !ok {
			in.failLLM(running)
			return
		}
		if len(admitted) > 0 {
			// The iteration that took them in ran their prefill, slowed
			// as much as the iteration was on a shared GPU.
			if shared && iter > 0 {
				prefill = time.Duration(float64(prefill) * float64(t1-t0) / float64(iter))
			}
			pre := t0 + int64(prefill)
			s.mv.stats.recordAdmission(len(admitted), execTimes{start: t0, inputEnd: t0, outputStart: min(pre, t1), end: min(pre, t1)},
				in.gpuUUID, time.Now().UnixMilli())
			if f.ErrorRate > 0 {
				keep := running[:0]
				for _, q := range running {
					if q.generated == 0 && in.rng.Float64() < f.ErrorRate {
						in.failOne(q, &kserve.Error{Code: codes.Internal, Message: simulatedFailure}, t1)
						continue
					}
					keep = append(keep, q)
				}
				running = keep
			}
		}
		keep := running[:0]
		for _, q := range running {
			if q.r.state.Load() == stateCancelled {
				in.cancelOne(q)
				continue
			}
			if in.token(q, t1) {
				continue
			}
			keep = append(keep, q)
		}
		clear(running[len(keep):])
		running = keep
	}
}

// admitLLM takes up to room live requests off the head of the queue,
// marked executing, and says whether the scheduler drains.
func (s *scheduler) admitLLM(room int) ([]*llmSeq, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.e.now()
	var out []*llmSeq
	for room > len(out) && s.head < len(s.queue) {
		r := s.queue[s.head]
		s.queue[s.head] = nil
		s.head++
		if s.expire(r, now) || !r.state.CompareAndSwap(stateQueued, stateExecuting) {
			continue
		}
		s.pending.Add(-1)
		out = append(out, &llmSeq{r: r, rec: LLMRequest{ID: r.req.GetId(), InFlightAtArrival: int(r.heldAtArrival), Arrival: time.Duration(r.start)}})
	}
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	} else if s.head > 1024 && s.head > len(s.queue)/2 {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	return out, s.draining && len(out) == 0 && s.head == len(s.queue)
}

// token hands a running request its next token at t (the end of the
// iteration that made it) and reports whether that was its last.
func (in *instance) token(q *llmSeq, t int64) bool {
	s := in.s
	m := s.mv.model
	q.generated++
	word := tokenWords[(q.generated-1)%len(tokenWords)]
	last := q.generated >= q.job.tokens
	if !q.job.stream {
		q.text = append(q.text, word)
		if !last {
			return false
		}
		word = strings.Join(q.text, " ")
	}
	resp := m.llmResponse(q.r, q.job.output, word)
	index := q.rec.Responses
	final := last && !m.spec.LLM.EmptyFinal
	end := s.e.now()
	s.mv.stats.recordResponse(index, responseSuccess, q.last, t, end)
	q.note(end)
	q.last = end
	if !final {
		if q.r.onResponse != nil {
			q.r.onResponse(q.r, resp, nil)
		}
		if !last {
			return false
		}
		// The final flag goes apart, as an empty response.
		end = s.e.now()
		s.mv.stats.recordResponse(index+1, responseEmpty, q.last, end, end)
		resp = nil
		if q.job.emptyFinal {
			// Triton's frontend names the version as the request did.
			resp = &pb.ModelInferResponse{ModelName: m.name, ModelVersion: q.r.req.GetModelVersion(), Id: q.r.req.GetId()}
		}
	}
	if !q.r.state.CompareAndSwap(stateExecuting, stateDone) {
		// Cancelled meanwhile: the cancel is recorded already.
		q.rec.Outcome = LLMCancelled
		q.rec.Final = time.Duration(end - q.r.start)
		s.llm.keep(q)
		q.r.complete()
		return true
	}
	s.mv.stats.recordLLMSuccess(q.r, q.admitted, t, end, in.gpuUUID)
	q.rec.Final = time.Duration(end - q.r.start)
	q.rec.Outcome = LLMDone
	s.llm.keep(q)
	q.r.resp = resp
	q.r.complete()
	return true
}

// note records a response handed over at t.
func (q *llmSeq) note(t int64) {
	at := time.Duration(t - q.r.start)
	if q.rec.Responses == 0 {
		q.rec.FirstResponse = at
	} else {
		q.rec.Gaps = append(q.rec.Gaps, at-q.lastAt)
	}
	q.lastAt = at
	q.rec.Responses++
}

// llmResponse is a response carrying text on output j (none when j < 0).
func (m *model) llmResponse(r *request, j int, text string) *pb.ModelInferResponse {
	resp := &pb.ModelInferResponse{ModelName: m.name, ModelVersion: r.version.label, Id: r.req.GetId()}
	if j >= 0 {
		resp.Outputs = []*pb.ModelInferResponse_InferOutputTensor{{Name: m.outputs[j].name, Datatype: "BYTES", Shape: []int64{1}}}
		resp.RawOutputContents = [][]byte{kserve.EncodeBytes([][]byte{[]byte(text)})}
	}
	return resp
}

// dropCancelled ends the running requests whose caller gave up.
func (in *instance) dropCancelled(running []*llmSeq) []*llmSeq {
	keep := running[:0]
	for _, q := range running {
		if q.r.state.Load() == stateCancelled {
			in.cancelOne(q)
			continue
		}
		keep = append(keep, q)
	}
	clear(running[len(keep):])
	return keep
}

// cancelOne ends a request cancelled while running: the response it was
// working on counts as cancelled (the request's failure is recorded by
// the cancel), and it completes so that its stream stops waiting.
func (in *instance) cancelOne(q *llmSeq) {
	s := in.s
	now := s.e.now()
	s.mv.stats.recordResponse(q.rec.Responses, responseCancel, q.last, now, now)
	q.rec.Outcome = LLMCancelled
	q.rec.Final = time.Duration(now - q.r.start)
	s.llm.keep(q)
	q.r.complete()
}

// failOne fails a running request with err (a BACKEND failure).
func (in *instance) failOne(q *llmSeq, err error, t int64) {
	s := in.s
	if !q.r.state.CompareAndSwap(stateExecuting, stateDone) {
		in.cancelOne(q)
		return
	}
	now := s.e.now()
	s.mv.stats.recordResponse(q.rec.Responses, responseFail, q.last, t, now)
	s.mv.stats.recordFailure(now-q.r.start, reasonBackend)
	q.rec.Outcome = LLMFailed
	q.rec.Final = time.Duration(now - q.r.start)
	s.llm.keep(q)
	q.r.err = err
	q.r.complete()
}

// failLLM fails the running requests when the scheduler stops.
func (in *instance) failLLM(running []*llmSeq) {
	now := in.s.e.now()
	for _, q := range running {
		if q.r.state.CompareAndSwap(stateExecuting, stateDone) {
			in.s.mv.stats.recordFailure(now-q.r.start, reasonOther)
			q.r.err = errStopping
		}
		q.r.complete()
	}
}
