package triton

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tritontop/tritontop/internal/tokenizer"
)

// DefaultBlockTokens is how many prompt tokens one hash id of a Mooncake
// trace stands for: Mooncake's and AIPerf's block of 512 tokens.
const DefaultBlockTokens = 512

// BlockPrompts builds the prompts of a Mooncake trace: a request of n
// tokens with hash ids [h0, h1, ..., hk] is the blocks of h0 ... hk-1,
// BlockTokens tokens each, then hk's block cut to the tokens left, so that
// requests sharing hash ids share those blocks of their prompts word for
// word (the prefix a server's cache may reuse), as AIPerf builds them. A
// block is made of common English words drawn from a generator seeded by
// its hash id, and counts exactly its tokens of the embedded tokenizer
// where it stands in the prompt: the tokenizer splits text into words,
// each with the space before it, before it merges bytes, so a prompt of
// such blocks counts exactly the tokens of its blocks.
//
// A BlockPrompts is not safe for concurrent use.
type BlockPrompts struct {
	// BlockTokens is the tokens of a hash id's block (0:
	// DefaultBlockTokens).
	BlockTokens int
	// Seed varies the words of every block.
	Seed uint64

	tk     *tokenizer.Tokenizer
	blocks map[blockKey]string
}

type blockKey struct {
	id     int64
	tokens int
	first  bool
}

// Prompt returns a prompt of exactly n tokens made of the blocks of
// hashIDs. Hash ids beyond what n tokens fill are left out (a trace whose
// input_length is shorter than its blocks); with no hash ids the prompt is
// drawn with rng, shared with no other.
func (b *BlockPrompts) Prompt(n int, hashIDs []int64, rng *rand.Rand) (string, error) {
	if n <= 0 {
		return "", fmt.Errorf("a prompt of %d tokens: input_length must be above 0", n)
	}
	if len(hashIDs) == 0 {
		return TokenPrompt(n, rng)
	}
	if b.tk == nil {
		tk, err := tokenizer.Load()
		if err != nil {
			return "", err
		}
		b.tk, b.blocks = tk, map[blockKey]string{}
	}
	size := b.BlockTokens
	if size <= 0 {
		size = DefaultBlockTokens
	}
	used := min(len(hashIDs), (n+size-1)/size)
	var sb strings.Builder
	for i, id := range hashIDs[:used] {
		tokens := size
		if i == used-1 {
			tokens = n - (used-1)*size
		}
		text, err := b.block(blockKey{id: id, tokens: tokens, first: i == 0})
		if err != nil {
			return "", err
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(text)
	}
	return sb.String(), nil
}

// block returns the words of a block, built the first time: its tokens
// counted alone for the prompt's first block, after a space for the
// others.
func (b *BlockPrompts) block(k blockKey) (string, error) {
	if text, ok := b.blocks[k]; ok {
		return text, nil
	}
	prefix := " "
	if k.first {
		prefix = ""
	}
	rng := rand.New(rand.NewPCG(uint64(k.id), b.Seed^0x626c6f636b))
	words := strings.Fields(Prompt(k.tokens, rng))
	for {
		text := strings.Join(words, " ")
		c := b.tk.Count(prefix + text)
		switch {
		case c == k.tokens:
			b.blocks[k] = text
			return text, nil
		case c > k.tokens && len(words) > 1:
			words = words[:len(words)-1]
		case c > k.tokens:
			return "", errors.New("a prompt block cannot be built to its length")
		default:
			words = append(words, promptWords[rng.IntN(len(promptWords))])
		}
	}
}
