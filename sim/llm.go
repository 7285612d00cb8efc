package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tritontop/tritontop/internal/tokenizer"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// LLMSpec makes a decoupled model generate text the way a large language
// model served with in-flight batching does (TensorRT-LLM, vLLM): each
// instance runs up to MaxSequences requests at once in iterations; an
// iteration gives every running request its next token, and admits queued
// requests, whose prefill (the prompt's processing) it includes and which
// produce their first token at its end. So the time to first token grows
// with the prompt and with the queue, and the time per token with the
// number of requests running.
//
// The model reads its prompt from the BYTES input "text_input" (its tokens
// counted with the embedded cl100k_base tokenizer), the number of tokens asked for from the integer input
// "max_tokens" or else the request parameter "max_tokens" (and at least
// the request parameter "min_tokens", when given), and whether to
// stream from the BOOL input "stream" (true without one). Streaming, it
// sends one response per token on its first BYTES output (the token's
// word); otherwise one response with every token at the end.
//
//	"llm": {"prefill_us": 20000, "prefill_per_token_us": 50,
//	        "token_us": 15000, "token_per_sequence_us": 500, "jitter": 0.05,
//	        "max_sequences": 64,
//	        "output_tokens": {"mean": 128, "stddev": 32, "min": 16, "max": 256},
//	        "empty_final": false}
type LLMSpec struct {
	// PrefillUS + PrefillPerTokenUS × prompt tokens is a request's
	// prefill, added to the iteration that admits it.
	PrefillUS         float64 `json:"prefill_us"`
	PrefillPerTokenUS float64 `json:"prefill_per_token_us"`
	// TokenUS + TokenPerSequenceUS × (running − 1) is an iteration's
	// decoding time with running requests.
	TokenUS            float64 `json:"token_us"`
	TokenPerSequenceUS float64 `json:"token_per_sequence_us"`
	// Jitter scales every iteration by a random factor in [1−j, 1+j].
	Jitter float64 `json:"jitter"`
	// MaxSequences caps the requests an instance runs at once; more wait in
	// the queue. 0 means DefaultLLMMaxSequences.
	MaxSequences int `json:"max_sequences"`
	// OutputTokens is how many tokens a request generates before it stops
	// by itself, at most the request's max_tokens.
	OutputTokens LengthSpec `json:"output_tokens"`
	// EmptyFinal makes the model send its final flag apart, after the last
	// token, as Python-backend and BLS models do: Triton then sends an
	// empty final response only to requests that ask for it
	// (triton_enable_empty_final_response), and nothing to the others.
	// Without it the last token's response carries the flag, as
	// TensorRT-LLM's and vLLM's backends do.
	EmptyFinal bool `json:"empty_final"`
}

// LengthSpec is a distribution of lengths: normal with Mean and StdDev
// (fixed at Mean when StdDev is 0), rounded and clamped into [Min, Max];
// Min is at least 1, and a Max of 0 means no maximum.
type LengthSpec struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	Min    int     `json:"min"`
	Max    int     `json:"max"`
}

// MaxLLMMinTokens caps the request parameter min_tokens, a model's
// longest context: a request cannot make the model generate forever.
const MaxLLMMinTokens = 1 << 16

// DefaultLLMMaxSequences is an LLM instance's in-flight batch when the
// spec leaves it 0.
const DefaultLLMMaxSequences = 64

// The inputs an LLM model reads, by name, as TensorRT-LLM's and vLLM's
// Triton backends call them.
const (
	llmTextInput = "text_input"
	llmMaxTokens = "max_tokens"
	llmStream    = "stream"
	// llmMinTokens is the request parameter that keeps a request
	// generating until it has that many tokens (vLLM's and TensorRT-LLM's
	// min_tokens, genai-perf's way to fix the output length).
	llmMinTokens = "min_tokens"
)

// check validates the spec for model m.
func (l *LLMSpec) check(m ModelSpec) error {
	switch {
	case !m.Decoupled:
		return fmt.Errorf("llm: needs \"decoupled\": true (an LLM streams its tokens as responses)")
	case m.MaxBatchSize != 0:
		return fmt.Errorf("llm: needs max_batch_size 0 (a request is one sequence; the model batches in flight)")
	case m.DynamicBatching != nil || m.SequenceBatching != nil:
		return fmt.Errorf("llm: has its own in-flight batching; remove dynamic_batching and sequence_batching")
	case l.PrefillUS < 0 || l.PrefillPerTokenUS < 0 || l.TokenUS < 0 || l.TokenPerSequenceUS < 0:
		return fmt.Errorf("llm: durations must not be negative")
	case l.Jitter < 0 || l.Jitter >= 1:
		return fmt.Errorf("llm.jitter: %g must be in [0, 1)", l.Jitter)
	case l.MaxSequences < 0:
		return fmt.Errorf("llm.max_sequences: %d is negative", l.MaxSequences)
	case l.OutputTokens.Mean < 0 || l.OutputTokens.StdDev < 0 || l.OutputTokens.Min < 0 || l.OutputTokens.Max < 0:
		return fmt.Errorf("llm.output_tokens: values must not be negative")
	case l.OutputTokens.Max > 0 && l.OutputTokens.Max < l.OutputTokens.Min:
		return fmt.Errorf("llm.output_tokens: max %d is below min %d", l.OutputTokens.Max, l.OutputTokens.Min)
	}
	text := -1
	for i, in := range m.Inputs {
		dt, _ := kserve.ParseDataType(in.DataType)
		switch in.Name {
		case llmTextInput:
			text = i
			if dt != pb.DataType_TYPE_STRING {
				return fmt.Errorf("llm: input %q must be BYTES (TYPE_STRING)", llmTextInput)
			}
		case llmMaxTokens:
			switch dt {
			case pb.DataType_TYPE_INT8, pb.DataType_TYPE_INT16, pb.DataType_TYPE_INT32, pb.DataType_TYPE_INT64,
				pb.DataType_TYPE_UINT8, pb.DataType_TYPE_UINT16, pb.DataType_TYPE_UINT32, pb.DataType_TYPE_UINT64:
			default:
				return fmt.Errorf("llm: input %q must be an integer type", llmMaxTokens)
			}
		case llmStream:
			if dt != pb.DataType_TYPE_BOOL {
				return fmt.Errorf("llm: input %q must be BOOL", llmStream)
			}
		}
	}
	if text < 0 {
		return fmt.Errorf("llm: needs a BYTES input %q, the prompt", llmTextInput)
	}
	for _, out := range m.Outputs {
		if dt, _ := kserve.ParseDataType(out.DataType); dt == pb.DataType_TYPE_STRING {
			return nil
		}
	}
	return fmt.Errorf("llm: needs a BYTES output for the generated text")
}

// llmJob is what the model makes of one request when it admits it.
type llmJob struct {
	prompt     int  // prompt tokens (words of text_input)
	maxTokens  int  // 0: not given
	tokens     int  // tokens it will generate
	stream     bool // one response per token
	emptyFinal bool // the request asked for the empty final response
	output     int  // the model output that carries the text
}

// job reads a request's prompt, max_tokens and stream flag, and draws how
// many tokens it generates.
func (m *model) llmJob(r *request, rng *rand.Rand) llmJob {
	l := m.spec.LLM
	j := llmJob{stream: true, output: -1}
	for i, in := range m.inputs {
		data := r.data[i]
		switch in.name {
		case llmTextInput:
			j.prompt = r.promptTokens
		case llmMaxTokens:
			if in.size > 0 && len(data) >= in.size {
				j.maxTokens = int(min(readInt(data[:in.size], in.dtype), math.MaxInt32))
			}
		case llmStream:
			if len(data) > 0 {
				j.stream = data[0] != 0
			}
		}
	}
	if _, ok := m.inputIdx[llmMaxTokens]; !ok {
		if p, ok := r.req.GetParameters()[llmMaxTokens].GetParameterChoice().(*pb.InferParameter_Int64Param); ok {
			j.maxTokens = int(min(p.Int64Param, math.MaxInt32))
		}
	}
	if p, ok := r.req.GetParameters()[emptyFinalResponse].GetParameterChoice().(*pb.InferParameter_BoolParam); ok {
		j.emptyFinal = p.BoolParam
	}
	for _, o := range r.outputs {
		if m.outputs[o].dtype == pb.DataType_TYPE_STRING {
			j.output = o
			break
		}
	}
	j.tokens = l.OutputTokens.draw(rng)
	if p, ok := r.req.GetParameters()[llmMinTokens].GetParameterChoice().(*pb.InferParameter_Int64Param); ok {
		j.tokens = max(j.tokens, int(min(p.Int64Param, MaxLLMMinTokens)))
	}
	if j.maxTokens > 0 {
		j.tokens = min(j.tokens, j.maxTokens)
	}
	return j
}

// draw draws one length.
func (s LengthSpec) draw(rng *rand.Rand) int {
	v := s.Mean
	if s.StdDev > 0 {
		v += s.StdDev * rng.NormFloat64()
	}
	n := max(int(math.Round(v)), s.Min, 1)
	if s.Max > 0 {
		n = min(n, s.Max)
	}
	return n
}

// readInt reads one little-endian integer of an integer datatype.
func readInt(b []byte, dt pb.DataType) int64 {
	le := binary.LittleEndian
	switch dt {
	case pb.DataType_TYPE_INT8:
		return int64(int8(b[0]))
	case pb.DataType_TYPE_UINT8:
		return int64(b[0])
	case pb.DataType_TYPE_INT16:
		return int64(int16(le.Uint16(b)))
	case pb.DataType_TYPE_UINT16:
		return int64(le.Uint16(b))
	case pb.DataType_TYPE_INT32:
		return int64(int32(le.Uint32(b)))
	case pb.DataType_TYPE_UINT32:
		return int64(le.Uint32(b))
	case pb.DataType_TYPE_UINT64:
		return int64(min(le.Uint64(b), math.MaxInt64))
	}
	return int64(le.Uint64(b))
}

// countTokens counts the tokens of a text with the embedded tokenizer the
// client counts with too (or its words, should the tokenizer not load).
func countTokens(b []byte) int {
	tk, err := tokenizer.Load()
	if err != nil {
		return countWords(b)
	}
	return tk.Count(string(b))
}

// countWords counts the words of a text, the usual approximation of its
// tokens.
func countWords(b []byte) int {
	n, in := 0, false
	for _, c := range b {
		space := c == ' ' || c == '\n' || c == '\t' || c == '\r'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// prefill is the prefill time of a prompt of n tokens.
func (l *LLMSpec) prefill(n int) time.Duration {
	return usDuration(l.PrefillUS + l.PrefillPerTokenUS*float64(n))
}

// decode is an iteration's decoding time with n requests running.
func (l *LLMSpec) decode(n int) time.Duration {
	return usDuration(l.TokenUS + l.TokenPerSequenceUS*float64(max(n-1, 0)))
}

// jitter scales d by a random factor in [1−Jitter, 1+Jitter].
func (l *LLMSpec) jitter(d time.Duration, rng *rand.Rand) time.Duration {
	if l.Jitter <= 0 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + l.Jitter*(2*rng.Float64()-1)))
}

func usDuration(us float64) time.Duration { return time.Duration(us * float64(time.Microsecond)) }

// tokenWords are the words an LLM model generates, one per token.
var tokenWords = [...]string{"the", "model", "says", "a", "token", "at", "a", "time", "and", "then", "some", "more"}
