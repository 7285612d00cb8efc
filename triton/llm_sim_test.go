package triton_test

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// TestStreamDecoupledFinalFlags streams requests built by BuildRequests to
// the simulator's LLM, as the driver does, and checks what Recv says of
// each response: every token but the last not final, and the end of each
// request told by a final response, with the empty final response where
// the model sends its final flag apart.
func TestStreamDecoupledFinalFlags(t *testing.T) {
	for _, emptyFinal := range []bool{false, true} {
		m := sim.DemoLLM()
		m.LLM = &sim.LLMSpec{TokenUS: 1000, MaxSequences: 4, OutputTokens: sim.LengthSpec{Mean: 6}, EmptyFinal: emptyFinal}
		s, err := sim.Start(context.Background(), sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
			MetricsAddr: "127.0.0.1:0", Repository: sim.Repository{Models: []sim.ModelSpec{m}}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := triton.Dial(ctx, s.GRPCAddr(), triton.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		md, _ := c.ModelMetadata(ctx, "llm", "")
		cfg, _ := c.ModelConfig(ctx, "llm", "")
		reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{PromptTokens: 10, Streaming: true,
			Parameters: map[string]any{"max_tokens": int64(4)}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Prepare(reqs[0])
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.OpenStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "b"} {
			if err := st.Send(p, id); err != nil {
				t.Fatal(err)
			}
		}
		tokens, finals := map[string]int{}, map[string]int{}
		for finals["a"]+finals["b"] < 2 {
			r, err := st.Recv()
			if err != nil || r.Err != nil {
				t.Fatalf("empty final %t: Recv = %+v, %v", emptyFinal, r, err)
			}
			if finals[r.ID] > 0 {
				t.Fatalf("empty final %t: a response of %s after its final one", emptyFinal, r.ID)
			}
			if !r.Empty {
				tokens[r.ID]++
			}
			if r.Final {
				finals[r.ID]++
				if r.Empty != emptyFinal {
					t.Errorf("empty final %t: final response Empty = %t", emptyFinal, r.Empty)
				}
			}
		}
		if tokens["a"] != 4 || tokens["b"] != 4 {
			t.Errorf("empty final %t: tokens %v, want 4 each (max_tokens)", emptyFinal, tokens)
		}
		_ = st.CloseSend()
	}
}
