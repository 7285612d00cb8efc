package triton

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/tokenizer"
)

// textStream is a Stream over a text endpoint: each Send is one
// HTTP request whose server-sent events are parsed as they arrive, each a
// response of the request: one with a token (an OpenAI chunk with content,
// a generate_stream event with text_output), or an empty one (the role
// chunk, the usage chunk), or an error. The request's final response, empty,
// comes when its stream ends ("data: [DONE]" or the end of the body). An
// answer in one body (an endpoint asked not to stream) is one response
// carrying its output tokens (usage, or its text tokenized).
type textStream struct {
	c   *httpClient
	ctx context.Context
	out chan StreamResponse

	wg      sync.WaitGroup
	mu      sync.Mutex
	closing bool
	ended   chan struct{} // closed when CloseSend was called and every request ended
}

// openTextStream implements OpenStream for a streaming text endpoint.
func (c *httpClient) openTextStream(ctx context.Context) *textStream {
	return &textStream{c: c, ctx: ctx, out: make(chan StreamResponse), ended: make(chan struct{})}
}

// Send implements Stream: the request runs on its own goroutine.
func (s *textStream) Send(p Prepared, id string) error {
	tp, ok := p.(*textPrepared)
	if !ok {
		return errForeignPrepared
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errors.New("send on a stream closed for sending")
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	s.wg.Add(1)
	go s.run(tp, id)
	return nil
}

// Recv implements Stream.
func (s *textStream) Recv() (StreamResponse, error) {
	select {
	case r := <-s.out:
		return r, nil
	case <-s.ended:
		return StreamResponse{}, io.EOF
	case <-s.ctx.Done():
		return StreamResponse{}, s.ctx.Err()
	}
}

// CloseSend implements Stream: Recv ends with io.EOF once the requests in
// flight end.
func (s *textStream) CloseSend() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		s.closing = true
		go func() { s.wg.Wait(); close(s.ended) }()
	}
	return nil
}

// deliver hands a response to Recv, or drops it when the stream's context
// ended.
func (s *textStream) deliver(r StreamResponse) bool {
	select {
	case s.out <- r:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// run sends one request and delivers its responses, each with when it
// arrived and when the request was written (StreamResponse.Arrived, Sent).
func (s *textStream) run(p *textPrepared, id string) {
	defer s.wg.Done()
	var wrote wroteAt
	resp, err := s.c.postText(wrote.trace(s.ctx), p)
	if err != nil {
		if s.ctx.Err() == nil {
			s.deliver(StreamResponse{ID: id, Err: err, Final: true, Empty: true, Arrived: time.Now(), Sent: wrote.at()})
		}
		return
	}
	defer resp.Body.Close()
	sent := wrote.at()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// Failed before it began (a JSON error), or an answer in one
		// body (an endpoint asked not to stream): one response, with
		// its tokens, arrived with its headers.
		arrived := time.Now()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxTextAnswer))
		if err != nil && s.ctx.Err() != nil {
			return
		}
		if resp.StatusCode != http.StatusOK || err != nil {
			final := StreamResponse{ID: id, Size: len(b), Final: true, Empty: true, Arrived: arrived, Sent: sent}
			if err != nil {
				final.Err = &Error{Code: codes.Unavailable, Message: "read " + string(s.c.text.kind) + " answer: " + err.Error()}
			} else {
				final.Err = textError(resp.StatusCode, b)
			}
			s.deliver(final)
			return
		}
		r := StreamResponse{ID: id, Size: len(b), Arrived: arrived, Sent: sent}
		r.Tokens, r.Err = answerTokens(s.c.text.kind, b)
		r.Empty = r.Err != nil
		if s.deliver(r) {
			s.deliver(StreamResponse{ID: id, Final: true, Empty: true, Arrived: arrived, Sent: sent})
		}
		return
	}
	kind := s.c.text.kind
	sr := NewSSEReader(resp.Body)
	var ev textEvent
	for {
		e, err := sr.Next()
		arrived := time.Now()
		if err != nil {
			final := StreamResponse{ID: id, Final: true, Empty: true, Arrived: arrived, Sent: sent}
			if !errors.Is(err, io.EOF) {
				if s.ctx.Err() != nil {
					return
				}
				final.Err = &Error{Code: codes.Unavailable, Message: "read " + string(kind) + " stream: " + err.Error()}
			}
			s.deliver(final)
			return
		}
		if string(e.Data) == "[DONE]" {
			s.deliver(StreamResponse{ID: id, Size: e.Size, Final: true, Empty: true, Arrived: arrived, Sent: sent})
			return
		}
		r := StreamResponse{ID: id, Size: e.Size, Empty: true, Arrived: arrived, Sent: sent}
		ev.reset()
		if json.Unmarshal(e.Data, &ev) != nil {
			r.Err = &Error{Code: codes.Internal, Message: "a " + string(kind) + " event is not JSON: " + oneLine(string(e.Data))}
		} else if len(ev.Error) > 0 && string(ev.Error) != "null" {
			r.Err = textError(resp.StatusCode, e.Data)
		} else {
			r.Empty = !ev.token(kind)
			r.Tokens = ev.completionTokens()
		}
		if !s.deliver(r) {
			return
		}
	}
}

// wroteAt notes when the HTTP transport wrote a request (its WroteRequest
// hook, which runs on the transport's goroutine).
type wroteAt struct {
	start time.Time
	ns    atomic.Int64 // since start, +1; 0: not yet
}

// trace returns ctx with the hook that notes the instant.
func (w *wroteAt) trace(ctx context.Context) context.Context {
	w.start = time.Now()
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { w.ns.Store(int64(time.Since(w.start)) + 1) },
	})
}

// at is when the request was written, zero before.
func (w *wroteAt) at() time.Time {
	if n := w.ns.Load(); n > 0 {
		return w.start.Add(time.Duration(n - 1))
	}
	return time.Time{}
}

// textEvent is what a streamed event of any text endpoint may carry. Its
// fields are values, reused from event to event, so that decoding a token
// allocates little (BenchmarkSSEChatStream).
type textEvent struct {
	TextOutput *string         `json:"text_output"`
	Error      json.RawMessage `json:"error"`
	Choices    []textChoice    `json:"choices"`
	Usage      struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// textChoice is an OpenAI chunk's choice: a chat delta's content, or a
// completion's text.
type textChoice struct {
	Delta struct {
		Content string `json:"content"`
	} `json:"delta"`
	Text string `json:"text"`
}

func (e *textEvent) reset() {
	e.TextOutput, e.Error, e.Choices = nil, e.Error[:0], e.Choices[:0]
	e.Usage.CompletionTokens = 0
}

// token reports whether the event carries generated text: one response of
// the model, one token when the server streams a token per response.
func (e *textEvent) token(kind Endpoint) bool {
	if kind == EndpointGenerateStream {
		return e.TextOutput != nil
	}
	for _, c := range e.Choices {
		if c.Delta.Content != "" || c.Text != "" {
			return true
		}
	}
	return false
}

// completionTokens is the usage's completion_tokens, 0 without usage.
func (e *textEvent) completionTokens() int {
	return e.Usage.CompletionTokens
}

// maxTextAnswer bounds the answer in one body that is read and decoded.
const maxTextAnswer = 64 << 20

// answerTokens counts the output tokens of an answer in one body: OpenAI's
// usage.completion_tokens, or else the tokens of its text (generate's
// text_output, the objects of a model that streamed anyway added up; an
// OpenAI answer's choices) with the embedded tokenizer.
func answerTokens(kind Endpoint, body []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var text strings.Builder
	for {
		var a struct {
			TextOutput string `json:"text_output"`
			Choices    []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
				Text string `json:"text"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := dec.Decode(&a); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, &Error{Code: codes.Internal, Message: "a " + string(kind) + " answer is not JSON: " + oneLine(string(body))}
		}
		if a.Usage.CompletionTokens > 0 {
			return a.Usage.CompletionTokens, nil
		}
		text.WriteString(a.TextOutput)
		for _, c := range a.Choices {
			text.WriteString(c.Message.Content)
			text.WriteString(c.Text)
		}
	}
	tk, err := tokenizer.Load()
	if err != nil {
		return 0, err
	}
	return tk.Count(text.String()), nil
}
