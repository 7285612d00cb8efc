package session

import (
	"errors"
	"fmt"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// mooncakeFlags are the flags of a Mooncake trace's replay.
type MooncakeConfig struct {
	// blockTokens is the tokens of a hash id's prompt block.
	BlockTokens int
}

// checkMooncakeFlags refuses a block size that cannot be.
func checkMooncakeFlags(f *Config) error {
	switch {
	case f.Mooncake.BlockTokens <= 0:
		return UsageError{Err: fmt.Errorf("--isl-block-size %d must be above 0 (Mooncake's traces use 512)", f.Mooncake.BlockTokens)}
	case f.Given["isl-block-size"] && (f.Shape.trace == nil || f.Shape.trace.Format != trace.Mooncake):
		return UsageError{Err: errors.New("--isl-block-size sets the prompt blocks of a Mooncake trace: add --trace FILE.jsonl")}
	}
	return nil
}

// mooncakeRequest builds a Mooncake trace's request for model mt: a prompt
// of exactly input_length tokens of the embedded tokenizer, made of the
// blocks of its hash ids (shared with every request naming them), or its
// own text_input; output_length asked for as max_tokens and min_tokens
// (the model's max_tokens input too, where it has one), as
// --output-tokens-mean asks; the --request-parameters along. prompts keeps
// the blocks built so far.
func mooncakeRequest(f *Config, mt *target, r *trace.Request, prompts **triton.BlockPrompts) (*triton.InferRequest, error) {
	opts := triton.InputOptions{Data: f.InputData, BatchSize: f.BatchSize, Prompts: 1}
	if err := f.LLM.apply(&opts, mt.metadata, f.Streaming); err != nil {
		return nil, err
	}
	switch {
	case r.TextInput != "" || len(r.HashIDs) > 0:
		// The prompt is replaced below: build the least one.
		opts.PromptTokens = 1
	case r.InputLength > 0:
		opts.PromptTokens = r.InputLength
	}
	if r.OutputLength > 0 {
		opts.OutputTokens = float64(r.OutputLength)
	}
	reqs, err := triton.BuildRequests(mt.metadata, mt.config, opts)
	if err != nil {
		return nil, err
	}
	req := reqs[0]
	prompt := r.TextInput
	if prompt == "" && len(r.HashIDs) > 0 {
		if *prompts == nil {
			*prompts = &triton.BlockPrompts{BlockTokens: f.Mooncake.BlockTokens}
		}
		if prompt, err = (*prompts).Prompt(r.InputLength, r.HashIDs, nil); err != nil {
			return nil, err
		}
	}
	if prompt == "" {
		return req, nil
	}
	for i, in := range req.Inputs {
		if in.Name != triton.LLMTextInput || in.Datatype != "BYTES" {
			continue
		}
		n := max(kserve.ElementCount(in.Shape), 1)
		elems := make([][]byte, n)
		for j := range elems {
			elems[j] = []byte(prompt)
		}
		req.Inputs[i].Data = kserve.EncodeBytes(elems)
		return req, nil
	}
	return nil, fmt.Errorf("model %s has no BYTES input %q to send the trace's prompt in", textsafe.Quote(f.Model), triton.LLMTextInput)
}
