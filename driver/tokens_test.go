package driver

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// TestDecoupledTokensOnlyForText: a response is a token only for a model
// that generates text, one whose requests carry a BYTES text_input (an
// LLM's); a decoupled model's other responses (repeat_int32's numbers)
// count no token.
func TestDecoupledTokensOnlyForText(t *testing.T) {
	prompt := triton.Tensor{Name: triton.LLMTextInput, Datatype: "BYTES", Shape: []int64{1}, Data: []byte{2, 0, 0, 0, 'h', 'i'}}
	for _, c := range []struct {
		name string
		req  *triton.InferRequest
		want int32
	}{
		{"numbers", &triton.InferRequest{Model: "repeat_int32", Inputs: []triton.Tensor{{Name: "IN", Datatype: "INT32", Shape: []int64{5}, Data: make([]byte, 20)}}}, 0},
		{"text_input of another type", &triton.InferRequest{Model: "m", Inputs: []triton.Tensor{{Name: triton.LLMTextInput, Datatype: "INT32", Shape: []int64{1}, Data: make([]byte, 4)}}}, 0},
		{"an LLM", &triton.InferRequest{Model: "llm", Inputs: []triton.Tensor{prompt}}, 5},
	} {
		d, err := New(Options{Client: &decoupledClient{responses: 5, gap: time.Millisecond}, Requests: []*triton.InferRequest{c.req},
			Streaming: true, Decoupled: true, Load: load.Target{Mode: load.Concurrency, Concurrency: 2}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- d.Run(context.Background()) }()
		ok := 0
		for batch := range d.Results() {
			for _, r := range batch {
				if !r.OK() || r.Cancelled {
					continue
				}
				ok++
				if r.Responses != 5 || r.Timing == nil || r.Timing.Tokens != c.want {
					t.Errorf("%s: %d responses, timing %+v; want %d tokens", c.name, r.Responses, r.Timing, c.want)
				}
			}
			if ok >= 10 {
				d.Stop(5 * time.Second)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
