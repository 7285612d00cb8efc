package session

import (
	"fmt"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/internal/tokenizer"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// endpointFlags choose the HTTP API the requests go to: KServe's infer, or
// an LLM's text through Triton's generate extension or its
// OpenAI-compatible frontend.
type EndpointConfig struct {
	Name string
	URL  string
	kind triton.Endpoint // name, parsed by check
	// stream is whether the endpoint's answers stream (generate_stream,
	// or chat and completions with --streaming); every text endpoint's
	// requests go over the driver's streams, whose responses are timed.
	stream bool
	// genai-perf's lengths: of the prompts, in tokens, and of the outputs
	// (sent as max_tokens and min_tokens); numPrompts different requests.
	InputTokensMean, OutputTokensMean     int
	InputTokensStdDev, OutputTokensStdDev float64
	NumPrompts                            int
}

// maxPromptTokens bounds the tokens of all the prompts built for a run
// (about 10 MB of text, and seconds of tokenizing at start).
const maxPromptTokens = 2_000_000

// applyTokens puts the length flags into the options the requests are
// built with, for a model with metadata md (one of several when several:
// then a model without text takes none). Errors are one line each.
func (f *EndpointConfig) applyTokens(opts *triton.InputOptions, md *pb.ModelMetadataResponse, set map[string]bool, several bool) error {
	for _, c := range []struct {
		flag string
		bad  bool
	}{
		{"--synthetic-input-tokens-mean", f.InputTokensMean < 0},
		{"--synthetic-input-tokens-stddev", f.InputTokensStdDev < 0},
		{"--output-tokens-mean", f.OutputTokensMean < 0},
		{"--output-tokens-stddev", f.OutputTokensStdDev < 0},
		{"--num-prompts", f.NumPrompts < 0},
	} {
		if c.bad {
			return fmt.Errorf("%s must not be negative", c.flag)
		}
	}
	used := set["synthetic-input-tokens-mean"] || set["synthetic-input-tokens-stddev"] || set["output-tokens-mean"] ||
		set["output-tokens-stddev"] || set["num-prompts"]
	if !used {
		return nil
	}
	if !hasTextInput(md) {
		if several {
			return nil
		}
		return fmt.Errorf("the token length flags fill an LLM's BYTES input %q, which model %s does not have", triton.LLMTextInput, textsafe.Quote(md.GetName()))
	}
	if f.InputTokensMean > 0 {
		if set["prompt-tokens"] {
			return fmt.Errorf("--synthetic-input-tokens-mean and --prompt-tokens both set the prompt length: give one")
		}
		opts.PromptTokens = f.InputTokensMean
	}
	prompts := f.NumPrompts
	if prompts == 0 {
		prompts = 1
		if f.InputTokensStdDev > 0 || f.OutputTokensStdDev > 0 {
			prompts = triton.DefaultPrompts
		}
	}
	mean := opts.PromptTokens
	if mean <= 0 {
		mean = triton.DefaultPromptTokens
	}
	if tokens := float64(prompts) * (float64(mean) + 3*f.InputTokensStdDev); tokens > maxPromptTokens {
		return fmt.Errorf("%d prompts of about %d tokens make %.0f tokens to build: at most %d; use fewer (--num-prompts) or shorter ones",
			prompts, mean, tokens, maxPromptTokens)
	}
	if f.OutputTokensStdDev > 0 && f.OutputTokensMean == 0 {
		return fmt.Errorf("--output-tokens-stddev needs --output-tokens-mean")
	}
	opts.PromptTokensStdDev = f.InputTokensStdDev
	opts.OutputTokens, opts.OutputTokensStdDev = float64(f.OutputTokensMean), f.OutputTokensStdDev
	opts.Prompts = f.NumPrompts
	return nil
}

// text reports whether the requests go to a text endpoint.
func (f *EndpointConfig) text() bool { return f.kind.Text() }

// check validates the flags against the rest of the run's, and makes
// generate_stream a streaming run. Errors are one line, for a usage error.
func (f *EndpointConfig) check(lf *Config) error {
	kind, err := triton.ParseEndpoint(f.Name)
	if err != nil {
		return fmt.Errorf("--endpoint: %w", err)
	}
	f.kind = kind
	if !kind.Text() {
		if f.URL != "" {
			return fmt.Errorf("--endpoint-url is where chat or completions requests go: add --endpoint chat or completions")
		}
		return nil
	}
	if lf.Protocol != "http" {
		return fmt.Errorf("--endpoint %s is Triton's HTTP API: add -i http", kind)
	}
	if kind == triton.EndpointGenerate && lf.Streaming {
		return fmt.Errorf("--endpoint generate answers in one body: use --endpoint generate_stream to stream")
	}
	f.stream = lf.Streaming || kind == triton.EndpointGenerateStream
	lf.Streaming = true
	if f.URL != "" && kind != triton.EndpointChat && kind != triton.EndpointCompletions {
		return fmt.Errorf("--endpoint-url is for chat and completions; %s goes to -u", kind)
	}
	return nil
}

// options puts the endpoint into the client's options.
func (f *EndpointConfig) options(o *triton.Options) {
	o.Endpoint, o.EndpointURL, o.Stream = f.kind, f.URL, f.stream
}

// protocolName is how the header names a text endpoint's transport and
// the tokenizer its prompts are measured with, e.g. "HTTP chat stream,
// tokenizer tiktoken cl100k_base".
func (f *EndpointConfig) protocolName() string {
	name := "HTTP " + string(f.kind)
	if f.stream && f.kind != triton.EndpointGenerateStream {
		name += " stream"
	}
	return name + ", tokenizer " + tokenizer.Name
}
