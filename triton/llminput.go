package triton

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/internal/tokenizer"
	"github.com/tritontop/tritontop/triton/pb"
)

// The inputs of a large language model as Triton's TensorRT-LLM and vLLM
// backends name them: a model with a BYTES LLMTextInput is taken for an
// LLM, and its LLMMaxTokens and LLMStream inputs, where it has them, are
// filled from InputOptions rather than with random data.
const (
	LLMTextInput = "text_input"
	LLMMaxTokens = "max_tokens"
	LLMStream    = "stream"
	// LLMMinTokens is the request parameter that asks a model for at
	// least that many tokens (vLLM's and TensorRT-LLM's min_tokens).
	LLMMinTokens = "min_tokens"
)

// Defaults of an LLM's generated inputs, genai-perf's: its synthetic
// prompts average 550 tokens, and it asks TensorRT-LLM for 256 output
// tokens.
const (
	DefaultPromptTokens = 550
	DefaultMaxTokens    = 256
)

// DefaultPrompts is how many different LLM requests are built when a
// length is drawn from a distribution, genai-perf's default number of
// dataset entries.
const DefaultPrompts = 100

// llmInputs fills the inputs of a model that looks like an LLM; nil for
// any other model.
type llmInputs struct {
	opts InputOptions
	cfg  *pb.ModelConfig
	// rng draws the prompts' words: each request gets its own prompt.
	rng *rand.Rand
	// out is the output length drawn for the request being built, 0
	// before it is drawn.
	out int64
}

// prompts is how many requests to build.
func (l *llmInputs) prompts() int {
	switch {
	case l.opts.Prompts > 0:
		return l.opts.Prompts
	case l.opts.PromptTokensStdDev > 0 || l.opts.OutputTokens > 0 && l.opts.OutputTokensStdDev > 0:
		return DefaultPrompts
	}
	return 1
}

// draw draws a length from a normal distribution, at least 1.
func (l *llmInputs) draw(mean, stddev float64) int64 {
	v := mean
	if stddev > 0 {
		v += stddev * l.rng.NormFloat64()
	}
	return max(int64(math.Round(v)), 1)
}

// outputTokens is the request's output length, drawn once per request.
func (l *llmInputs) outputTokens() int64 {
	if l.out == 0 {
		l.out = l.draw(l.opts.OutputTokens, l.opts.OutputTokensStdDev)
	}
	return l.out
}

// finish ends a request: with a fixed output length, its max_tokens and
// min_tokens parameters are the length drawn for it.
func (l *llmInputs) finish(req *InferRequest) {
	if l == nil {
		return
	}
	if l.opts.OutputTokens > 0 {
		n := l.outputTokens()
		params := make(map[string]any, len(req.Parameters)+2)
		for k, v := range req.Parameters {
			params[k] = v
		}
		params[LLMMaxTokens], params[LLMMinTokens] = n, n
		req.Parameters = params
	}
	l.out = 0
}

// GeneratesText reports whether req is an LLM's request, one with a BYTES
// LLMTextInput (as BuildRequests takes a model with one for an LLM): its
// model generates text, so each response it streams is a token where the
// server sends no count of its own. A run file knows it from its header:
// the model's metadata has that input.
func (req *InferRequest) GeneratesText() bool {
	for _, in := range req.Inputs {
		if in.Name == LLMTextInput && in.Datatype == "BYTES" {
			return true
		}
	}
	return false
}

// newLLMInputs returns the LLM input filler for a model with a BYTES
// text_input, nil otherwise.
func newLLMInputs(md *pb.ModelMetadataResponse, cfg *pb.ModelConfig, opts InputOptions) *llmInputs {
	for _, in := range md.GetInputs() {
		if in.GetName() == LLMTextInput && in.GetDatatype() == "BYTES" {
			return &llmInputs{opts: opts, cfg: cfg, rng: rand.New(rand.NewPCG(opts.Seed, 0x6c6c6d))}
		}
	}
	return nil
}

// fills reports whether the LLM filler has a value for the input.
func (l *llmInputs) fills(name string) bool {
	return l != nil && (name == LLMTextInput || name == LLMMaxTokens || name == LLMStream)
}

// skips reports whether a generated request leaves the input out: an LLM's
// optional inputs (stop words, sampling settings, ...) other than the ones
// it fills, which a real server would otherwise get random values for.
func (l *llmInputs) skips(name string) bool {
	return l != nil && !l.fills(name) && optionalInput(l.cfg, name)
}

// values returns the input's values for one batch item, and its shape:
// the model's dims with any variable dimension taken as 1.
func (l *llmInputs) values(name string, dims []int64) (InputValues, []int64, error) {
	shape := make([]int64, len(dims))
	n := int64(1)
	for i, d := range dims {
		shape[i] = max(d, 1)
		n *= shape[i]
	}
	if n != 1 {
		return InputValues{}, nil, fmt.Errorf("LLM input '%s' has dims %v: tritontop fills it with one value; give it in --input-data instead", textsafe.Bound(name), dims)
	}
	var v any
	switch name {
	case LLMTextInput:
		mean := float64(l.opts.PromptTokens)
		if mean <= 0 {
			mean = DefaultPromptTokens
		}
		p, err := TokenPrompt(int(l.draw(mean, l.opts.PromptTokensStdDev)), l.rng)
		if err != nil {
			return InputValues{}, nil, err
		}
		v = p
	case LLMStream:
		v = l.opts.Streaming
	case LLMMaxTokens:
		tokens := int64(DefaultMaxTokens)
		if l.opts.OutputTokens > 0 {
			v = json.Number(strconv.FormatInt(l.outputTokens(), 10))
			break
		}
		if mt, ok := l.opts.Parameters[LLMMaxTokens]; ok {
			t, ok := mt.(int64)
			if !ok {
				return InputValues{}, nil, fmt.Errorf("request parameter max_tokens is %v, not an integer: use --request-parameter max_tokens:N:int", mt)
			}
			tokens = t
		}
		v = json.Number(strconv.FormatInt(tokens, 10))
	}
	return InputValues{Elements: []any{v}}, shape, nil
}

// optionalInput reports whether the model config marks the input optional.
func optionalInput(cfg *pb.ModelConfig, name string) bool {
	for _, in := range cfg.GetInput() {
		if in.GetName() == name {
			return in.GetOptional()
		}
	}
	return false
}

// promptWords are the words generated prompts are made of: common English
// words, each one token for the usual tokenizers.
var promptWords = strings.Fields(`the of and to in is you that it he was for on are as with his they at be
this have from or one had by word but not what all were we when your can said there use an each which
she do how their if will up other about out many then them these so some her would make like him into
time has look two more write go see number no way could people my than first water been call who oil
its now find long down day did get come made may part`)

// TokenPrompt returns a text of exactly n tokens of the embedded tokenizer
// (tokenizer.Name), made of common English words drawn with rng.
func TokenPrompt(n int, rng *rand.Rand) (string, error) {
	tk, err := tokenizer.Load()
	if err != nil {
		return "", err
	}
	// Each word is about a token: start there, then add or drop words
	// until the count is right.
	words := strings.Fields(Prompt(n, rng))
	for {
		p := strings.Join(words, " ")
		c := tk.Count(p)
		switch {
		case c == n:
			return p, nil
		case c > n && len(words) > 1:
			words = words[:len(words)-1]
		case c > n:
			return p, nil // one word longer than n tokens: the nearest
		default:
			words = append(words, promptWords[rng.IntN(len(promptWords))])
		}
	}
}

// Prompt returns a text of n words, the usual approximation of an LLM
// prompt of n tokens, drawn from common English words.
func Prompt(n int, rng *rand.Rand) string {
	var b strings.Builder
	b.Grow(6 * n)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(promptWords[rng.IntN(len(promptWords))])
	}
	return b.String()
}

// ParseRequestParameter parses perf_analyzer's --request-parameter
// NAME:VALUE:TYPE, TYPE being string, int or bool (any case), into a name
// and a value for InferRequest.Parameters (a string, an int64 or a bool).
// Names starting with "triton_" are Triton's own and refused.
func ParseRequestParameter(s string) (string, any, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("bad --request-parameter %s: use NAME:VALUE:TYPE, e.g. max_tokens:256:int", textsafe.Quote(s))
	}
	name, value, typ := parts[0], parts[1], strings.ToLower(parts[2])
	if name == "" {
		return "", nil, fmt.Errorf("bad --request-parameter %s: the name is empty", textsafe.Quote(s))
	}
	if strings.HasPrefix(name, "triton_") {
		return "", nil, fmt.Errorf("bad --request-parameter %s: names starting with triton_ are reserved for Triton", textsafe.Quote(s))
	}
	switch typ {
	case "string":
		return name, value, nil
	case "int":
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return "", nil, fmt.Errorf("bad --request-parameter %s: %s is not an integer", textsafe.Quote(s), textsafe.Quote(value))
		}
		return name, v, nil
	case "bool":
		switch value {
		case "true":
			return name, true, nil
		case "false":
			return name, false, nil
		}
		return "", nil, fmt.Errorf("bad --request-parameter %s: a bool is true or false", textsafe.Quote(s))
	}
	return "", nil, fmt.Errorf("bad --request-parameter %s: type %s is not string, int or bool", textsafe.Quote(s), textsafe.Quote(parts[2]))
}
