package tokenizer

import (
	"strings"
	"testing"
)

// TestCount checks counts against cl100k_base's known encodings.
func TestCount(t *testing.T) {
	tk, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
		{"the model says a token at a time", 8},
		{"<|endoftext|>", 7},
		{"1234567", 3},
	} {
		if got := tk.Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	tk, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 60)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tk.Count(text)
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := build(); err != nil {
			b.Fatal(err)
		}
	}
}
