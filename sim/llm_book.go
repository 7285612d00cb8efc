package sim

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// MaxLLMRecords is how many finished requests an LLM model keeps for
// LLMStats, the most recent ones.
const MaxLLMRecords = 4096

// LLMOutcome says how a request to an LLM model ended.
type LLMOutcome string

// LLM request outcomes.
const (
	// LLMDone: it generated all its tokens.
	LLMDone LLMOutcome = "done"
	// LLMCancelled: its stream went away first.
	LLMCancelled LLMOutcome = "cancelled"
	// LLMFailed: the model failed it (an injected error).
	LLMFailed LLMOutcome = "failed"
)

// LLMRequest is one finished request to an LLM model as the server timed
// it, from its arrival; the times a response is "handed over" are when the
// model gave it to the frontend, just before it goes on the wire.
type LLMRequest struct {
	ID string
	// PromptTokens counts the tokens of its text_input; MaxTokens is what
	// it asked for (0: nothing); Tokens is what the model chose to
	// generate, at most MaxTokens.
	PromptTokens, MaxTokens, Tokens int
	Stream                          bool
	// InFlightAtArrival is how many requests of the model version the
	// server held when it arrived (queued or running, each until its final
	// response), itself included.
	InFlightAtArrival int
	// Arrival is when it arrived, from the engine's start: the gaps
	// between requests' arrivals are the gaps between their sends.
	Arrival time.Duration
	// Queue is the time until an instance took it in.
	Queue time.Duration
	// Responses counts its responses with outputs; FirstResponse is when
	// the first was handed over, Gaps the times between consecutive ones,
	// Final when its final response was.
	Responses     int
	FirstResponse time.Duration
	Gaps          []time.Duration
	Final         time.Duration
	Outcome       LLMOutcome
}

// LLMStats is an LLM model's own account of its requests.
type LLMStats struct {
	Model, Version string
	// InFlight is how many requests the server holds now: queued or
	// running, each until its final response.
	InFlight int
	// Requests are the most recent finished requests (MaxLLMRecords at
	// most), oldest first.
	Requests []LLMRequest
}

// llmBook keeps an LLM model's finished requests; its instances write it,
// LLMStats reads it.
type llmBook struct {
	mu   sync.Mutex
	recs []LLMRequest
	next int // where the next record goes once recs is full

	// counts are the token counts of recent prompts, by the prompt: a
	// load generator sends the same prompts again and again, and
	// tokenizing one takes long next to a request's other work.
	countsMu sync.Mutex
	counts   map[string]int
}

// maxPromptCounts bounds the prompts whose counts are kept.
const maxPromptCounts = 1024

// promptTokens counts the tokens of request r's prompt, from the counts
// kept when it came before.
func (b *llmBook) promptTokens(m *model, r *request) int {
	i, ok := m.inputIdx[llmTextInput]
	if !ok || i >= len(r.data) {
		return 0
	}
	elems, err := kserve.DecodeBytes(r.data[i], 1)
	if err != nil || len(elems) == 0 {
		return 0
	}
	b.countsMu.Lock()
	n, ok := b.counts[string(elems[0])]
	b.countsMu.Unlock()
	if ok {
		return n
	}
	n = countTokens(elems[0])
	b.countsMu.Lock()
	if b.counts == nil || len(b.counts) >= maxPromptCounts {
		b.counts = make(map[string]int)
	}
	b.counts[string(elems[0])] = n
	b.countsMu.Unlock()
	return n
}

// keep records a finished request.
func (b *llmBook) keep(q *llmSeq) {
	rec := q.rec
	rec.PromptTokens, rec.MaxTokens, rec.Tokens, rec.Stream = q.job.prompt, q.job.maxTokens, q.job.tokens, q.job.stream
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recs) < MaxLLMRecords {
		b.recs = append(b.recs, rec)
		return
	}
	b.recs[b.next] = rec
	b.next = (b.next + 1) % MaxLLMRecords
}

// list copies the records, oldest first.
func (b *llmBook) list() []LLMRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]LLMRequest, 0, len(b.recs))
	out = append(out, b.recs[b.next:]...)
	out = append(out, b.recs[:b.next]...)
	for i := range out {
		out[i].Gaps = slices.Clone(out[i].Gaps)
	}
	return out
}

// latestVersion returns a model's latest loaded version.
func (e *Engine) latestVersion(model string) (*modelVersion, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	m, ok := e.models[model]
	if !ok {
		return nil, unknownModel(model)
	}
	if len(m.versions) == 0 {
		return nil, fmt.Errorf("model '%s' is not loaded", textsafe.Bound(model))
	}
	return m.versions[len(m.versions)-1], nil
}

// InFlight returns how many requests to a model's latest loaded version
// the server holds: queued or executing, a decoupled model's each until
// its final response is handed over, which is before the client can hear
// of it.
func (e *Engine) InFlight(model string) (int, error) {
	mv, err := e.latestVersion(model)
	if err != nil {
		return 0, err
	}
	return int(mv.held.Load()), nil
}

// LLMStats returns an LLM model's account of its latest loaded version:
// the requests held now and how each recent request was timed. A model
// without an llm section is an error.
func (e *Engine) LLMStats(model string) (LLMStats, error) {
	mv, err := e.latestVersion(model)
	if err != nil {
		return LLMStats{}, err
	}
	if mv.sched.llm == nil {
		return LLMStats{}, fmt.Errorf("model '%s' is not an LLM (no llm section)", textsafe.Bound(model))
	}
	return LLMStats{Model: model, Version: mv.label, InFlight: int(mv.held.Load()), Requests: mv.sched.llm.list()}, nil
}
