// Package tokenizer counts the tokens of a text with a real BPE tokenizer
// embedded in the binary (OpenAI's cl100k_base, through tiktoken-go and
// the ranks that tiktoken-go-loader embeds), so that nothing is downloaded
// at run time. The client builds prompts of a token length with it and
// counts the output tokens a server did not count; the simulator counts
// its prompts with it, so that both sides' counts compare.
package tokenizer

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Name is the tokenizer's name, as run headers print it.
const Name = "tiktoken cl100k_base"

// cl100k_base's definition: its pre-tokenizing pattern and special tokens,
// as OpenAI's tiktoken publishes them.
const (
	cl100kRanks   = "cl100k_base.tiktoken"
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

var cl100kSpecial = map[string]int{
	"<|endoftext|>":   100257,
	"<|fim_prefix|>":  100258,
	"<|fim_middle|>":  100259,
	"<|fim_suffix|>":  100260,
	"<|endofprompt|>": 100276,
}

// Tokenizer counts tokens. It is safe for concurrent use.
type Tokenizer struct {
	enc *tiktoken.Tiktoken
}

// load builds the tokenizer once per process: parsing its 100,000 ranks
// takes a while and the result never changes, so every caller shares it.
var load = sync.OnceValues(build)

// build parses the embedded ranks into a tokenizer.
func build() (*Tokenizer, error) {
	ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(cl100kRanks)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", Name, err)
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, cl100kSpecial, cl100kPattern)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", Name, err)
	}
	special := make(map[string]any, len(cl100kSpecial))
	for k := range cl100kSpecial {
		special[k] = true
	}
	enc := &tiktoken.Encoding{Name: "cl100k_base", PatStr: cl100kPattern, MergeableRanks: ranks, SpecialTokens: cl100kSpecial}
	return &Tokenizer{enc: tiktoken.NewTiktoken(bpe, enc, special)}, nil
}

// Load returns the tokenizer, built on first use.
func Load() (*Tokenizer, error) { return load() }

// Count returns the number of tokens of text; special tokens' text counts
// as ordinary text.
func (t *Tokenizer) Count(text string) int {
	return len(t.enc.EncodeOrdinary(text))
}
