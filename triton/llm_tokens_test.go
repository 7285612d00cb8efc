package triton

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tritontop/tritontop/internal/tokenizer"
	"github.com/tritontop/tritontop/triton/kserve"
)

func TestTokenPromptHasExactlyNTokens(t *testing.T) {
	tk, err := tokenizer.Load()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 100, 550, 2000} {
		p, err := TokenPrompt(n, rng)
		if err != nil || tk.Count(p) != n {
			t.Errorf("TokenPrompt(%d): %d tokens, %v", n, tk.Count(p), err)
		}
	}
}

// TestLLMLengthDistributions builds an LLM's requests with drawn prompt
// and output lengths, genai-perf's way, and checks the lengths the
// requests carry: DefaultPrompts requests, prompts of the asked mean and
// spread in real tokens, and max_tokens equal to min_tokens per request,
// in the tensor and in the parameters.
func TestLLMLengthDistributions(t *testing.T) {
	md, cfg := llmModel(true)
	reqs, err := BuildRequests(md, cfg, InputOptions{PromptTokens: 200, PromptTokensStdDev: 20, OutputTokens: 64, OutputTokensStdDev: 8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != DefaultPrompts {
		t.Fatalf("%d requests, want %d", len(reqs), DefaultPrompts)
	}
	tk, _ := tokenizer.Load()
	var in, out []float64
	for _, r := range reqs {
		var maxTensor int64 = -1
		for _, x := range r.Inputs {
			switch x.Name {
			case LLMTextInput:
				elems, err := kserve.DecodeBytes(x.Data, 1)
				if err != nil {
					t.Fatal(err)
				}
				in = append(in, float64(tk.Count(string(elems[0]))))
			case LLMMaxTokens:
				maxTensor, _ = readIntTensor(x)
			}
		}
		mx, mn := r.Parameters[LLMMaxTokens].(int64), r.Parameters[LLMMinTokens].(int64)
		if mx != mn || mx != maxTensor || mx < 1 {
			t.Fatalf("request: max_tokens tensor %d, parameters max %d min %d", maxTensor, mx, mn)
		}
		out = append(out, float64(mx))
	}
	for _, c := range []struct {
		name       string
		v          []float64
		mean, sd   float64
		meanSlack  float64
		sdLo, sdHi float64
	}{
		{"prompt tokens", in, 200, 20, 6, 14, 27},
		{"output tokens", out, 64, 8, 2.5, 5.5, 11},
	} {
		m, sd := meanSD(c.v)
		if math.Abs(m-c.mean) > c.meanSlack || sd < c.sdLo || sd > c.sdHi {
			t.Errorf("%s: mean %.1f sd %.1f; want about %g and %g", c.name, m, sd, c.mean, c.sd)
		}
	}
	// Without spreads: one request, of exactly the lengths asked.
	reqs, err = BuildRequests(md, cfg, InputOptions{PromptTokens: 33, OutputTokens: 9})
	if err != nil || len(reqs) != 1 || reqs[0].Parameters[LLMMinTokens] != int64(9) {
		t.Fatalf("fixed lengths: %d requests, %v, %v", len(reqs), reqs[0].Parameters, err)
	}
}

func meanSD(v []float64) (float64, float64) {
	var s, ss float64
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}
