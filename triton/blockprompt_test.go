package triton

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/tokenizer"
)

// TestBlockPromptsShareTheirBlocks builds Mooncake prompts from hash ids:
// each has exactly its tokens counted whole by the tokenizer, requests
// sharing their first hash ids share those blocks word for word, and
// different hash ids give different blocks.
func TestBlockPromptsShareTheirBlocks(t *testing.T) {
	tk, err := tokenizer.Load()
	if err != nil {
		t.Fatal(err)
	}
	b := &BlockPrompts{BlockTokens: 64}
	rng := rand.New(rand.NewPCG(1, 2))
	build := func(n int, ids ...int64) string {
		t.Helper()
		p, err := b.Prompt(n, ids, rng)
		if err != nil {
			t.Fatal(err)
		}
		if c := tk.Count(p); c != n {
			t.Fatalf("Prompt(%d, %v) counts %d tokens", n, ids, c)
		}
		return p
	}
	a := build(150, 46, 47, 48)
	c := build(140, 46, 47, 49)
	d := build(64, 50)
	e := build(100, 46, 47, 48, 51, 52) // shorter than its blocks: 46, 47 (cut)
	build(1, 7)
	build(37) // no hash ids: drawn
	words := func(p string) []string { return strings.Fields(p) }
	prefix := func(x, y []string) int {
		n := 0
		for n < len(x) && n < len(y) && x[n] == y[n] {
			n++
		}
		return n
	}
	// a's first two blocks are 128 tokens; c shares them, then differs.
	shared := prefix(words(a), words(c))
	if got := tk.Count(strings.Join(words(a)[:shared], " ")); got < 128 {
		t.Errorf("a and c share %d tokens of prefix, want their two blocks (128)", got)
	}
	if prefix(words(a), words(d)) > 8 {
		t.Errorf("blocks of different hash ids start alike: %q / %q", a[:40], d[:40])
	}
	if n := prefix(words(a), words(e)); n < len(words(e))-1 {
		t.Errorf("e (block 46, then 47 cut) shares %d of its %d words with a", n, len(words(e)))
	}
	if _, err := b.Prompt(0, []int64{1}, rng); err == nil {
		t.Error("a prompt of 0 tokens was built")
	}
}
