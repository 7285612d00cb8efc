package sim

import "fmt"

// MaxSlowdown bounds Repository.Slowed's factor: a simulator a hundred
// times slower is a stalled one, which Faults already model.
const MaxSlowdown = 100

// Slowed returns the repository with every model's compute times (the
// latency model's fixed, per-item, input and output times, an LLM's
// prefill and per-token times) multiplied by factor: the same server made
// that much slower, as a regression in a model or a slower GPU would. Queue
// times follow from the load, as they do on a real server. The receiver is
// left as it was.
func (r Repository) Slowed(factor float64) (Repository, error) {
	if !(factor > 0) || factor > MaxSlowdown {
		return r, fmt.Errorf("slowdown %g is out of range: use a factor above 0 and at most %d (1.3 is 30%% slower)", factor, MaxSlowdown)
	}
	out := r
	out.Models = make([]ModelSpec, len(r.Models))
	for i, m := range r.Models {
		l := &m.Latency
		l.FixedUS *= factor
		l.PerItemUS *= factor
		l.ComputeInputUS *= factor
		l.ComputeOutputUS *= factor
		if m.LLM != nil {
			llm := *m.LLM
			llm.PrefillUS *= factor
			llm.PrefillPerTokenUS *= factor
			llm.TokenUS *= factor
			llm.TokenPerSequenceUS *= factor
			m.LLM = &llm
		}
		out.Models[i] = m
	}
	return out, nil
}
