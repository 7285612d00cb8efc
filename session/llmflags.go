package session

import (
	"fmt"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// llmFlags are the flags for LLMs and other decoupled models: request
// parameters (perf_analyzer's --request-parameter) and the length of a
// generated prompt.
type LLMConfig struct {
	RequestParameters []string
	PromptTokens      int
}

// apply puts the flags into the options the requests are built with, for
// a model with metadata md; streaming is --streaming, which also sets an
// LLM's stream input. Errors are one line each, for a usage error.
func (f *LLMConfig) apply(opts *triton.InputOptions, md *pb.ModelMetadataResponse, streaming bool) error {
	if f.PromptTokens < 0 {
		return fmt.Errorf("--prompt-tokens %d must not be negative", f.PromptTokens)
	}
	if f.PromptTokens > 0 && !hasTextInput(md) {
		return fmt.Errorf("--prompt-tokens fills an LLM's BYTES input %q, which model %s does not have", triton.LLMTextInput, textsafe.Quote(md.GetName()))
	}
	for _, s := range f.RequestParameters {
		name, value, err := triton.ParseRequestParameter(s)
		if err != nil {
			return err
		}
		if opts.Parameters == nil {
			opts.Parameters = map[string]any{}
		}
		opts.Parameters[name] = value
	}
	opts.PromptTokens = f.PromptTokens
	opts.Streaming = streaming
	return nil
}

// hasTextInput reports whether the model has an LLM's BYTES text_input.
func hasTextInput(md *pb.ModelMetadataResponse) bool {
	for _, in := range md.GetInputs() {
		if in.GetName() == triton.LLMTextInput && in.GetDatatype() == "BYTES" {
			return true
		}
	}
	return false
}

// decoupled reports whether the model is decoupled: its requests end at
// their final response, and their responses are timed. A text endpoint's
// requests are timed so too, streaming or not (an answer in one body is
// one response with all its tokens).
func (t *target) decoupled() bool {
	if f := t.flags; f != nil && f.Endpoint.text() {
		return true
	}
	return t.config.GetModelTransactionPolicy().GetDecoupled()
}
